// Compiled form of a graph for the runtime (private to csrc/lib/runtime).
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "xacc/ir/Builtins.h"
#include "xacc/ir/Datum.h"
#include "xacc/ir/Graph.h"

namespace xacc::runtime {

enum class Code : uint8_t {
  Const,
  // Typed fast paths on i64 / f64 / bool operands.
  AddI, SubI, MulI, DivI, RemI, LtI, LeI, GtI, GeI, EqI, NeI,
  AddF, SubF, MulF, DivF, LtF, LeF, GtF, GeF,
  Not, And, Or, Select,
  // Control: calls and branches push frames.
  Call, Apply, FuncRef, Loop,
  // ctrl.if arms are compiled inline: Branch jumps to `jump` when operand 0
  // is false; Move copies one slot; Jump continues at `jump`.
  Branch, Move, Jump,
  // Fused compare-and-branch (a typed compare directly followed by the
  // Branch on its result): writes the bool, then continues at `jump` when it
  // is false and skips the following Branch when it is true.
  BrLtI, BrLeI, BrGtI, BrGeI, BrEqI, BrNeI,
  // End of the program: return the result slots to the caller.
  Ret,
  // ParCall: the next `jump` instructions are independent pure calls that a
  // parallel scheduler may run concurrently; a sequential one falls through.
  ParCall,
  // Boxed-only fast paths; each falls back to the op's rule for anything
  // unusual (errors, negative indices, other kinds).
  ListGet,  // list.get on a list and a non-negative in-range int
  Len,      // builtin `len` of a list or string
  Builtin,  // func.builtin / func.builtin_effect: the builtin resolved once
  Generic,  // the op's interpreter rule
};

struct Program;

/// A field of an otherwise immutable compiled program that is filled in on
/// first use, by whichever thread gets there first: the parallel scheduler
/// runs one program on several threads at once. Stores release and loads
/// acquire, so a thread that sees a value also sees what was built before it
/// was published (a callee's Program, the callee links rawReady resolved).
/// Racing threads compute the same value, so either store may win. Copies
/// (made while compiling, on one thread) copy the value.
template <class T>
class FirstUse {
public:
  FirstUse(T v = T()) : v_(v) {}
  FirstUse(const FirstUse& o) : v_(o.get()) {}
  FirstUse& operator=(const FirstUse& o) {
    set(o.get());
    return *this;
  }
  T get() const { return v_.load(std::memory_order_acquire); }
  void set(T v) const { v_.store(v, std::memory_order_release); }

private:
  mutable std::atomic<T> v_;
};

struct Instr {
  Code code = Code::Generic;
  bool tail = false;          ///< Call/If/Apply whose results are the graph's results
  uint32_t dst = 0;           ///< first result slot
  uint32_t nres = 0;
  uint32_t opBegin = 0;       ///< into Program::operandSlots
  uint32_t opCount = 0;
  uint32_t jump = 0;          ///< Branch/Jump target pc
  uint32_t a = 0, b = 0;      ///< first two operand slots (copies of operandSlots[opBegin..])
  const ir::Node* node = nullptr;
  const ir::Graph* target = nullptr;   ///< Call: callee
  FirstUse<const Program*> prog;   ///< compiled `target`, resolved on first use
  ir::Datum constant;
  const ir::Builtin* builtin = nullptr;  ///< Builtin, Len: the registry entry
  bool hasImm = false;  ///< integer fast ops: operand 1 is `imm`, not a slot
  int64_t imm = 0;
};

struct Program {
  const ir::Graph* graph = nullptr;
  uint32_t numParams = 0;
  uint32_t numSlots = 0;
  /// Every parameter and node result (arms included) has a scalar type, so
  /// the frame's slots never hold heap values and need no clearing.
  bool scalarOnly = false;
  /// Unboxed execution (Runtime::runRaw): every instruction has a raw form
  /// (scalar constants, typed arithmetic and compares, branches, moves and
  /// direct calls), so the program can run on 8-byte slots. `raw` adds that
  /// every program reachable through its calls is rawable too; it is decided
  /// on first use by the runtime.
  bool rawable = false;
  /// No slot appears twice in resultSlots, so Ret may move results out.
  bool distinctResults = true;
  bool leaf = true;  ///< no Call instructions
  bool hasParCall = false;  ///< contains a group of independent calls
  /// Compiled for the parallel scheduler (its direct calls resolve to
  /// parallel programs, a sequential one's to sequential ones).
  bool parallel = false;
  /// A parallel program's form for code that spawns no tasks (deep enough in
  /// the task tree): itself when no group is reachable through its direct
  /// calls, else the sequential compile of the same graph, which has no
  /// ParCall markers to step over. Resolved on first use by the runtime.
  FirstUse<const Program*> seq{nullptr};
  enum class Raw : uint8_t { Unknown, Yes, No };
  FirstUse<Raw> raw{Raw::Unknown};
  std::vector<ir::TypeKind> paramKinds, resultKinds;
  std::vector<Instr> code;
  std::vector<uint32_t> operandSlots;
  std::vector<uint32_t> resultSlots;
};

/// Whether a graph may run concurrently with other code (Runtime::concurrentSafe).
using SafeFn = std::function<bool(const ir::Graph&)>;

/// Compiles `g`. Never fails: ops without a fast path become Generic.
/// `parallel`: emit ParCall markers for groups of independent calls: pure
/// calls, and calls to graphs `safe` accepts, whose token edges to each other
/// do not order them (their effects commute).
std::unique_ptr<Program> compileProgram(const ir::Graph& g, bool parallel = false,
                                        const SafeFn* safe = nullptr);

}  // namespace xacc::runtime
