// The sequential runtime: runs GIR programs fast enough to be a language
// runtime (Camel's default scheduler), unlike the reference interpreter it
// shares semantics with. Each graph is compiled once into a linear program of
// instructions over numbered slots (only nodes a result depends on, so
// evaluation is demand-driven); common scalar ops get typed fast paths and
// every other op runs its registered interpreter rule. Calls, branch regions
// and closures run on an explicit frame stack, never the C++ stack, so
// recursion depth is bounded only by memory, and a call or branch in tail
// position replaces its caller's frame (unbounded tail recursion in constant
// space), without any annotation.
//
// Scalar code runs unboxed: a program whose values are all ints, floats,
// bools, null or tokens, whose instructions all have a raw form and whose
// direct callees are such programs too (decided once, Runtime::rawReady)
// runs in runRaw on 8-byte slots with its own frame stack; it cannot re-enter
// the boxed engine, so entering it from a boxed frame or a builtin's callback
// costs one conversion of the arguments and results. Runtime errors there keep
// the call trace (raw frames record their call sites).
#pragma once

#include <functional>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Graph.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::runtime {

struct Program;
struct Instr;

enum class Scheduler : uint8_t { Sequential, Parallel };

struct RuntimeOptions {
  /// Parallel: groups of independent calls (found at compile time: pure calls,
  /// or calls whose only effects are builtins marked `concurrent`, such as the
  /// sim kernels) run concurrently on worker threads, in boxed and unboxed
  /// code alike, down to `spawnDepth` nested levels (0: chosen from the thread
  /// count), below which they run in order; builtins such as map run the
  /// element function of large inputs in concurrent chunks when it may run
  /// concurrently (Interpreter::forEachChunk). Results are identical to
  /// Sequential.
  Scheduler scheduler = Scheduler::Sequential;
  unsigned spawnDepth = 0;
  /// Parallel: at most this many threads (the calling one included) run
  /// tasks while the runtime exists; 0 leaves oneTBB's default (the hardware
  /// concurrency). The limit is process-wide (tbb::global_control).
  unsigned threads = 0;
};

/// Whether running `module` from `entry` with the parallel scheduler has
/// anything to run concurrently: a group of independent calls in a graph
/// reachable from `entry`, or a higher-order builtin (map, foreach, filter,
/// para.unordered_*) whose function may run concurrently. `camel run` uses
/// the parallel scheduler by default exactly when this holds.
bool hasParallelism(const ir::Module& module, std::string_view entry);

/// The runtime's slot storage: one contiguous array of datums addressed by
/// index (frames refer to their first slot), grown geometrically. Every slot
/// of the capacity stays constructed, and slots at or above size() never hold
/// a heap reference, so a call claims its frame's slots without constructing
/// them and a frame that can only hold scalars is dropped by moving the top.
class SlotStack {
public:
  SlotStack() = default;
  SlotStack(const SlotStack&) = delete;
  SlotStack& operator=(const SlotStack&) = delete;
  ~SlotStack();
  ir::Datum* data() { return d_; }
  size_t size() const { return n_; }
  ir::Datum& operator[](size_t i) { return d_[i]; }
  /// Makes room for `extra` more slots without changing the size (may move
  /// the array: slot pointers are invalid afterwards).
  void reserveMore(size_t extra) {
    if (n_ + extra > cap_) grow(n_ + extra);
  }
  /// Claims `count` slots (after reserveMore): they hold stale scalars, to be
  /// overwritten before they are read.
  ir::Datum* claimReserved(size_t count) {
    ir::Datum* first = d_ + n_;
    n_ += count;
    return first;
  }
  /// Grows to `n` null slots or drops the slots above `n`.
  void resize(size_t n);
  /// Drops the slots above `n`, releasing heap values.
  void shrink(size_t n) {
    for (size_t i = n; i < n_; ++i)
      if (d_[i].isHeap()) d_[i] = ir::Datum();
    n_ = n;
  }
  /// Drops the slots above `n`, known to hold no heap values.
  void shrinkScalars(size_t n) { n_ = n; }

private:
  void grow(size_t need);
  ir::Datum* d_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

class Runtime {
public:
  Runtime(support::DiagnosticEngine& diag, const ir::Module& module, RuntimeOptions opts = {});
  ~Runtime();

  /// Calls graph `name` with `args`. On a runtime error reports a located
  /// diagnostic (with a call trace as notes) and returns false.
  bool call(std::string_view name, const std::vector<ir::Datum>& args,
            std::vector<ir::Datum>& results);
  bool run(const ir::Graph& g, const std::vector<ir::Datum>& args, std::vector<ir::Datum>& results);

  /// Sink for io.print and output builtins (default: stdout).
  void setOutput(std::function<void(std::string_view)> out);
  /// Frames allowed before "stack overflow" (default 10 million).
  void setMaxFrames(size_t n) { maxFrames_ = n; }

