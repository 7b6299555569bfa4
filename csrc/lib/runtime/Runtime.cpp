// The runtime's execution loop. Frames live on an explicit stack; slot storage
// is one growable datum array addressed by index (never by pointer, since it
// reallocates). See Runtime.h.
#include "xacc/runtime/Runtime.h"
#include "xacc/support/CoreDiags.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "Program.h"
#ifdef XACC_HAVE_TBB
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#endif
#include "xacc/ir/Builtins.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/List.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

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
        return fail(*site, coreCode(CoreDiag::NotAFunction), "called value is not a function");
      return false;
    }
    if (site && rt_.nesting_ + 1 >= Runtime::kMaxNesting)
      return fail(*site, coreCode(CoreDiag::StackOverflow),
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

namespace {
/// Integer `/` (truncating) and `%` (sign of the dividend), q != 0; the one
/// overflowing quotient wraps like the interpreter's rule.
inline int64_t intDivRem(bool div, int64_t p, int64_t q) {
  if (p == INT64_MIN && q == -1) return div ? INT64_MIN : 0;
  return div ? p / q : p % q;
}
}  // namespace

SlotStack::~SlotStack() {
  for (size_t i = 0; i < cap_; ++i) d_[i].~Datum();
  ::operator delete(d_);
}

void SlotStack::grow(size_t need) {
  size_t cap = cap_ ? cap_ : 1024;
  while (cap < need) cap *= 2;
  auto* d = static_cast<ir::Datum*>(::operator new(cap * sizeof(ir::Datum)));
  for (size_t i = 0; i < n_; ++i) new (d + i) ir::Datum(std::move(d_[i]));
  for (size_t i = n_; i < cap; ++i) new (d + i) ir::Datum();
  for (size_t i = 0; i < cap_; ++i) d_[i].~Datum();
  ::operator delete(d_);
  d_ = d;
  cap_ = cap;
}

void SlotStack::resize(size_t n) {
  if (n <= n_) {
    shrink(n);
    return;
  }
  reserveMore(n - n_);
  ir::Datum* first = claimReserved(n - n_);
  for (ir::Datum* x = first; x != d_ + n_; ++x) *x = ir::Datum();
}

struct Runtime::Frame {
  const Program* prog;
  uint32_t pc;
  size_t base;       ///< first slot of this frame in stack_
  size_t retBase;    ///< where results go in the caller's slots
  uint32_t retCount;
  const ir::Node* site;  ///< the call that created this frame (for traces)
};

Runtime::Runtime(support::DiagnosticEngine& diag, const ir::Module& module, RuntimeOptions opts)
    : diag_(diag),
      module_(module),
      shared_(std::make_shared<Shared>(module, opts)),
      ctx_(std::make_unique<RuntimeContext>(*this, diag, module)),
      spawnDepth_(shared_->spawnDepth) {
  setOutput(nullptr);
}

Runtime::Runtime(std::shared_ptr<Shared> shared, support::DiagnosticEngine& diag, unsigned parDepth)
    : diag_(diag),
      module_(shared->module),
      shared_(std::move(shared)),
      ctx_(std::make_unique<RuntimeContext>(*this, diag, shared_->module)),
      parDepth_(parDepth),
      spawnDepth_(shared_->spawnDepth) {
  Shared* sh = shared_.get();
  ctx_->setOutput([sh](std::string_view s) {
    std::lock_guard<std::mutex> lock(sh->outMu);
    sh->out(s);
  });
}

Runtime::~Runtime() = default;

// Note [A failed task stops the others]: a runtime error ends the program, so
// once a task of the parallel scheduler has failed the work of the others is
// wasted; on a runaway recursion it is worse, each task descending to the
// frame limit on its own (minutes, and gigabytes per thread). So a failure
// sets Shared::failed: tasks not started yet do not start, and running ones
// check it as their call stack grows (every kStopCheck frames) and fail
// without a diagnostic of their own. The first real failure is still
// reported: it travels up through the groups that contain it, and a group
// reports the diagnostics of its first task that has any.
//
// Note [Parallel frame budget]: the limit on nested calls (maxFrames_) bounds
// memory when one stack grows; under the parallel scheduler every running task
// has a stack, so the limit is on their frames together: each runtime reserves
// frames from Shared::frameBudget in blocks of kStopCheck as its stack grows
// past what it holds (at the same checks), and a worker gives its reservation
// back when its task ends. A stack that cannot reserve more is the same
// located E0417 as a sequential one past maxFrames_.
bool Runtime::stopSlow(bool& overflow) {
  Shared& sh = *shared_;
  if (sh.failed.load(std::memory_order_relaxed)) return true;
  if (sh.options.scheduler != Scheduler::Parallel) return false;
  size_t need = frames_.size() + rawFrames_.size() + kStopCheck;
  while (reserved_ < need) {
    if (sh.frameBudget.fetch_sub(int64_t(kStopCheck)) < int64_t(kStopCheck)) {
      sh.frameBudget.fetch_add(int64_t(kStopCheck));
      overflow = true;
      return true;
    }
    reserved_ += kStopCheck;
  }
  return false;
}

void Runtime::releaseFrames() {
  if (reserved_ == 0) return;
  shared_->frameBudget.fetch_add(int64_t(reserved_));
  reserved_ = 0;
}

void Runtime::setOutput(std::function<void(std::string_view)> out) {
  if (!out) out = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); };
  shared_->out = std::move(out);
  Shared* sh = shared_.get();
  ctx_->setOutput([sh](std::string_view s) {
    std::lock_guard<std::mutex> lock(sh->outMu);
    sh->out(s);
  });
}

const Program& Runtime::programFor(const ir::Graph& g, bool parallel) {
  bool par = shared_->options.scheduler == Scheduler::Parallel;
  if (par && !parallel) {
    std::lock_guard<std::mutex> lock(shared_->mu);
    auto& slot = shared_->seqPrograms[&g];
    if (!slot) slot = compileProgram(g, false, nullptr);
    return *slot;
  }
  // Graphs cache their program through a side table keyed by address; the
  // module outlives the runtime. Builtins calling one closure per element
  // hit the one-entry cache (programs are never freed while the runtime runs).
  if (&g == lastGraph_) return *lastProgram_;
  std::lock_guard<std::mutex> lock(shared_->mu);
  lastGraph_ = &g;
  auto it = shared_->programs.find(&g);
  if (it != shared_->programs.end()) return *(lastProgram_ = it->second.get());
  SafeFn safe = [this](const ir::Graph& h) { return concurrentSafe(h); };
  auto p = compileProgram(g, par, &safe);
  const Program* raw = p.get();
  shared_->programs.emplace(&g, std::move(p));
  lastProgram_ = raw;
  return *raw;
}

