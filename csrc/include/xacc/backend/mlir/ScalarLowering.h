// Scalar code for the xpu backend: whole GIR graphs over i64 / f64 / bool
// (Camel functions with recursion, mutual recursion, if/match arms and loops)
// lowered to one MLIR module of func/arith/scf/math, compiled to native code
// and called with unboxed arguments. The decision is per graph (a partition
// at function granularity): a graph is compiled when its parameters and its
// one result are scalars, every node is a scalar op this lowering knows, and
// every graph it calls is compiled too; anything else (strings, lists,
// closures, effects such as println) stays on the runtime.
//
// Native code never has behaviour the runtime does not: integer arithmetic
// wraps, INT64_MIN / -1 wraps like the interpreter's rule, and everything the
// runtime reports as an error (division by zero, negative integer exponent,
// float -> int out of range) and a native stack running low make the compiled
// code *bail out* instead: the whole native call is abandoned (longjmp back to
// the entry, nothing to clean up) and the caller reruns it on the runtime,
// which produces the value or the located diagnostic. Compiled graphs are
// pure, so the rerun is unobservable apart from its time.
//
// Calling convention (ScalarAbi): one exported function
//     void xacc_scalar_dispatch(i64 fn, ptr ctx, ptr args, ptr result)
// runs compiled function number `fn` on `args` (one 8-byte slot per
// parameter: i64, f64 bits, or 0/1 for bool) and stores its result slot.
// `ctx` points to ScalarAbi::Context. Every compiled function takes `ctx`
// first and checks the stack pointer against ctx->stackLimit on entry.
//
// This header has no MLIR types; ScalarLowering.cpp writes MLIR as text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "xacc/ir/Graph.h"

namespace xacc::backend::mlir {

/// Bumped whenever the generated code changes meaning: part of the disk-cache key.
inline constexpr const char* kScalarLoweringVersion = "xacc-scalar-7";

enum class ScalarKind : uint8_t { I64, F64, Bool };

namespace ScalarAbi {
/// What ctx points to. jmpBuf is a jmp_buf the entry set up with setjmp.
struct Context {
  uint64_t stackLimit;  ///< bail out when the stack pointer goes below this
  void* jmpBuf;
};
/// The value longjmp delivers (why native code gave up).
enum Bail : int { StackLow = 1, DivByZero = 2, BadConversion = 3, NegativeExponent = 4, TooDeep = 5 };
/// A recursion that native code runs as a loop (an integer accumulator,
/// `f(n) = x + f(..)`) counts the calls it stands for and bails out (TooDeep)
/// past this many: the runtime's own limit on nested calls (Runtime's
/// maxFrames default), so the rerun reports the same stack overflow
/// diagnostic instead of native code looping forever. Tail calls proper are
/// not counted: the runtime does not nest them either.
inline constexpr uint64_t kMaxNestedCalls = 10'000'000;
inline constexpr const char* kDispatch = "xacc_scalar_dispatch";
}  // namespace ScalarAbi

struct ScalarFunction {
  std::string graph;  ///< top-level graph name
  uint32_t index = 0; ///< `fn` argument of the dispatcher
  std::vector<ScalarKind> params;
  ScalarKind result = ScalarKind::I64;
};

struct ScalarPlan {
  /// The compiled graphs; functions[i].index == i.
  std::vector<ScalarFunction> functions;
  /// Graphs left on the runtime, with the reason (first one found).
  std::vector<std::pair<std::string, std::string>> rejected;
  /// The MLIR module (empty when nothing is compiled).
  std::string mlir;
};

/// Decides which top-level graphs of `m` are compiled and writes their module.
ScalarPlan planScalarModule(const ir::Module& m);

/// Human-readable plan: one line per graph.
std::string describeScalarPlan(const ScalarPlan& p);

}  // namespace xacc::backend::mlir