  struct Stats {
    uint64_t calls = 0;
    uint64_t tailCalls = 0;
    uint64_t parallelGroups = 0;  ///< call groups that ran concurrently
    size_t maxDepth = 0;
  };
  const Stats& stats() const { return stats_; }

private:
  friend class RuntimeContext;
  friend bool hasParallelism(const ir::Module& module, std::string_view entry);
  struct Frame;
  struct Shared;
  /// A worker's runtime: shares programs, globals, output and options.
  Runtime(std::shared_ptr<Shared> shared, support::DiagnosticEngine& diag, unsigned parDepth);
  bool runParallelGroup(const Program& p, uint32_t pc, size_t base, uint32_t n);
  /// Runs the group of `n` independent calls at instructions pc.. of `p` as
  /// tasks (spawn), boxed or (`raw`) unboxed: the callers above read each
  /// argument with `arg(parameter kind, caller slot)` (tokens are made fresh
  /// here) and take each member's results with `store`.
  bool runGroup(const Program& p, uint32_t pc, uint32_t n, bool raw,
                const std::function<ir::Datum(ir::TypeKind, uint32_t)>& arg,
                const std::function<void(const Program&, const Instr&, std::vector<ir::Datum>&)>& store);
  /// Whether `g` (and everything it calls) may run concurrently with other
  /// code: pure, or effectful only through `concurrent` builtins.
  bool concurrentSafe(const ir::Graph& g);
  /// The compiled form of `g`: with `parallel`, the scheduler's own (with
  /// ParCall groups under the parallel scheduler); without, the sequential one.
  const Program& programFor(const ir::Graph& g, bool parallel = true);
  /// The form of parallel program `p` for code that spawns no tasks (Program::seq).
  const Program& seqOf(const Program& p);
  bool execute(size_t baseDepth);
  /// `movable`: the arguments live outside the frames and may be moved from.
  bool pushCall(const Program& p, ir::Datum* args, size_t nargs, size_t retBase,
                uint32_t retCount, bool tail, const ir::Node* site, bool movable = false);
  bool fail(const ir::Node& n, std::string code, std::string message);
  /// fail() from unboxed code: the trace also lists the raw frames above
  /// `rawFrom` (which are dropped), or `leaf` called at `leafSite`.
  bool failRaw(const ir::Node& n, std::string code, std::string message, size_t rawFrom,
               const Program* leaf, const ir::Node* leafSite);
  /// Whether a call that makes a stack `depth` frames deep must look at the
  /// shared state (stopSlow): every kStopCheck frames.
  static bool checkpoint(size_t depth) { return (depth & (kStopCheck - 1)) == 0; }
  static constexpr size_t kStopCheck = 1024;
  /// At a checkpoint: whether this task must stop, because another has failed
  /// (Note [A failed task stops the others] in Scheduler.cpp) or, with
  /// `overflow` set, because the parallel frame budget is spent (Note
  /// [Parallel frame budget]); reserves frames from that budget otherwise.
  bool stopSlow(bool& overflow);
  /// Gives this runtime's reserved frames back to the parallel budget.
  void releaseFrames();
  /// Whether the parallel scheduler spawns at this runtime's depth.
  bool spawnsHere() const { return parDepth_ < spawnDepth_; }
  /// Runs task(worker, k) for k in [0, n) (k = 0 on this runtime, the others
  /// on worker runtimes of other threads, one level deeper); each task's
  /// diagnostics are kept apart and those of the first failing task (in k
  /// order) are reported here. Returns whether every task succeeded.
  bool spawn(uint32_t n, const std::function<bool(Runtime&, uint32_t)>& task);
  /// The unboxed form of a ParCall group (instructions pc.. of `p`, frame F).
  bool runRawGroup(const Program& p, uint32_t pc, void* frame);
  /// Decides (once) whether `p` and everything it calls can run unboxed.
  bool rawReady(const Program& p);
  /// Runs `p` unboxed: arguments are args[ops[i]] (args[i] when `ops` is
  /// null), results go to out[0..]. Never touches the boxed slots or frames.
  bool runRaw(const Program& p, const ir::Datum* args, const uint32_t* ops, ir::Datum* out,
              const ir::Node* site);

  support::DiagnosticEngine& diag_;
  const ir::Module& module_;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<class RuntimeContext> ctx_;
  unsigned parDepth_ = 0;
  unsigned spawnDepth_ = 0;  ///< Shared::spawnDepth (read on every group)
  /// Nested (C++-recursive) entries into run(): loops and builtins that call
  /// closures re-enter the engine; bounded so hostile programs get a located
  /// "stack overflow" instead of exhausting the native stack.
  unsigned nesting_ = 0;
  static constexpr unsigned kMaxNesting = 1000;
  /// Default limit on nested calls (setMaxFrames); under the parallel
  /// scheduler, on the frames of all running tasks together.
  static constexpr size_t kMaxFrames = 10'000'000;
  SlotStack stack_;
  const ir::Graph* lastGraph_ = nullptr;  ///< programFor's one-entry cache
  const Program* lastProgram_ = nullptr;
  union RawSlot {
    int64_t i;
    double f;
  };
  struct RawFrame {
    const Program* prog;
    const void* ip;  ///< resume point (const Instr*) while a callee runs
    size_t base;
    size_t ret;  ///< where results go in the caller's slots
    const ir::Node* site;  ///< the call that created the frame (for traces)
  };
  std::vector<RawSlot> rawStack_;
  std::vector<RawFrame> rawFrames_;
  std::vector<ir::Datum> scratch_;  ///< tail calls: arguments while the frame is replaced
  std::vector<Frame> frames_;
  size_t maxFrames_ = kMaxFrames;
  size_t reserved_ = 0;  ///< frames held from Shared::frameBudget (parallel scheduler)
  Stats stats_;
};

}  // namespace xacc::runtime