const Program& Runtime::seqOf(const Program& p) {
  if (!p.parallel) return p;
  if (const Program* s = p.seq.get()) return *s;
  // A group reachable through direct calls: the sequential compile.
  std::vector<const Program*> work{&p};
  bool group = false;
  for (size_t k = 0; k < work.size() && !group; ++k) {
    group = work[k]->hasParCall;
    for (const Instr& in : work[k]->code) {
      if (in.code != Code::Call) continue;
      const Program* cp = in.prog.get();
      if (!cp) in.prog.set(cp = &programFor(*in.target, true));
      if (std::find(work.begin(), work.end(), cp) == work.end()) work.push_back(cp);
    }
  }
  const Program* s = group ? &programFor(*p.graph, false) : &p;
  p.seq.set(s);
  return *s;
}

bool Runtime::fail(const ir::Node& n, std::string code, std::string message) {
  return failRaw(n, std::move(code), std::move(message), rawFrames_.size(), nullptr, nullptr);
}

bool Runtime::failRaw(const ir::Node& n, std::string code, std::string message, size_t rawFrom,
                      const Program* leaf, const ir::Node* leafSite) {
  // A node without a location (the foreign call of an `outer` functor) is
  // reported at the innermost call that reached it.
  const ir::Node* at = nullptr;
  if (!n.loc().valid()) {
    auto pick = [&](const ir::Node* site) {
      if (!at && site && site->loc().valid()) at = site;
    };
    if (leaf) pick(leafSite);
    for (size_t i = rawFrames_.size(); i-- > rawFrom;) pick(rawFrames_[i].site);
    for (size_t i = frames_.size(); i-- > 0;) pick(frames_[i].site);
  }
  auto& d = diag_.error(std::move(code), at ? at->loc() : n.loc(), std::move(message));
  // A short call trace, innermost first: unboxed frames (a leaf closure has
  // none of its own), then boxed ones.
  size_t shown = 0;
  auto note = [&](const ir::Node* site, const Program* prog) {
    if (site == at) {
      at = nullptr;  // the error's own location
      return;
    }
    if (shown < 8 && site && site->loc().valid()) {
      d.notes.push_back({support::Severity::Note, "", site->loc(),
                         "'" + prog->graph->name() + "' called from here", {}, {}});
      ++shown;
    }
  };
  if (leaf) note(leafSite, leaf);
  for (size_t i = rawFrames_.size(); i-- > rawFrom;) note(rawFrames_[i].site, rawFrames_[i].prog);
  rawFrames_.resize(rawFrom);
  for (size_t i = frames_.size(); i-- > 0;) note(frames_[i].site, frames_[i].prog);
  return false;
}

bool Runtime::pushCall(const Program& p, ir::Datum* args, size_t nargs, size_t retBase,
                       uint32_t retCount, bool tail, const ir::Node* site, bool movable) {
  if (nargs != p.numParams) {
    if (site)
      return fail(*site, coreCode(CoreDiag::ArgumentCountMismatch),
                  "'" + p.graph->name() + "' expects " + std::to_string(p.numParams) +
                      " arguments, got " + std::to_string(nargs));
    return false;
  }
  ++stats_.calls;
  if (tail) {
    // Replace the current frame: its caller receives our results directly.
    ++stats_.tailCalls;
    Frame& f = frames_.back();
    if (movable) {
      // The arguments live outside the frame being replaced.
      stack_.shrink(f.base);
      stack_.reserveMore(p.numSlots);
      ir::Datum* slots = stack_.claimReserved(p.numSlots);
      for (size_t i = 0; i < nargs; ++i) slots[i] = std::move(args[i]);
      f.prog = &p;
      f.pc = 0;
      return true;
    }
    // The arguments may live in the frame being replaced: park them first.
    scratch_.assign(args, args + nargs);
    stack_.shrink(f.base);
    stack_.reserveMore(p.numSlots);
    ir::Datum* slots = stack_.claimReserved(p.numSlots);
    for (size_t i = 0; i < nargs; ++i) slots[i] = std::move(scratch_[i]);
    scratch_.clear();
    f.prog = &p;
    f.pc = 0;
    return true;
  }
  if (frames_.size() >= maxFrames_) {
    if (site)
      return fail(*site, coreCode(CoreDiag::StackOverflow),
                  "stack overflow: more than " + std::to_string(maxFrames_) + " nested calls");
    return false;
  }
  if (bool overflow = false; checkpoint(frames_.size()) && stopSlow(overflow)) {
    if (!overflow) return false;
    std::string message = "stack overflow: more than " + std::to_string(maxFrames_) +
                          " nested calls (all parallel tasks together)";
    if (site)
      return fail(*site, coreCode(CoreDiag::StackOverflow), std::move(message));
    const ir::Graph& g = *p.graph;
    diag_.error(coreCode(CoreDiag::StackOverflow),
                g.front() ? g.front()->loc() : support::SourceLoc{}, std::move(message));
    return false;
  }
  size_t base = stack_.size();
  stack_.resize(base + p.numSlots);
  ir::Datum* slots = stack_.data() + base;
  for (size_t i = 0; i < nargs; ++i) slots[i] = args[i];
  frames_.push_back(Frame{&p, 0, base, retBase, retCount, site});
  if (frames_.size() > stats_.maxDepth) stats_.maxDepth = frames_.size();
  return true;
}

