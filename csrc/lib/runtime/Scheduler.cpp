// The parallel scheduler: groups of independent calls and chunks of builtins
// run as tasks on worker runtimes (TBB; in order without it), the shared frame
// budget and stop flag, and which graphs may run concurrently.
#include "RuntimeImpl.h"

#include <unordered_set>

#ifdef XACC_HAVE_TBB
#include <tbb/task_group.h>
#endif
#include "xacc/ir/Builtins.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::runtime {

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
