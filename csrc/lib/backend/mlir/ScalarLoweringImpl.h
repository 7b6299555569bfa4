// Private to the scalar lowering (ScalarLowering.cpp, ScalarLoopForm.cpp,
// ScalarNodes.cpp): GraphEmitter, which emits one scalar graph as a func.func,
// and the small helpers its parts share. No MLIR headers, no fmt here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "xacc/backend/mlir/ScalarLowering.h"
#include "xacc/ir/Op.h"

namespace xacc::backend::mlir::scalar {

using ir::CoreOp;

bool scalarKind(ir::Type t, ScalarKind& k);
const char* mlirType(ScalarKind k);
std::string symbol(const std::string& graph);
/// The bits of `v` as an MLIR hex float literal.
std::string f64Const(double v);

/// Emits one graph as a func.func. Fails (with `why`) on the first thing it
/// cannot lower.
class GraphEmitter {
public:
  GraphEmitter(const ir::Module& m) : module_(m) {}

  bool emit(const ir::Graph& g, std::string& out, std::set<std::string>& callees, std::string& why);

private:
  /// Values whose definition is in tail position: the graph's result and,
  /// through ctrl.if, the arm results it is made of, and the last self-call
  /// that an integer add/mul in tail position takes (`f(n-1) + f(n-2)`: LLVM
  /// turns that call into a loop with an accumulator). A self-call defining one
  /// stays a call, for LLVM's tail-recursion elimination to make it a loop.
  void markTail(const ir::Graph& g, const ir::Value* v);

  /// Counts the nodes of `g` (regions included) and its non-tail self-calls.
  void measure(const ir::Graph& g, size_t& nodes, size_t& selfCalls);

  bool isSelfCall(const ir::Node& n) const;

  /// Recursive inlining (what gcc does for fib): the non-tail self-calls of a
  /// small self-recursive graph get one inlined copy of its body (whose own
  /// self-calls stay calls), halving the calls of a fib-like recursion. Tail
  /// self-calls are left alone. The growth is bounded: at most 4 copies of a
  /// body of at most 48 nodes.
  bool selfInlinable(const ir::Graph& g);

  /// Emits `g`'s body (g is the graph being emitted) in place of the call `n`.
  bool inlineSelfCall(const ir::Node& n, const std::vector<std::string>& a, std::string& why);

  /// Marks the tail-structure nodes under `v` (a result of its graph, used
  /// once): ctrl.if with one result, tail self-calls, accumulators and the
  /// self-calls they take. Sets `steps` when one recurses.
  void classifyTail(const ir::Value* v, bool& steps);

  /// Counts the nodes of `g` (regions included) and the self-calls that are
  /// not part of the tail structure.
  void countLoopBody(const ir::Graph& g, size_t& nodes, size_t& selfCalls);

  /// Decides whether `g` takes the loop form and how deep its loop is inlined
  /// into itself: at most kMaxLoopLevels levels and kLoopNodeBudget nodes in
  /// all (a body with k non-tail self-calls is copied k^level times per level).
  void planLoop(const ir::Graph& g);

  /// `acc op x` with the accumulator's operator.
  std::string accumulate(const std::string& acc, const std::string& x);

  // Termination of the loop form. A loop with an accumulator stands for
  // nested calls, which the runtime limits (kMaxNestedCalls); native code must
  // not loop forever where the runtime reports a stack overflow. When every
  // step (tail or accumulator self-call) passes some integer parameter as
  // `p - c` (c > 0) on a path whose ctrl.if conditions bound p from below
  // (`p < K` false, `p >= K` true, ...), the loop takes at most p - floor + 1
  // steps: one check at loop entry is enough (LLVM's trip-count reasoning,
  // done here on GIR). Otherwise the loop carries a step count.

  bool countsSteps() const { return accOp_ >= 0 && boundParam_ < 0; }

  static bool intConst(const ir::Value* v, int64_t& k);

  /// Lower bounds on parameters known on a path, and which values are which
  /// parameter (arm parameters forward ctrl.if operands).
  struct PathFacts {
    std::map<const ir::Value*, int> param;
    std::map<int, int64_t> floor;
  };