bool Runtime::spawn(uint32_t n, const std::function<bool(Runtime&, uint32_t)>& task) {
  ++stats_.parallelGroups;
#ifdef XACC_HAVE_TBB
  // Per task: whether it succeeded, and (k > 0) the diagnostics of a failure.
  struct Outcome {
    bool ok = false;
    std::vector<support::Diagnostic> diags;
  };
  std::unique_ptr<Outcome[]> out(new Outcome[n]);
  Shared* sh = shared_.get();
  unsigned depth = parDepth_ + 1;  // read here: this runtime's depth changes while tasks start
  tbb::task_group group;
  for (uint32_t k = 1; k < n; ++k)
    group.run([sh, depth, &task, &out, k] {
      if (sh->failed.load(std::memory_order_relaxed)) return;  // stopped: no diagnostics
      std::vector<std::unique_ptr<Shared::Worker>>& idle = sh->idle.local();
      std::unique_ptr<Shared::Worker> w;
      if (idle.empty()) {
        w = std::make_unique<Shared::Worker>(sh);
      } else {
        w = std::move(idle.back());
        idle.pop_back();
      }
      w->rt.parDepth_ = depth;
      out[k].ok = task(w->rt, k);
      w->rt.releaseFrames();
      if (out[k].ok) {
        w->diag.clear();
        // The same thread's list: a task runs start to end on one thread
        // (tasks it waited for in between took and gave back their own).
        sh->idle.local().push_back(std::move(w));
      } else {
        out[k].diags = w->diag.diagnostics();  // a failed worker is not reused
        sh->failed.store(true, std::memory_order_relaxed);
      }
    });
  ++parDepth_;
  size_t errorsBefore = diag_.errorCount();
  out[0].ok = task(*this, 0);
  if (!out[0].ok) sh->failed.store(true, std::memory_order_relaxed);
  --parDepth_;
  group.wait();
  // Task 0 reported here itself; workers report into their own engines. A
  // stopped task failed without diagnostics: the failure that stopped it is
  // reported by the group that ran it.
  bool ok = true;
  bool reported = diag_.errorCount() > errorsBefore;
  for (uint32_t k = 0; k < n; ++k) {
    ok &= out[k].ok;
    if (out[k].ok || reported || out[k].diags.empty()) continue;
    for (const support::Diagnostic& d : out[k].diags)
      diag_.report(d.severity, d.code, d.loc, d.message).notes = d.notes;
    reported = true;
  }
  return ok;
#else
  std::vector<support::DiagnosticEngine> diags(n);
  std::unique_ptr<bool[]> ok(new bool[n]());
  ++parDepth_;
  for (uint32_t k = 0; k < n; ++k) {
    if (k == 0) {
      ok[0] = task(*this, 0);
    } else {
      Runtime worker(shared_, diags[k], parDepth_);
      ok[k] = task(worker, k);
    }
    if (!ok[k]) break;  // the program fails: the tasks after it are not run
  }
  --parDepth_;
  for (uint32_t k = 0; k < n; ++k) {
    if (ok[k]) continue;
    // Task 0 reported here itself; workers report into their own engines.
    if (k > 0)
      for (const support::Diagnostic& d : diags[k].diagnostics())
        diag_.report(d.severity, d.code, d.loc, d.message).notes = d.notes;
    return false;
  }
  return true;
#endif
}

bool Runtime::runGroup(const Program& p, uint32_t pc, uint32_t n, bool raw,
                       const std::function<ir::Datum(ir::TypeKind, uint32_t)>& arg,
                       const std::function<void(const Program&, const Instr&, std::vector<ir::Datum>&)>& store) {
  struct Task {
    const Program* prog;
    const Instr* in;
    std::vector<ir::Datum> args, results;
  };
  std::vector<Task> tasks(n);
  for (uint32_t k = 0; k < n; ++k) {
    const Instr& in = p.code[pc + k];
    const Program* cp = in.prog.get();  // a raw group's callees: resolved by rawReady
    if (!cp) in.prog.set(cp = &programFor(*in.target, p.parallel));
    Task& t = tasks[k];
    t.prog = cp;
    t.in = &in;
    t.args.resize(in.opCount);
    // Tokens are fresh: members do not order each other, so a token a
    // member passes to the next is not waited for.
    const uint32_t* ops = p.operandSlots.data() + in.opBegin;
    for (uint32_t i = 0; i < in.opCount; ++i) {
      ir::TypeKind kind = i < cp->paramKinds.size() ? cp->paramKinds[i] : ir::TypeKind::Null;
      t.args[i] = kind == ir::TypeKind::Token ? ir::Datum::token() : arg(kind, ops[i]);
    }
    if (raw) t.results.resize(cp->resultSlots.size());
  }
  if (!spawn(n, [&tasks, raw](Runtime& w, uint32_t k) {
        Task& t = tasks[k];
        return raw ? w.runRaw(*t.prog, t.args.data(), nullptr, t.results.data(), t.in->node)
                   : w.run(*t.prog->graph, t.args, t.results);
      }))
    return false;
  for (Task& t : tasks) store(*t.prog, *t.in, t.results);
  return true;
}

bool Runtime::runParallelGroup(const Program& p, uint32_t pc, size_t base, uint32_t n) {
  return runGroup(
      p, pc, n, /*raw=*/false, [&](ir::TypeKind, uint32_t s) { return stack_[base + s]; },
      [&](const Program&, const Instr& in, std::vector<ir::Datum>& results) {
        for (uint32_t r = 0; r < in.nres; ++r) stack_[base + in.dst + r] = std::move(results[r]);
      });
}

bool Runtime::runRawGroup(const Program& p, uint32_t pc, void* frame) {
  // `frame` is the group's raw frame base index (the raw stack may move).
  size_t base = *static_cast<size_t*>(frame);
  // Scalars by the callee's parameter and result kinds.
  return runGroup(
      p, pc, p.code[pc - 1].jump, /*raw=*/true,
      [&](ir::TypeKind kind, uint32_t s) {
        RawSlot v = rawStack_[base + s];
        switch (kind) {
          case ir::TypeKind::Int: return ir::Datum::integer(v.i);
          case ir::TypeKind::Float: return ir::Datum::real(v.f);
          case ir::TypeKind::Bool: return ir::Datum::boolean(v.i != 0);
          default: return ir::Datum();
        }
      },
      [&](const Program& cp, const Instr& in, std::vector<ir::Datum>& results) {
        for (uint32_t r = 0; r < in.nres; ++r) {
          const ir::Datum& d = results[r];
          RawSlot& out = rawStack_[base + in.dst + r];
          switch (cp.resultKinds[r]) {
            case ir::TypeKind::Float: out.f = d.asFloat(); break;
            case ir::TypeKind::Int: out.i = d.asInt(); break;
            case ir::TypeKind::Bool: out.i = d.asBool() ? 1 : 0; break;
            default: out.i = 0; break;
          }
        }
      });
}

