// The backend's kernel IR: a small DAG of tensor expressions with concrete
// shapes, between GIR regions and MLIR text. ATen ops are translated into it
// (AtenLowering.cpp: decompositions such as gelu or softmax become several
// nodes), and MlirEmitter.cpp prints it as one MLIR function of linalg.generic
// ops on tensors. It has no MLIR types, so neither of those files pays for MLIR
// headers.
//
// Invariants: nodes are in topological order (args precede users); every
// `Map` node's shape is the numpy broadcast of its args' shapes (args are
// right-aligned, size-1 dims broadcast); a `Map` node's args all have the
// node's dtype except for `cast` (any -> dtype), comparisons (`cmp.*`: args of
// one dtype, result Bool) and `select` (args[0] Bool). A `View` reads its arg
// through `index`: input dim j is `index[j].mul * d[index[j].dim] + add` of the
// view's own index d (dim -1: the constant `add`), so permutes, transposes,
// (un)squeezes, expands, slices and selects cost nothing at run time. An
// `Iota` is the i64 value `ival + sum_d coef[d] * d[d]` of its own index d
// (flat positions: max_pool2d's argmax indices), computed from the loop
// indices where it is read, never stored.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xacc/ir/Type.h"

namespace xacc::backend::mlir {

/// One affine index: `mul * d<dim> + add`, or the constant `add` when dim < 0.
struct AffineIndex {
  int dim = -1;
  int64_t mul = 1;
  int64_t add = 0;
  bool operator==(const AffineIndex&) const = default;
};

struct KNode {
  enum Kind : uint8_t {
    Input,   ///< tensor argument `index` of the kernel
    Scalar,  ///< scalar argument `index` of the kernel (i64, f64 or bool)
    Const,   ///< a splat constant (`fval`, or `ival` for integer/bool dtypes)
    Map,     ///< elementwise `op` over broadcast args
    View,    ///< args[0] read through `index` (no data movement)
    Reduce,  ///< `op` in {sum, prod, max, min} over `dims` of args[0]
    Iota,    ///< i64 `ival + sum_d coef[d] * index[d]` (no arguments)
  };
  Kind kind = Map;
  std::string op;
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> shape;
  std::vector<int> args;
  int index = -1;
  double fval = 0;
  int64_t ival = 0;
  std::vector<int> dims;              ///< Reduce: reduced dims of args[0], sorted
  bool keepDim = false;               ///< Reduce
  std::vector<AffineIndex> viewIndex; ///< View: one entry per dim of args[0]
  std::vector<int64_t> coef;          ///< Iota: one coefficient per dim of `shape`
  /// Const of a size-generic kernel (float dtypes): the value is the size of
  /// this symbol plus `fval` (mean's count n, var's n - 1).
  int symbol = -1;
};

/// Note [Size-generic kernels]: a shape entry <= -2 is a symbolic extent,
/// symbol `symbolIndex(e)`, printed as `?` and read at run time from the first
/// kernel argument that has it, so one kernel runs on every size of that dim
/// (Executable.cpp builds such kernels for regions whose inputs change size).
/// Entries equal to each other are the same size.
inline bool isSymbolicExtent(int64_t e) { return e <= -2; }
inline int64_t symbolicExtent(int k) { return -2 - static_cast<int64_t>(k); }
inline int symbolIndex(int64_t e) { return static_cast<int>(-2 - e); }

/// Element kind of a kernel argument.
struct KInput {
  ir::DType dtype = ir::DType::F32;
  std::vector<int64_t> shape;
  bool contiguous = true;  ///< identity layout; otherwise strided<[?...], offset: ?>
};

struct KernelIR {
  std::vector<KNode> nodes;
  std::vector<KInput> inputs;          ///< tensor arguments
  std::vector<ir::DType> scalars;      ///< scalar arguments: I64, F64 or Bool
  std::vector<int> outputs;            ///< node ids written to output buffers
  /// When >= 0: every shape of the outputs' rank whose dim 0 is `dynRows` is
  /// printed with a dynamic dim 0 (`?`), so one kernel runs on any row range;
  /// the executable uses this to split kernels over rows across threads.
  int64_t dynRows = -1;

  int add(KNode n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }
  const KNode& at(int i) const { return nodes[static_cast<size_t>(i)]; }
};

/// Options that change the generated text.
struct EmitOptions {
  std::string funcName = "kernel";
};

/// Prints `k` as an MLIR module holding `func.func @<funcName>(inputs...,
/// scalars..., outputs...)` with memref arguments; outputs are written with
/// `bufferization.materialize_in_destination`. Deterministic: equal kernels
/// print equal text (the text is the kernel cache key). Returns "" and sets
/// `unsupported` (when given) if `k` has symbolic extents the printer cannot
/// express (a slice of one).
std::string emitKernelMlir(const KernelIR& k, const EmitOptions& opts = {}, std::string* unsupported = nullptr);

/// numel of a shape.
int64_t numelOf(const std::vector<int64_t>& shape);

/// Estimated cost of a kernel (KernelWork.cpp), for the decision to split it
/// across threads: per output element, the bytes its inputs and outputs move
/// and its floating-point lane-operations after fastMath lowering; in all,
/// the work in elements of a plain f32 copy (8 bytes moved each).
struct KernelWork {
  double bytesPerElement = 0;
  double opsPerElement = 0;
  double copyElements = 0;
};
KernelWork estimateKernelWork(const KernelIR& k);

/// Whether `k` can be run chunk by chunk over dim 0 of its outputs (KernelWork.cpp).
bool splittableOverDim0(const KernelIR& k);

}  // namespace xacc::backend::mlir