  /// `cond` (true when `holds`) as a lower bound on a parameter.
  static void learn(const ir::Value* cond, bool holds, PathFacts& f);

  /// Walks the tail structure under `v`; for each step records the
  /// parameters it decreases with a known floor (`candidates`, intersected).
  bool stepFacts(const ir::Value* v, PathFacts f, std::optional<std::map<int, int64_t>>& candidates);

  void proveSteps(const ir::Graph& g);

  /// The loop-carried types (parameters, then the accumulator and the count
  /// of calls it stands for, if any).
  std::string carriedTypes();

  /// Emits self_'s loop on the argument names `init`; `fin` names the result.
  bool emitLoop(const std::vector<std::string>& init, std::string& fin, std::string& why);

  /// Emits region `g` (its parameters named) of the loop body, tail nodes left
  /// out, and the tuple its result `v` gives: continue?, next parameters,
  /// next accumulator and call count (if any), final result.
  bool tailRegion(const ir::Graph& g, const ir::Value* v, const std::vector<std::string>& cur,
                  const std::string& acc, const std::string& depth, std::vector<std::string>& t,
                  std::string& why);

  static std::string join(const std::vector<std::string>& xs, size_t from);
  static ScalarKind kindOf(const ir::Value* v);

  bool fail(std::string reason, std::string& why);
  std::string fresh() { return "%v" + std::to_string(next_++); }
  void line(const std::string& s) { text_ += indent_ + s + "\n"; }
  std::string constant(const std::string& v, const char* type);
  void bail(const std::string& cond, int code);
  std::string op2(const char* op, const std::string& a, const std::string& b, const char* type);
  std::string cmp(const char* op, const char* pred, const std::string& a, const std::string& b, const char* type);
  std::string select(const std::string& c, const std::string& a, const std::string& b, const char* type);
  std::string name(const ir::Value* v) { return names_.at(v); }

  /// Emits the nodes of `g` (whose parameters are already named) and returns
  /// the names of its results.
  bool body(const ir::Graph& g, std::vector<std::string>& results, std::string& why);

  bool node(const ir::Node& n, std::string& why);

  bool cast(ScalarKind from, ScalarKind to, const std::string& x, std::string& r, std::string& why);

  std::string intArith(CoreOp c, const std::vector<std::string>& a);

  std::string intPow(const std::string& p, const std::string& q);

  std::string floatArith(CoreOp c, const std::vector<std::string>& a);

  bool call(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& out,
            std::string& why);

  std::string typeList(const std::vector<ScalarKind>& ks);

  /// Binds `region`'s parameters to `args` and emits its body; its result
  /// names go to `res`.
  bool inlineRegion(const ir::Graph& region, const std::vector<std::string>& args, std::vector<std::string>& res,
                    std::string& why);

  bool ifOp(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& out,
            std::string& why);

  bool loop(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& in,
            const std::vector<ScalarKind>& out, std::string& why);

  const ir::Module& module_;
  std::set<std::string>* callees_ = nullptr;
  const ir::Graph* self_ = nullptr;          // the graph being emitted
  std::set<const ir::Value*> tail_;          // values defined in tail position (markTail)
  bool inlineSelf_ = false;                  // selfInlinable(self_)
  ScalarKind resultKind_ = ScalarKind::I64;  // self_'s result
  bool loopForm_ = false;                    // planLoop: self_ is emitted as a loop
  int loopLevels_ = 0;                       // how deep the loop is inlined into itself
  int loopDepth_ = 0;                        // > 0 inside an inlined loop
  int accOp_ = -1;                           // CoreOp::Add / Mul of the accumulator, -1: none
  int boundParam_ = -1;                      // proveSteps: the parameter every step decreases, -1: none
  int64_t boundFloor_ = 0;                   // ... and its lower bound on every step's path
  std::set<const ir::Node*> tailNodes_;      // the loop's tail structure (classifyTail)
  int inlineDepth_ = 0;                      // > 0 inside an inlined self-call
  std::unordered_map<const ir::Value*, std::string> names_;
  std::string text_, indent_;
  int next_ = 0;
};

}  // namespace xacc::backend::mlir::scalar