bool Runtime::concurrentSafe(const ir::Graph& root) {
  {
    std::lock_guard<std::mutex> lock(shared_->safeMu);
    auto it = shared_->safe.find(&root);
    if (it != shared_->safe.end()) return it->second;
  }
  // Every graph reachable through calls and regions must be free of effects
  // other than concurrent builtins and token plumbing.
  std::vector<const ir::Graph*> work{&root};
  std::unordered_set<const ir::Graph*> seen{&root};
  auto add = [&](const ir::Graph* g) {
    if (g && seen.insert(g).second) work.push_back(g);
  };
  bool safe = true;
  for (size_t k = 0; k < work.size() && safe; ++k) {
    for (const ir::Node* n : *work[k]) {
      const ir::OpInfo& op = n->op();
      if (op.is(ir::CoreOp::Call) || op.is(ir::CoreOp::Once) || op.is(ir::CoreOp::FuncRef)) {
        const ir::Attr* c = n->attr("callee");
        const ir::Graph* g = c ? module_.lookup(c->getSymbol()) : nullptr;
        if (!g && !op.is(ir::CoreOp::FuncRef)) safe = false;
        add(g);
      } else if (op.is(ir::CoreOp::BuiltinEffect)) {
        const ir::Attr* a = n->attr("name");
        const ir::Builtin* b = a ? ir::BuiltinRegistry::get().lookup(a->kind() == ir::Attr::Kind::Str ? a->getStr() : std::string()) : nullptr;
        safe = b && b->concurrent;
      } else if (op.is(ir::CoreOp::Apply)) {
        safe = !n->hasEffects();  // a token-threading closure may do anything
      } else if (op.has(ir::kEffect)) {
        safe = false;
      }
      if (!safe) break;
      for (size_t r = 0; r < n->numRegions(); ++r) add(n->region(r));
    }
  }
  std::lock_guard<std::mutex> lock(shared_->safeMu);
  if (safe)
    for (const ir::Graph* g : seen) shared_->safe[g] = true;  // their reachable sets are subsets
  else
    shared_->safe[&root] = false;
  return safe;
}

bool Runtime::run(const ir::Graph& g, const std::vector<ir::Datum>& args,
                  std::vector<ir::Datum>& results) {
  if (nesting_ >= kMaxNesting) {
    diag_.error(coreCode(CoreDiag::StackOverflow),
                g.front() ? g.front()->loc() : support::SourceLoc{},
                "stack overflow: more than " + std::to_string(kMaxNesting) +
                    " nested loop or callback levels");
    return false;
  }
  struct Nest {
    unsigned& n;
    explicit Nest(unsigned& x) : n(x) { ++n; }
    ~Nest() { --n; }
  } nest(nesting_);
  const Program& p = programFor(g);
  Program::Raw pr = p.raw.get();
  if (pr != Program::Raw::No && args.size() == p.numParams &&
      (pr == Program::Raw::Yes || rawReady(p))) {
    results.resize(p.resultSlots.size());
    return runRaw(p, args.data(), nullptr, results.data(), nullptr);
  }
  // Results land in scratch slots appended below the callee frame.
  size_t retBase = stack_.size();
  uint32_t n = uint32_t(p.resultSlots.size());
  stack_.resize(retBase + n);
  size_t depth = frames_.size();
  bool ok = pushCall(p, const_cast<ir::Datum*>(args.data()), args.size(), retBase, n, false, nullptr) &&
            execute(depth);
  if (!ok) {
    // Unwind whatever the failed run left behind.
    frames_.resize(depth);
    stack_.resize(retBase);
    return false;
  }
  results.assign(std::make_move_iterator(stack_.data() + retBase),
                 std::make_move_iterator(stack_.data() + retBase + n));
  stack_.resize(retBase);
  return true;
}

bool Runtime::call(std::string_view name, const std::vector<ir::Datum>& args,
                   std::vector<ir::Datum>& results) {
  const ir::Graph* g = module_.lookup(name);
  if (!g) {
    diag_.error(coreCode(CoreDiag::UnknownGraph), {}, "no graph named '" + std::string(name) + "'");
    return false;
  }
  return run(*g, args, results);
}

bool Runtime::rawReady(const Program& p) {
  Program::Raw known = p.raw.get();
  if (known != Program::Raw::Unknown) return known == Program::Raw::Yes;
  // Everything reachable through direct calls must be rawable; then each of
  // them is raw too (its reachable set is a subset).
  std::vector<const Program*> work{&p}, seen{&p};
  for (size_t k = 0; k < work.size(); ++k) {
    const Program* q = work[k];
    Program::Raw qr = q->raw.get();
    if (qr == Program::Raw::Yes) continue;
    if (!q->rawable || qr == Program::Raw::No) {
      p.raw.set(Program::Raw::No);
      return false;
    }
    for (const Instr& in : q->code) {
      if (in.code != Code::Call) continue;
      const Program* cp = in.prog.get();
      if (!cp) in.prog.set(cp = &programFor(*in.target, q->parallel));
      if (in.opCount != cp->numParams || in.nres != cp->resultSlots.size()) {
        p.raw.set(Program::Raw::No);
        return false;
      }
      if (std::find(seen.begin(), seen.end(), cp) == seen.end()) {
        seen.push_back(cp);
        work.push_back(cp);
      }
    }
  }
  for (const Program* q : seen) q->raw.set(Program::Raw::Yes);
  return true;
}

