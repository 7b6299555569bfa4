// The runtime's internal state, shared by its source files: the state a
// runtime shares with its parallel workers (Shared), the context generic op
// rules run in (RuntimeContext) and a boxed frame. Runtime.cpp holds the
// runtime object and its entry points, Scheduler.cpp the parallel scheduler,
// Execute.cpp the boxed interpreter loop and ExecuteRaw.cpp the unboxed one.
#pragma once

#include "xacc/runtime/Runtime.h"
#include "xacc/support/CoreDiags.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "Program.h"
#ifdef XACC_HAVE_TBB
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#endif
#include "xacc/ir/Interpreter.h"

namespace xacc::runtime {

/// State shared by a runtime and its parallel workers: compiled programs,
/// module globals (`func.once` results must be computed once per run, not once
/// per thread), the output sink and the options.
struct Runtime::Shared {
  const ir::Module& module;
  RuntimeOptions options;
  std::mutex mu;
  std::unordered_map<const ir::Graph*, std::unique_ptr<Program>> programs;
  /// Sequential compiles of parallel programs (Program::seq), when different.
  std::unordered_map<const ir::Graph*, std::unique_ptr<Program>> seqPrograms;
  std::unordered_map<std::string, std::vector<ir::Datum>> once;
  std::mutex onceMu;  // held while a global is computed, so it is computed once
  std::mutex outMu;
  std::function<void(std::string_view)> out;
  std::mutex safeMu;
  std::unordered_map<const ir::Graph*, bool> safe;  ///< concurrentSafe's answers
  unsigned threads = 1;     ///< threads that run tasks
  unsigned spawnDepth = 0;  ///< parallel levels (0: the sequential scheduler)
  /// See Note [A failed task stops the others].
  std::atomic<bool> failed{false};
  /// Parallel scheduler: frames not yet reserved by any runtime (see Note
  /// [Parallel frame budget]).
  std::atomic<int64_t> frameBudget{0};
#ifdef XACC_HAVE_TBB
  std::unique_ptr<tbb::global_control> threadLimit;
  /// A runtime for tasks that run on other threads than their group's, with
  /// the engine their diagnostics go to. Kept between tasks (per thread, in
  /// `idle`), so a task costs no runtime construction, and its stacks are
  /// already grown and in this thread's cache.
  struct Worker {
    support::DiagnosticEngine diag;
    Runtime rt;
    // The worker does not own `sh` (which owns the worker): no cycle.
    explicit Worker(Shared* sh) : rt(std::shared_ptr<Shared>(std::shared_ptr<Shared>(), sh), diag, 0) {}
  };
  /// Workers not running a task, by thread. Declared after what workers use:
  /// destroyed before it.
  tbb::enumerable_thread_specific<std::vector<std::unique_ptr<Worker>>> idle;
#endif
  Shared(const ir::Module& m, RuntimeOptions o) : module(m), options(o) {
    if (o.scheduler != Scheduler::Parallel) return;
#ifdef XACC_HAVE_TBB
    if (o.threads > 0)
      threadLimit = std::make_unique<tbb::global_control>(
          tbb::global_control::max_allowed_parallelism, o.threads);
    threads = o.threads > 0 ? o.threads : unsigned(tbb::this_task_arena::max_concurrency());
#else
    threads = 1;
#endif
    // Enough levels for many tasks per thread on unbalanced divide and
    // conquer: work stealing evens them out, also when a thread is held up
    // by other work on the machine (the others take over its share). A group
    // costs about a microsecond (worker runtimes are reused), so this many
    // levels add well under 1% to fib(30)'s run; deeper adds more.
    // One thread spawns as deep as two, so `--threads 1` measures the cost
    // of the parallel machinery itself.
    frameBudget.store(int64_t(Runtime::kMaxFrames));
    unsigned log2 = 0;
    while ((1u << log2) < std::max(threads, 2u)) ++log2;
    spawnDepth = o.spawnDepth > 0 ? o.spawnDepth : log2 + 9;
  }
};

/// The context generic op rules see: diagnostics, output, and apply/call routed
/// back into this runtime so builtins such as map run closures at full speed.
class RuntimeContext : public ir::Interpreter {
public:
  RuntimeContext(Runtime& rt, support::DiagnosticEngine& diag, const ir::Module& m)
      : ir::Interpreter(diag, &m), rt_(rt) {}
  bool run(const ir::Graph& g, const std::vector<ir::Datum>& args,
           std::vector<ir::Datum>& results) override {
    return rt_.run(g, args, results);
  }
  bool apply(const ir::Datum& fn, const std::vector<ir::Datum>& args,
             std::vector<ir::Datum>& results, const ir::Node* site) override {
    if (fn.kind() != ir::DKind::Func) {
      if (site)
        return fail(*site, support::coreCode(support::CoreDiag::NotAFunction),
                    "called value is not a function");
      return false;
    }
    if (site && rt_.nesting_ + 1 >= Runtime::kMaxNesting)
      return fail(*site, support::coreCode(support::CoreDiag::StackOverflow),
                  "stack overflow: more than " + std::to_string(Runtime::kMaxNesting) +
                      " nested callback levels");
    const std::vector<ir::Datum>& caps = fn.funcCaptures();
    if (caps.empty()) return rt_.run(*fn.funcGraph(), args, results);
    std::vector<ir::Datum> all;
    all.reserve(caps.size() + args.size());
    all.insert(all.end(), caps.begin(), caps.end());
    all.insert(all.end(), args.begin(), args.end());
    return rt_.run(*fn.funcGraph(), all, results);
  }
  bool call(std::string_view name, const std::vector<ir::Datum>& args,
            std::vector<ir::Datum>& results, const ir::Node* site) override {
    return rt_.call(name, args, results);
  }
  bool fail(const ir::Node& n, std::string code, std::string message) override {
    return rt_.fail(n, std::move(code), std::move(message));
  }
  bool once(std::string_view name, std::vector<ir::Datum>& results, const ir::Node* site) override {
    Runtime::Shared& sh = *rt_.shared_;
    std::lock_guard<std::recursive_mutex> lock(onceLock());
    auto it = sh.once.find(std::string(name));
    if (it != sh.once.end()) {
      results = it->second;
      return true;
    }
    if (!rt_.call(name, {}, results)) return false;
    sh.once.emplace(std::string(name), results);
    return true;
  }
  bool forEachChunk(const ir::Datum& fn, size_t n,
                    const std::function<bool(ir::Interpreter&, size_t, size_t)>& body) override {
    if (n < 2 || !rt_.spawnsHere() || fn.kind() != ir::DKind::Func ||
        !rt_.concurrentSafe(*fn.funcGraph()))
      return body(*this, 0, n);
    // Probe: elements run here, in order, until they took kProbe; a cheap
    // input ends there (most small maps), and otherwise the time per element
    // says whether the rest is worth tasks (each costs a microsecond or two).
    using Clock = std::chrono::steady_clock;
    constexpr auto kProbe = std::chrono::microseconds(40);
    constexpr double kMinTaskSeconds = 50e-6;
    constexpr size_t kChunksPerThread = 32;
    auto t0 = Clock::now();
    size_t i = 0;
    double spent = 0;
    while (i < n) {
      if (!body(*this, i, i + 1)) return false;
      ++i;
      spent = std::chrono::duration<double>(Clock::now() - t0).count();
      if (spent >= std::chrono::duration<double>(kProbe).count()) break;
    }
    size_t rest = n - i;
    if (rest == 0) return true;
    double work = spent / double(i) * double(rest);
    // Many chunks per thread: threads take the next one as they finish, so
    // they end within about one chunk of each other even when elements differ
    // in cost or a thread is held up by other work on the machine.
    size_t chunks = std::min<size_t>({rest, kChunksPerThread * rt_.shared_->threads,
                                      size_t(work / kMinTaskSeconds)});
    if (chunks < 2) return body(*this, i, n);
    return rt_.spawn(uint32_t(chunks), [&](Runtime& w, uint32_t k) {
      return body(*w.ctx_, i + rest * k / chunks, i + rest * (k + 1) / chunks);
    });
  }
  static std::recursive_mutex& onceLock() {
    // Recursive: a global's initialiser may read other globals.
    static std::recursive_mutex m;
    return m;
  }

private:
  Runtime& rt_;
};

// The scalar instructions that are one C++ operator, by code: both
// interpreter loops (Execute.cpp over datums, ExecuteRaw.cpp over raw slots)
// expand these tables with their own slot access. Integer arithmetic wraps
// (it is done on uint64_t); DivI and RemI have their own rule (intDivRem).
#define XACC_RT_INT_ARITH(X) X(AddI, +) X(SubI, -) X(MulI, *)
#define XACC_RT_INT_CMP(X) X(LtI, <) X(LeI, <=) X(GtI, >) X(GeI, >=) X(EqI, ==) X(NeI, !=)
/// Compare-and-branch (a compare fused with the branch on it).
#define XACC_RT_INT_BRANCH(X) X(BrLtI, <) X(BrLeI, <=) X(BrGtI, >) X(BrGeI, >=) X(BrEqI, ==) X(BrNeI, !=)
#define XACC_RT_FLOAT_ARITH(X) X(AddF, +) X(SubF, -) X(MulF, *) X(DivF, /)
#define XACC_RT_FLOAT_CMP(X) X(LtF, <) X(LeF, <=) X(GtF, >) X(GeF, >=)

/// Integer `/` (truncating) and `%` (sign of the dividend), q != 0; the one
/// overflowing quotient wraps like the interpreter's rule.
inline int64_t intDivRem(bool div, int64_t p, int64_t q) {
  if (p == INT64_MIN && q == -1) return div ? INT64_MIN : 0;
  return div ? p / q : p % q;
}

struct Runtime::Frame {
  const Program* prog;
  uint32_t pc;
  size_t base;       ///< first slot of this frame in stack_
  size_t retBase;    ///< where results go in the caller's slots
  uint32_t retCount;
  const ir::Node* site;  ///< the call that created this frame (for traces)
};

}  // namespace xacc::runtime
