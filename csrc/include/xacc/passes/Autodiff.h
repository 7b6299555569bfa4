// Reverse-mode automatic differentiation as a GIR-to-GIR transform, shared by
// Camel's built-in `grad` macro, `xacc-opt --passes=grad` and `xacc.ir` (and,
// later, XJIT training).
//
// Note [Gradient graphs]: given a graph F(p0, ..., pn) -> (r0, ..., rm) and a
// choice of parameters to differentiate (`wrt`), buildGradGraph returns a new
// graph with the same parameters (plus one cotangent parameter per
// differentiable result when `seedParams` is set) that returns
//   r0, ..., rm, d0, ..., dk
// where d_j is the vector-Jacobian product sum_i <seed_i, dr_i/dp_{wrt[j]}>.
// Without cotangent parameters every differentiable result is seeded with ones
// (1.0 for a float, `aten.ones_like` for a tensor), so for one scalar result the
// d_j are plain gradients. Differentiable values are floats (`f32`/`f64`) and
// tensors with a floating dtype; ints, bools, strings and tokens carry no
// gradient. A parameter that no differentiable result depends on gets a zero
// gradient (`0.0` or `aten.zeros_like`).
//
// The derivative of each op is a small rule (a table entry) that emits GIR
// nodes: `aten.*` ops for tensors, `arith.*` / `ctrl.select` for floats. A
// contribution to a tensor operand that was broadcast is summed back to the
// operand's shape (sum_to_size semantics; a dynamic dim is assumed not to have
// been broadcast). A `ctrl.if` is differentiated into a `ctrl.if` on the same
// condition whose arms are the arms' own gradient graphs (built recursively,
// with cotangent parameters). Nodes are differentiated only where they lie on a path from
// a `wrt` parameter to a result; an op on such a path without a rule (or a
// graph with regions or calls on the path: inline first) is reported, naming
// the op and its location, and no graph is produced. The new graph is cleaned
// up with canonicalize, CSE and DCE.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "xacc/ir/Graph.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::passes {

struct GradOptions {
  /// Parameter indices to differentiate; empty: every differentiable parameter.
  std::vector<size_t> wrt;
  /// Add one cotangent parameter per differentiable result (after the original
  /// parameters) instead of seeding with ones.
  bool seedParams = false;
  /// Return only the gradients (not the original results first).
  bool gradsOnly = false;
  /// Name of the new graph; empty: `<name>_grad`.
  std::string name;
  /// Where to report a node (defaults to Node::loc()).
  std::function<support::SourceLoc(const ir::Node&)> locOf;
};

/// See Note [Gradient graphs]. Returns null after reporting an error.
std::unique_ptr<ir::Graph> buildGradGraph(const ir::Graph& fwd, const GradOptions& opts,
                                          support::DiagnosticEngine& diag);

/// Note [Training graphs]: the forward and backward graphs XJIT runs for a
/// captured graph F(p0..pn) -> (r0..rm) whose inputs `wrt` require grad. The
/// joint graph (buildGradGraph with cotangent parameters) is split at the
/// cotangents: a node is *backward* when it depends on a cotangent parameter.
///   forward(p0..pn) -> (r0..rm, s0..sk)
///   backward(p_saved..., c..., s0..sk) -> (d_wrt0, ...)
/// The residuals s are the forward nodes' values that backward nodes (or the
/// gradients themselves) read; parameters are not residuals (the backward takes
/// the forward parameters it reads, `savedParams`, as its first parameters).
/// Every residual is saved, nothing is recomputed: the forward already computed
/// it, and the captured graphs' residuals are few and mostly activations the
/// eager autograd would save too.
struct TrainingGraphs {
  std::unique_ptr<ir::Graph> forward;
  std::unique_ptr<ir::Graph> backward;
  size_t numResults = 0;               ///< m + 1: forward results before the residuals
  size_t numResiduals = 0;             ///< k + 1
  std::vector<size_t> savedParams;     ///< forward parameters the backward takes, in order
  std::vector<bool> cotangent;         ///< per forward result: the backward takes a cotangent for it
  /// Per forward result: whether eager autograd would record history for it
  /// (it depends on a `wrt` parameter other than through detach or `*_like`
  /// factories); the others are returned as not requiring grad.
  std::vector<bool> requiresGrad;
};

/// Per result of `fwd`: whether it depends on a `wrt` parameter other than
/// through detach or the `*_like`/`new_*` factories, i.e. whether eager autograd
/// would record history for it (TrainingGraphs::requiresGrad keeps the tensor
/// ones). A graph with no such result needs no backward: XJIT compiles its
/// forward alone (Note [Training graphs]; training.py).
std::vector<bool> dependsOnWrt(const ir::Graph& fwd, const std::vector<size_t>& wrt);

/// Sets output_mask[i] to false on every convolution/norm backward op of `g`
/// (top level) whose result i has no uses, so ATen skips that gradient (Note
/// [Output masks of backward ops]). Gradient and training graphs get it after
/// their dead code is dropped.
void narrowOutputMasks(ir::Graph& g);

/// See Note [Training graphs]. False after reporting an error (an op without a
/// rule, effects, ...).
bool buildTrainingGraphs(const ir::Graph& fwd, const std::vector<size_t>& wrt, TrainingGraphs& out,
                         support::DiagnosticEngine& diag,
                         const std::function<support::SourceLoc(const ir::Node&)>& locOf = {});

/// True when values of type `t` carry gradients (floats, floating tensors).
bool isDifferentiableType(ir::Type t);

/// Resolves a `wrt` list written as parameter names or indices ("x,2,y").
bool parseWrtList(const ir::Graph& g, const std::string& spec, std::vector<size_t>& out,
                  std::string& error);

}  // namespace xacc::passes