// The unboxed interpreter: the same instructions as execute() over 8-byte
// slots (ints, floats, bools as 0/1, null and tokens as 0), on its own
// explicit frame stack. Only rawReady programs get here, so there are no
// heap values, no generic rules and no re-entry.
bool Runtime::runRaw(const Program& entry0, const ir::Datum* args, const uint32_t* ops,
                     ir::Datum* out, const ir::Node* site) {
  // This runtime's depth in the task tree does not change while this loop
  // runs (tasks run in nested calls), so either every group in it spawns or
  // none does: then it runs the sequential form, with no ParCall to step over.
  const Program* ep = &entry0;
  if (entry0.parallel && !spawnsHere()) {
    const Program& s = seqOf(entry0);
    if (&s != ep && (s.raw.get() == Program::Raw::Yes || rawReady(s))) ep = &s;
  }
  const Program& entry = *ep;
  auto need = [&](size_t n) {
    if (rawStack_.size() < n) rawStack_.resize(std::max(n, rawStack_.size() * 2 + 1024));
  };
  size_t frames0 = rawFrames_.size();
  // A leaf (no calls; closures that builtins run per element) runs on a few
  // slots of the C++ stack, without touching the raw frame stack.
  RawSlot local[32];
  bool leafMode = entry.leaf && entry.numSlots <= 32;
  size_t base = 0;
  RawSlot* S = local;
  if (!leafMode) {
    base = rawFrames_.empty() ? 0 : rawFrames_.back().base + rawFrames_.back().prog->numSlots;
    need(base + entry.numSlots);
    S = rawStack_.data();
  }
  for (uint32_t i = 0; i < entry.numParams; ++i) {
    const ir::Datum& d = ops ? args[ops[i]] : args[i];
    RawSlot& r = S[base + i];
    switch (entry.paramKinds[i]) {
      case ir::TypeKind::Float: r.f = d.asFloat(); break;
      case ir::TypeKind::Bool: r.i = d.asBool() ? 1 : 0; break;
      case ir::TypeKind::Int: r.i = d.asInt(); break;
      default: r.i = 0; break;
    }
  }
  if (!leafMode) rawFrames_.push_back(RawFrame{&entry, nullptr, base, 0, site});
  const Program* p = &entry;
  const Instr* code = p->code.data();
  const Instr* ip = code;
  const uint32_t* opnd = p->operandSlots.data();
  RawSlot* F = S + base;
  size_t top = base + entry.numSlots;
  uint64_t calls = 0, tails = 0;
  auto enter = [&](const Program* cp) {
    p = cp;
    code = ip = cp->code.data();
    opnd = cp->operandSlots.data();
  };
  for (;;) {
    const Instr& in = *ip++;
    RawSlot* D = F + in.dst;
#define XACC_I1 (in.hasImm ? in.imm : F[in.b].i)
#define XACC_BR(OP)                    \
  {                                    \
    bool c = F[in.a].i OP XACC_I1;     \
    D->i = c;                          \
    if (c) ++ip;                       \
    else ip = code + in.jump;          \
    break;                             \
  }
    switch (in.code) {
      case Code::Const: D->i = in.imm; break;
      case Code::AddI: D->i = int64_t(uint64_t(F[in.a].i) + uint64_t(XACC_I1)); break;
      case Code::SubI: D->i = int64_t(uint64_t(F[in.a].i) - uint64_t(XACC_I1)); break;
      case Code::MulI: D->i = int64_t(uint64_t(F[in.a].i) * uint64_t(XACC_I1)); break;
      case Code::DivI:
      case Code::RemI: {
        int64_t q = XACC_I1;
        if (q == 0) {
          stats_.calls += calls;
          return failRaw(*in.node, coreCode(CoreDiag::IntegerDivisionByZero),
                         "integer division by zero", frames0, leafMode ? &entry : nullptr, site);
        }
        D->i = intDivRem(in.code == Code::DivI, F[in.a].i, q);
        break;
      }
      case Code::LtI: D->i = F[in.a].i < XACC_I1; break;
      case Code::LeI: D->i = F[in.a].i <= XACC_I1; break;
      case Code::GtI: D->i = F[in.a].i > XACC_I1; break;
      case Code::GeI: D->i = F[in.a].i >= XACC_I1; break;
      case Code::EqI: D->i = F[in.a].i == XACC_I1; break;
      case Code::NeI: D->i = F[in.a].i != XACC_I1; break;
      case Code::BrLtI: XACC_BR(<)
      case Code::BrLeI: XACC_BR(<=)
      case Code::BrGtI: XACC_BR(>)
      case Code::BrGeI: XACC_BR(>=)
      case Code::BrEqI: XACC_BR(==)
      case Code::BrNeI: XACC_BR(!=)
      case Code::AddF: D->f = F[in.a].f + F[in.b].f; break;
      case Code::SubF: D->f = F[in.a].f - F[in.b].f; break;
      case Code::MulF: D->f = F[in.a].f * F[in.b].f; break;
      case Code::DivF: D->f = F[in.a].f / F[in.b].f; break;
      case Code::LtF: D->i = F[in.a].f < F[in.b].f; break;
      case Code::LeF: D->i = F[in.a].f <= F[in.b].f; break;
      case Code::GtF: D->i = F[in.a].f > F[in.b].f; break;
      case Code::GeF: D->i = F[in.a].f >= F[in.b].f; break;
      case Code::Not: D->i = !F[in.a].i; break;
      case Code::And: D->i = F[in.a].i && F[in.b].i; break;
      case Code::Or: D->i = F[in.a].i || F[in.b].i; break;
      case Code::Select: *D = F[in.a].i ? F[in.b] : F[opnd[in.opBegin + 2]]; break;
      case Code::Branch: if (!F[in.a].i) ip = code + in.jump; break;
      case Code::Move: *D = F[in.a]; break;
      case Code::Jump: ip = code + in.jump; break;
      case Code::Call: {
        const Program* cp = in.prog.get();  // resolved by rawReady
        const uint32_t* o = opnd + in.opBegin;
        ++calls;
        if (in.tail) {
          // Replace the frame: park the arguments, then copy them down.
          RawSlot tmp[16];
          for (uint32_t i = 0; i < in.opCount; ++i) tmp[i] = F[o[i]];
          size_t b = rawFrames_.back().base;
          need(b + cp->numSlots);
          S = rawStack_.data();
          F = S + b;
          for (uint32_t i = 0; i < in.opCount; ++i) F[i] = tmp[i];
          top = b + cp->numSlots;
          rawFrames_.back().prog = cp;
          ++tails;
          enter(cp);
          break;
        }
        size_t limit = maxFrames_ > frames_.size() ? maxFrames_ - frames_.size() : 0;
        if (rawFrames_.size() - frames0 >= limit) {
          stats_.calls += calls;
          return failRaw(*in.node, coreCode(CoreDiag::StackOverflow),
                         "stack overflow: more than " + std::to_string(maxFrames_) +
                             " nested calls",
                         frames0, nullptr, nullptr);
        }
        if (bool overflow = false; checkpoint(rawFrames_.size()) && stopSlow(overflow)) {
          stats_.calls += calls;
          if (overflow)
            return failRaw(*in.node, coreCode(CoreDiag::StackOverflow),
                           "stack overflow: more than " + std::to_string(maxFrames_) +
                               " nested calls (all parallel tasks together)",
                           frames0, nullptr, nullptr);
          rawFrames_.resize(frames0);
          return false;
        }
        size_t nb = top;
        size_t ret = size_t(F - S) + in.dst;
        need(nb + cp->numSlots);
        S = rawStack_.data();
        F = S + rawFrames_.back().base;
        RawSlot* N = S + nb;
        for (uint32_t i = 0; i < in.opCount; ++i) N[i] = F[o[i]];
        rawFrames_.back().ip = ip;
        rawFrames_.push_back(RawFrame{cp, nullptr, nb, ret, in.node});
        F = N;
        top = nb + cp->numSlots;
        enter(cp);
        break;
      }
      case Code::Ret: {
        const uint32_t* rs = p->resultSlots.data();
        size_t n = p->resultSlots.size();
        if (leafMode || rawFrames_.size() == frames0 + 1) {
          for (size_t i = 0; i < n; ++i) {
            RawSlot v = F[rs[i]];
            switch (p->resultKinds[i]) {
              case ir::TypeKind::Int: out[i] = ir::Datum::integer(v.i); break;
              case ir::TypeKind::Float: out[i] = ir::Datum::real(v.f); break;
              case ir::TypeKind::Bool: out[i] = ir::Datum::boolean(v.i != 0); break;
              case ir::TypeKind::Token: out[i] = ir::Datum::token(); break;
              default: out[i] = ir::Datum(); break;
            }
          }
          if (!leafMode) rawFrames_.pop_back();
          stats_.calls += calls;
          stats_.tailCalls += tails;
          return true;
        }
        size_t ret = rawFrames_.back().ret;
        for (size_t i = 0; i < n; ++i) S[ret + i] = F[rs[i]];
        top = rawFrames_.back().base;
        rawFrames_.pop_back();
        const RawFrame& c = rawFrames_.back();
        p = c.prog;
        code = p->code.data();
        opnd = p->operandSlots.data();
        ip = static_cast<const Instr*>(c.ip);
        F = S + c.base;
        break;
      }
      case Code::ParCall: {
        // Parallel scheduler, shallow enough: the group's calls run as tasks
        // (this frame's slots are read and written by index: the raw stack
        // may move while they run); otherwise they run in order.
        if (!spawnsHere()) break;
        size_t fb = rawFrames_.back().base;
        uint32_t pc = uint32_t(ip - code);
        if (!runRawGroup(*p, pc, &fb)) {
          stats_.calls += calls;
          stats_.tailCalls += tails;
          rawFrames_.resize(frames0);
          return false;
        }
        S = rawStack_.data();
        F = S + fb;
        ip = code + pc + in.jump;
        break;
      }
      default:
        // Not reachable for rawReady programs.
        return failRaw(*in.node, coreCode(CoreDiag::NoExecutionRule),
                       "internal: no unboxed rule for '" + in.node->opName() + "'", frames0,
                       leafMode ? &entry : nullptr, site);
    }
#undef XACC_BR
#undef XACC_I1
  }
}

// The interpreter loop. The current frame's program, code pointer and slot
// base live in locals; they are reloaded from frames_.back() whenever a frame
// is pushed or popped, and the slot base (`R`) also after anything that may
// grow the slot array (calls, re-entrant rules such as builtins running
// closures). Every program ends with Ret, so the loop needs no end check.
bool Runtime::execute(size_t baseDepth) {
  std::vector<ir::Datum> args, results;
  if (frames_.size() <= baseDepth) return true;
  Frame* f;
  const Program* p;
  const Instr* code;
  const Instr* ip;
  const uint32_t* opnd;
  ir::Datum* R;
  auto load = [&] {
    f = &frames_.back();
    p = f->prog;
    code = p->code.data();
    ip = code + f->pc;
    opnd = p->operandSlots.data();
    R = stack_.data() + f->base;
  };
  // After C++ re-entry (frames_ and stack_ may have been reallocated).
  auto reload = [&] {
    f = &frames_.back();
    R = stack_.data() + f->base;
  };
  // An op's rule, or a builtin resolved at compile time (no registry lookup).
  auto generic = [&](const Instr& in) {
    const ir::Node& n = *in.node;
    f->pc = uint32_t(ip - code);
    const ir::Builtin* b = in.builtin;
    if (!b && !n.op().interp)
      return fail(n, coreCode(CoreDiag::NoExecutionRule),
                  "no runtime rule for '" + n.opName() + "'");
    bool effect = b && n.op().is(ir::CoreOp::BuiltinEffect);
    args.clear();
    const uint32_t* ops = opnd + in.opBegin;
    for (uint32_t i = effect ? 1 : 0; i < in.opCount; ++i) args.push_back(R[ops[i]]);
    results.clear();
    if (effect) results.push_back(ir::Datum::token());
    // The rule may re-enter the runtime (builtins applying closures), which
    // can reallocate the slots and frames: reload afterwards.
    uint32_t dstSlot = in.dst;
    if (!(b ? b->fn(*ctx_, n, args, results) : n.op().interp(*ctx_, n, args, results))) return false;
    reload();
    if (results.size() != n.numResults())
      return fail(n, coreCode(CoreDiag::WrongResultCount),
                  "'" + n.opName() + "' produced " + std::to_string(results.size()) +
                      " values, expected " + std::to_string(n.numResults()));
    for (size_t r = 0; r < results.size(); ++r) R[dstSlot + r] = std::move(results[r]);
    return true;
  };
  load();
  for (;;) {
    const Instr& in = *ip++;
    ir::Datum* dst = R + in.dst;
    // Second integer operand: an immediate folded from a constant, or a slot.
#define XACC_I1 (in.hasImm ? in.imm : R[in.b].asInt())
    switch (in.code) {
      case Code::Const: *dst = in.constant; break;
      case Code::AddI: dst->setInt(int64_t(uint64_t(R[in.a].asInt()) + uint64_t(XACC_I1))); break;
      case Code::SubI: dst->setInt(int64_t(uint64_t(R[in.a].asInt()) - uint64_t(XACC_I1))); break;
      case Code::MulI: dst->setInt(int64_t(uint64_t(R[in.a].asInt()) * uint64_t(XACC_I1))); break;
      case Code::DivI:
      case Code::RemI: {
        int64_t p0 = R[in.a].asInt(), q = XACC_I1;
        if (q == 0) {
          f->pc = uint32_t(ip - code);
          return fail(*in.node, coreCode(CoreDiag::IntegerDivisionByZero),
                      "integer division by zero");
        }
        dst->setInt(intDivRem(in.code == Code::DivI, p0, q));
        break;
      }
      case Code::LtI: dst->setBool(R[in.a].asInt() < XACC_I1); break;
      case Code::LeI: dst->setBool(R[in.a].asInt() <= XACC_I1); break;
      case Code::GtI: dst->setBool(R[in.a].asInt() > XACC_I1); break;
      case Code::GeI: dst->setBool(R[in.a].asInt() >= XACC_I1); break;
      case Code::EqI: dst->setBool(R[in.a].asInt() == XACC_I1); break;
      case Code::NeI: dst->setBool(R[in.a].asInt() != XACC_I1); break;
#define XACC_BR(OP)                                  \
  {                                                  \
    bool c = R[in.a].asInt() OP XACC_I1;             \
    dst->setBool(c);                                 \
    if (c) ++ip;                                     \
    else ip = code + in.jump;                        \
    break;                                           \
  }
      case Code::BrLtI: XACC_BR(<)
      case Code::BrLeI: XACC_BR(<=)
      case Code::BrGtI: XACC_BR(>)
      case Code::BrGeI: XACC_BR(>=)
      case Code::BrEqI: XACC_BR(==)
      case Code::BrNeI: XACC_BR(!=)
#undef XACC_BR
#undef XACC_I1
      case Code::AddF: dst->setFloat(R[in.a].asFloat() + R[in.b].asFloat()); break;
      case Code::SubF: dst->setFloat(R[in.a].asFloat() - R[in.b].asFloat()); break;
      case Code::MulF: dst->setFloat(R[in.a].asFloat() * R[in.b].asFloat()); break;
      case Code::DivF: dst->setFloat(R[in.a].asFloat() / R[in.b].asFloat()); break;
      case Code::LtF: dst->setBool(R[in.a].asFloat() < R[in.b].asFloat()); break;
      case Code::LeF: dst->setBool(R[in.a].asFloat() <= R[in.b].asFloat()); break;
      case Code::GtF: dst->setBool(R[in.a].asFloat() > R[in.b].asFloat()); break;
      case Code::GeF: dst->setBool(R[in.a].asFloat() >= R[in.b].asFloat()); break;
      case Code::Not: dst->setBool(!R[in.a].asBool()); break;
      case Code::And: dst->setBool(R[in.a].asBool() && R[in.b].asBool()); break;
      case Code::Or: dst->setBool(R[in.a].asBool() || R[in.b].asBool()); break;
      case Code::Select: *dst = R[in.a].asBool() ? R[in.b] : R[opnd[in.opBegin + 2]]; break;
      case Code::Ret: {
        // Move the results into the caller's slots and drop the frame.
        size_t base = f->base;
        ir::Datum* out = stack_.data() + f->retBase;
        const uint32_t* rs = p->resultSlots.data();
        if (p->distinctResults)
          for (uint32_t i = 0, n = f->retCount; i < n; ++i) out[i] = std::move(R[rs[i]]);
        else
          for (uint32_t i = 0, n = f->retCount; i < n; ++i) out[i] = R[rs[i]];
        frames_.pop_back();
        if (p->scalarOnly) stack_.shrinkScalars(base);
        else stack_.shrink(base);
        if (frames_.size() <= baseDepth) return true;
        load();
        break;
      }
      case Code::Call: {
        const Program* cp = in.prog.get();
        if (!cp) in.prog.set(cp = &programFor(*in.target, p->parallel));
        Program::Raw cr = cp->raw.get();
        if (cr != Program::Raw::No && in.opCount == cp->numParams &&
            (cr == Program::Raw::Yes || rawReady(*cp))) {
          // Scalar code (and everything it calls) runs unboxed; it cannot
          // re-enter, so our slots stay where they are.
          f->pc = uint32_t(ip - code);
          if (!runRaw(*cp, R, opnd + in.opBegin, dst, in.node)) return false;
          break;
        }
        if (!in.tail && in.opCount == cp->numParams && frames_.size() < maxFrames_ &&
            !checkpoint(frames_.size())) {
          // Fast path: the callee's slots are constructed in place, its
          // parameters copied straight from our slots.
          size_t nb = stack_.size();
          stack_.reserveMore(cp->numSlots);
          R = stack_.data() + f->base;
          const uint32_t* ops = opnd + in.opBegin;
          ir::Datum* slots = stack_.claimReserved(cp->numSlots);
          for (uint32_t i = 0; i < in.opCount; ++i) slots[i] = R[ops[i]];
          f->pc = uint32_t(ip - code);
          frames_.push_back(Frame{cp, 0, nb, f->base + in.dst, in.nres, in.node});
          ++stats_.calls;
          if (frames_.size() > stats_.maxDepth) stats_.maxDepth = frames_.size();
          load();
          break;
        }
        args.clear();
        const uint32_t* ops = opnd + in.opBegin;
        if (in.tail) {
          // The frame dies: move its values out (copy a slot passed again
          // later), so shared arrays see no refcount traffic per iteration.
          for (uint32_t i = 0; i < in.opCount; ++i) {
            bool again = std::find(ops + i + 1, ops + in.opCount, ops[i]) != ops + in.opCount;
            args.push_back(again ? R[ops[i]] : std::move(R[ops[i]]));
          }
        } else {
          for (uint32_t i = 0; i < in.opCount; ++i) args.push_back(R[ops[i]]);
        }
        f->pc = uint32_t(ip - code);
        if (!pushCall(*cp, args.data(), args.size(), f->base + in.dst, in.nres, in.tail, in.node,
                      /*movable=*/true))
          return false;
        load();
        break;
      }
      case Code::ParCall:
        // Sequential scheduler or deep enough: fall through to the calls.
        if (spawnsHere()) {
          uint32_t pc = uint32_t(ip - code);
          f->pc = pc;
          if (!runParallelGroup(*p, pc, f->base, in.jump)) return false;
          reload();
          ip = code + pc + in.jump;  // skip the group's calls
        }
        break;
      case Code::Branch:
        if (R[in.a].kind() != ir::DKind::Bool) {
          f->pc = uint32_t(ip - code);
          return fail(*in.node, coreCode(CoreDiag::OperandKindMismatch),
                      "condition of 'ctrl.if' is not a bool");
        }
        if (!R[in.a].asBool()) ip = code + in.jump;
        break;
      case Code::Move: *dst = R[in.a]; break;
      case Code::Jump: ip = code + in.jump; break;
      case Code::Apply: {
        const ir::Datum& fn = R[in.a];
        f->pc = uint32_t(ip - code);
        if (fn.kind() != ir::DKind::Func)
          return fail(*in.node, coreCode(CoreDiag::NotAFunction), "called value is not a function");
        args = fn.funcCaptures();
        const uint32_t* ops = opnd + in.opBegin;
        for (uint32_t i = 1; i < in.opCount; ++i) args.push_back(R[ops[i]]);
        const Program& cp = programFor(*fn.funcGraph());
        if (!pushCall(cp, args.data(), args.size(), f->base + in.dst, in.nres, in.tail, in.node,
                      /*movable=*/true))
          return false;
        load();
        break;
      }
      case Code::FuncRef: {
        const ir::Graph* g = in.target;
        if (!g) g = module_.lookup(in.node->attr("callee")->getSymbol());
        if (!g) {
          f->pc = uint32_t(ip - code);
          return fail(*in.node, coreCode(CoreDiag::UnknownGraph),
                      "unknown graph @" + in.node->attr("callee")->getSymbol());
        }
        std::vector<ir::Datum> caps;
        const uint32_t* ops = opnd + in.opBegin;
        caps.reserve(in.opCount);
        for (uint32_t i = 0; i < in.opCount; ++i) caps.push_back(R[ops[i]]);
        *dst = ir::Datum::func(g, std::move(caps));
        break;
      }
      case Code::Loop: {
        // Loops run their regions to completion on nested frames (loops do not
        // recurse by themselves, so this uses bounded C++ stack).
        f->pc = uint32_t(ip - code);
        if (nesting_ + 1 >= kMaxNesting)
          return fail(*in.node, coreCode(CoreDiag::StackOverflow),
                      "stack overflow: more than " + std::to_string(kMaxNesting) +
                          " nested loop levels");
        std::vector<ir::Datum> vals;
        const uint32_t* ops = opnd + in.opBegin;
        for (uint32_t i = 0; i < in.opCount; ++i) vals.push_back(R[ops[i]]);
        const ir::Node* node = in.node;
        uint32_t dstSlot = in.dst, nres = in.nres;
        for (;;) {
          std::vector<ir::Datum> c, next;
          if (!run(*node->region(0), vals, c)) return false;
          if (c.empty() || c[0].kind() != ir::DKind::Bool) {
            reload();
            return fail(*node, coreCode(CoreDiag::OperandKindMismatch),
                        "loop condition is not a bool");
          }
          if (!c[0].asBool()) break;
          if (!run(*node->region(1), vals, next)) return false;
          vals = std::move(next);
        }
        reload();
        for (uint32_t i = 0; i < nres; ++i) R[dstSlot + i] = std::move(vals[i]);
        break;
      }
      case Code::ListGet: {
        const ir::Datum& l = R[in.a];
        const ir::Datum& x = R[in.b];
        if (l.kind() == ir::DKind::List && x.kind() == ir::DKind::Int) {
          const ir::ListObject* items = ir::listObj(l);
          int64_t i = x.asInt();
          switch (items->form()) {  // Note [Compact arrays]
            case ir::ListObject::Rep::Int:
              if (i >= 0 && uint64_t(i) < items->ints.size()) {
                dst->setInt(items->ints[size_t(i)]);
                continue;
              }
              break;
            case ir::ListObject::Rep::Float:
              if (i >= 0 && uint64_t(i) < items->reals.size()) {
                dst->setFloat(items->reals[size_t(i)]);
                continue;
              }
              break;
            case ir::ListObject::Rep::Boxed:
              if (i >= 0 && uint64_t(i) < items->items.size()) {
                *dst = items->items[size_t(i)];
                continue;
              }
              break;
          }
        }
        if (!generic(in)) return false;
        break;
      }
      case Code::Len: {
        const ir::Datum& x = R[in.a];
        if (x.kind() == ir::DKind::List) dst->setInt(int64_t(ir::listObj(x)->size()));
        else if (!generic(in)) return false;
        break;
      }
      case Code::Builtin:
      case Code::Generic:
        if (!generic(in)) return false;
        break;
    }
  }
}

bool hasParallelism(const ir::Module& module, std::string_view entry) {
  // Walk the graphs reachable from `entry` (calls, closures, regions) with a
  // parallel runtime's view of them: a compiled group of independent calls,
  // or a higher-order builtin over a function that may run concurrently.
  static const std::unordered_set<std::string> kChunked = {
      "map", "foreach", "filter", "para::unordered_reduce", "para::unordered_foreach"};
  const ir::Graph* root = module.lookup(entry);
  if (!root) return false;
  support::DiagnosticEngine diag;
  RuntimeOptions o;
  o.scheduler = Scheduler::Parallel;
  o.threads = 0;  // no global_control: nothing runs
  Runtime rt(diag, module, o);
  std::vector<const ir::Graph*> work{root};
  std::unordered_set<const ir::Graph*> seen{root};
  for (size_t k = 0; k < work.size(); ++k) {
    const ir::Graph& g = *work[k];
    if (!g.parentNode() && rt.programFor(g).hasParCall) return true;
    for (const ir::Node* n : g) {
      if (n->op().is(ir::CoreOp::Builtin) || n->op().is(ir::CoreOp::BuiltinEffect)) {
        const ir::Attr* a = n->attr("name");
        if (a && a->kind() == ir::Attr::Kind::Str && kChunked.count(a->getStr())) return true;
      }
      const ir::Attr* c = n->attr("callee");
      const ir::Graph* callee = c && c->kind() == ir::Attr::Kind::Symbol ? module.lookup(c->getSymbol()) : nullptr;
      if (callee && seen.insert(callee).second) work.push_back(callee);
      for (size_t r = 0; r < n->numRegions(); ++r)
        if (seen.insert(n->region(r)).second) work.push_back(n->region(r));
    }
  }
  return false;
}

}  // namespace xacc::runtime
