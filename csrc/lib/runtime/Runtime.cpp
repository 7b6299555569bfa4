// The runtime's execution loop. Frames live on an explicit stack; slot storage
// is one growable datum array addressed by index (never by pointer, since it
// reallocates). See Runtime.h.
#include "xacc/runtime/Runtime.h"

#include <cstdio>
#include <mutex>

#include "Program.h"
#ifdef XACC_HAVE_TBB
#include <tbb/task_group.h>
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
  std::unordered_map<std::string, std::vector<ir::Datum>> once;
  std::mutex onceMu;  // held while a global is computed, so it is computed once
  std::mutex outMu;
  std::function<void(std::string_view)> out;
  Shared(const ir::Module& m, RuntimeOptions o) : module(m), options(o) {}
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
      if (site) return fail(*site, "E0415", "called value is not a function");
      return false;
    }
    if (site && rt_.nesting_ + 1 >= Runtime::kMaxNesting)
      return fail(*site, "E0417", "stack overflow: more than " +
                                      std::to_string(Runtime::kMaxNesting) + " nested callback levels");
    std::vector<ir::Datum> all = fn.funcCaptures();
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
  static std::recursive_mutex& onceLock() {
    // Recursive: a global's initialiser may read other globals.
    static std::recursive_mutex m;
    return m;
  }

private:
  Runtime& rt_;
};

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
      ctx_(std::make_unique<RuntimeContext>(*this, diag, module)) {
  setOutput(nullptr);
}

Runtime::Runtime(std::shared_ptr<Shared> shared, support::DiagnosticEngine& diag, unsigned parDepth)
    : diag_(diag),
      module_(shared->module),
      shared_(std::move(shared)),
      ctx_(std::make_unique<RuntimeContext>(*this, diag, shared_->module)),
      parDepth_(parDepth) {
  Shared* sh = shared_.get();
  ctx_->setOutput([sh](std::string_view s) {
    std::lock_guard<std::mutex> lock(sh->outMu);
    sh->out(s);
  });
}

Runtime::~Runtime() = default;

void Runtime::setOutput(std::function<void(std::string_view)> out) {
  if (!out) out = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); };
  shared_->out = std::move(out);
  Shared* sh = shared_.get();
  ctx_->setOutput([sh](std::string_view s) {
    std::lock_guard<std::mutex> lock(sh->outMu);
    sh->out(s);
  });
}

const Program& Runtime::programFor(const ir::Graph& g) {
  // Graphs cache their program through a side table keyed by address; the
  // module outlives the runtime.
  std::lock_guard<std::mutex> lock(shared_->mu);
  auto it = shared_->programs.find(&g);
  if (it != shared_->programs.end()) return *it->second;
  auto p = compileProgram(g, shared_->options.scheduler == Scheduler::Parallel);
  const Program* raw = p.get();
  shared_->programs.emplace(&g, std::move(p));
  return *raw;
}

bool Runtime::fail(const ir::Node& n, std::string code, std::string message) {
  auto& d = diag_.error(std::move(code), n.loc(), std::move(message));
  // A short call trace, innermost first.
  size_t shown = 0;
  for (size_t i = frames_.size(); i-- > 0 && shown < 8;) {
    const ir::Node* site = frames_[i].site;
    if (site && site->loc().valid()) {
      d.notes.push_back({support::Severity::Note, "", site->loc(),
                         "'" + frames_[i].prog->graph->name() + "' called from here", {}, {}});
      ++shown;
    }
  }
  return false;
}

bool Runtime::pushCall(const Program& p, const ir::Datum* args, size_t nargs, size_t retBase,
                       uint32_t retCount, bool tail, const ir::Node* site) {
  if (nargs != p.numParams) {
    if (site) return fail(*site, "E0411", "'" + p.graph->name() + "' expects " +
                                              std::to_string(p.numParams) + " arguments, got " +
                                              std::to_string(nargs));
    return false;
  }
  ++stats_.calls;
  if (tail) {
    // Replace the current frame: its caller receives our results directly.
    ++stats_.tailCalls;
    Frame& f = frames_.back();
    std::vector<ir::Datum> tmp(args, args + nargs);
    stack_.resize(f.base);
    stack_.resize(f.base + p.numSlots);
    for (size_t i = 0; i < nargs; ++i) stack_[f.base + i] = std::move(tmp[i]);
    f.prog = &p;
    f.pc = 0;
    return true;
  }
  if (frames_.size() >= maxFrames_) {
    if (site) return fail(*site, "E0417", "stack overflow: more than " + std::to_string(maxFrames_) +
                                              " nested calls");
    return false;
  }
  size_t base = stack_.size();
  stack_.resize(base + p.numSlots);
  for (size_t i = 0; i < nargs; ++i) stack_[base + i] = args[i];
  frames_.push_back(Frame{&p, 0, base, retBase, retCount, site});
  if (frames_.size() > stats_.maxDepth) stats_.maxDepth = frames_.size();
  return true;
}

bool Runtime::runParallelGroup(const Program& p, uint32_t pc, size_t base, uint32_t n) {
  struct Task {
    const Program* prog;
    const Instr* in;
    std::vector<ir::Datum> args, results;
    support::DiagnosticEngine diag;
    bool ok = false;
  };
  std::vector<Task> tasks(n);
  for (uint32_t k = 0; k < n; ++k) {
    const Instr& in = p.code[pc + k];
    if (!in.prog) in.prog = &programFor(*in.target);
    tasks[k].prog = in.prog;
    tasks[k].in = &in;
    const uint32_t* ops = p.operandSlots.data() + in.opBegin;
    for (uint32_t i = 0; i < in.opCount; ++i) tasks[k].args.push_back(stack_[base + ops[i]]);
  }
  ++stats_.parallelGroups;
#ifdef XACC_HAVE_TBB
  tbb::task_group group;
  for (uint32_t k = 1; k < n; ++k) {
    Task* t = &tasks[k];
    group.run([this, t] {
      Runtime worker(shared_, t->diag, parDepth_ + 1);
      t->ok = worker.run(*t->prog->graph, t->args, t->results);
    });
  }
  ++parDepth_;
  tasks[0].ok = run(*tasks[0].prog->graph, tasks[0].args, tasks[0].results);
  --parDepth_;
  group.wait();
#else
  for (Task& t : tasks) t.ok = run(*t.prog->graph, t.args, t.results);
#endif
  bool ok = true;
  for (Task& t : tasks) {
    if (!t.ok) {
      // Workers report into their own engines; surface the first failure here.
      for (const support::Diagnostic& d : t.diag.diagnostics()) diag_.report(d.severity, d.code, d.loc, d.message).notes = d.notes;
      ok = false;
      break;
    }
    for (uint32_t r = 0; r < t.in->nres; ++r) stack_[base + t.in->dst + r] = std::move(t.results[r]);
  }
  return ok;
}

bool Runtime::run(const ir::Graph& g, const std::vector<ir::Datum>& args,
                  std::vector<ir::Datum>& results) {
  if (nesting_ >= kMaxNesting) {
    diag_.error("E0417", g.front() ? g.front()->loc() : support::SourceLoc{},
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
  // Results land in scratch slots appended below the callee frame.
  size_t retBase = stack_.size();
  uint32_t n = uint32_t(p.resultSlots.size());
  stack_.resize(retBase + n);
  size_t depth = frames_.size();
  bool ok = pushCall(p, args.data(), args.size(), retBase, n, false, nullptr) && execute(depth);
  if (!ok) {
    // Unwind whatever the failed run left behind.
    frames_.resize(depth);
    stack_.resize(retBase);
    return false;
  }
  results.assign(std::make_move_iterator(stack_.begin() + retBase),
                 std::make_move_iterator(stack_.begin() + retBase + n));
  stack_.resize(retBase);
  return true;
}

bool Runtime::call(std::string_view name, const std::vector<ir::Datum>& args,
                   std::vector<ir::Datum>& results) {
  const ir::Graph* g = module_.lookup(name);
  if (!g) {
    diag_.error("E0409", {}, "no graph named '" + std::string(name) + "'");
    return false;
  }
  return run(*g, args, results);
}

bool Runtime::execute(size_t baseDepth) {
  std::vector<ir::Datum> args, results;
  while (frames_.size() > baseDepth) {
    Frame* f = &frames_.back();
    const Program& p = *f->prog;
    if (f->pc == p.code.size()) {
      // Return: move results into the caller's slots and drop the frame.
      size_t base = f->base, retBase = f->retBase;
      for (uint32_t i = 0; i < f->retCount; ++i) {
        ir::Datum v = stack_[base + p.resultSlots[i]];
        stack_[retBase + i] = std::move(v);
      }
      frames_.pop_back();
      stack_.resize(base);
      continue;
    }
    const Instr& in = p.code[f->pc++];
    size_t base = f->base;
    const uint32_t* ops = p.operandSlots.data() + in.opBegin;
    auto S = [&](uint32_t i) -> ir::Datum& { return stack_[base + ops[i]]; };
    // Second integer operand: an immediate folded from a constant, or a slot.
    auto I1 = [&]() -> int64_t { return in.hasImm ? in.imm : S(1).asInt(); };
    ir::Datum* dst = &stack_[base + in.dst];
    switch (in.code) {
      case Code::Const: *dst = in.constant; break;
      case Code::AddI: dst->setInt(int64_t(uint64_t(S(0).asInt()) + uint64_t(I1()))); break;
      case Code::SubI: dst->setInt(int64_t(uint64_t(S(0).asInt()) - uint64_t(I1()))); break;
      case Code::MulI: dst->setInt(int64_t(uint64_t(S(0).asInt()) * uint64_t(I1()))); break;
      case Code::LtI: dst->setBool(S(0).asInt() < I1()); break;
      case Code::LeI: dst->setBool(S(0).asInt() <= I1()); break;
      case Code::GtI: dst->setBool(S(0).asInt() > I1()); break;
      case Code::GeI: dst->setBool(S(0).asInt() >= I1()); break;
      case Code::EqI: dst->setBool(S(0).asInt() == I1()); break;
      case Code::NeI: dst->setBool(S(0).asInt() != I1()); break;
      case Code::AddF: dst->setFloat(S(0).asFloat() + S(1).asFloat()); break;
      case Code::SubF: dst->setFloat(S(0).asFloat() - S(1).asFloat()); break;
      case Code::MulF: dst->setFloat(S(0).asFloat() * S(1).asFloat()); break;
      case Code::DivF: dst->setFloat(S(0).asFloat() / S(1).asFloat()); break;
      case Code::LtF: dst->setBool(S(0).asFloat() < S(1).asFloat()); break;
      case Code::LeF: dst->setBool(S(0).asFloat() <= S(1).asFloat()); break;
      case Code::GtF: dst->setBool(S(0).asFloat() > S(1).asFloat()); break;
      case Code::GeF: dst->setBool(S(0).asFloat() >= S(1).asFloat()); break;
      case Code::Not: dst->setBool(!S(0).asBool()); break;
      case Code::And: dst->setBool(S(0).asBool() && S(1).asBool()); break;
      case Code::Or: dst->setBool(S(0).asBool() || S(1).asBool()); break;
      case Code::Select: *dst = S(0).asBool() ? S(1) : S(2); break;
      case Code::Call: {
        if (!in.prog) in.prog = &programFor(*in.target);
        const Program& cp = *in.prog;
        if (!in.tail && in.opCount == cp.numParams && frames_.size() < maxFrames_) {
          // Fast path: arguments go straight from our slots into the callee's.
          size_t nb = stack_.size();
          stack_.resize(nb + cp.numSlots);
          for (uint32_t i = 0; i < in.opCount; ++i) stack_[nb + i] = stack_[base + ops[i]];
          frames_.push_back(Frame{&cp, 0, nb, base + in.dst, in.nres, in.node});
          ++stats_.calls;
          if (frames_.size() > stats_.maxDepth) stats_.maxDepth = frames_.size();
          break;
        }
        args.clear();
        for (uint32_t i = 0; i < in.opCount; ++i) args.push_back(S(i));
        if (!pushCall(cp, args.data(), args.size(), base + in.dst, in.nres, in.tail, in.node))
          return false;
        break;
      }
      case Code::ParCall:
        // Sequential scheduler or deep enough: fall through to the calls.
        if (shared_->options.scheduler == Scheduler::Parallel &&
            parDepth_ < shared_->options.spawnDepth) {
          uint32_t pc = f->pc;
          if (!runParallelGroup(p, pc, base, in.jump)) return false;
          frames_.back().pc = pc + in.jump;  // skip the group's calls
        }
        break;
      case Code::Branch:
        if (S(0).kind() != ir::DKind::Bool)
          return fail(*in.node, "E0418", "condition of 'ctrl.if' is not a bool");
        if (!S(0).asBool()) f->pc = in.jump;
        break;
      case Code::Move: *dst = S(0); break;
      case Code::Jump: f->pc = in.jump; break;
      case Code::Apply: {
        const ir::Datum& fn = S(0);
        if (fn.kind() != ir::DKind::Func) return fail(*in.node, "E0415", "called value is not a function");
        args = fn.funcCaptures();
        for (uint32_t i = 1; i < in.opCount; ++i) args.push_back(S(i));
        const Program& cp = programFor(*fn.funcGraph());
        if (!pushCall(cp, args.data(), args.size(), base + in.dst, in.nres, in.tail, in.node))
          return false;
        break;
      }
      case Code::FuncRef: {
        const ir::Attr* c = in.node->attr("callee");
        const ir::Graph* g = module_.lookup(c->getSymbol());
        if (!g) return fail(*in.node, "E0409", "unknown graph @" + c->getSymbol());
        std::vector<ir::Datum> caps;
        for (uint32_t i = 0; i < in.opCount; ++i) caps.push_back(S(i));
        *dst = ir::Datum::func(g, std::move(caps));
        break;
      }
      case Code::Loop: {
        // Loops run their regions to completion on nested frames (loops do not
        // recurse by themselves, so this uses bounded C++ stack).
        if (nesting_ + 1 >= kMaxNesting)
          return fail(*in.node, "E0417", "stack overflow: more than " + std::to_string(kMaxNesting) +
                                             " nested loop levels");
        std::vector<ir::Datum> vals;
        for (uint32_t i = 0; i < in.opCount; ++i) vals.push_back(S(i));
        const ir::Node* node = in.node;
        uint32_t dstSlot = in.dst, nres = in.nres;
        for (;;) {
          std::vector<ir::Datum> c, next;
          if (!run(*node->region(0), vals, c)) return false;
          if (c.empty() || c[0].kind() != ir::DKind::Bool)
            return fail(*node, "E0418", "loop condition is not a bool");
          if (!c[0].asBool()) break;
          if (!run(*node->region(1), vals, next)) return false;
          vals = std::move(next);
        }
        for (uint32_t i = 0; i < nres; ++i) stack_[base + dstSlot + i] = std::move(vals[i]);
        break;
      }
      case Code::Generic: {
        const ir::Node& n = *in.node;
        if (!n.op().interp) return fail(n, "E0413", "no runtime rule for '" + n.opName() + "'");
        args.clear();
        for (uint32_t i = 0; i < in.opCount; ++i) args.push_back(S(i));
        results.clear();
        // The rule may re-enter the runtime (builtins applying closures), which
        // can reallocate stack_: reload slots by index afterwards.
        uint32_t dstSlot = in.dst;
        if (!n.op().interp(*ctx_, n, args, results)) return false;
        if (results.size() != n.numResults())
          return fail(n, "E0414", "'" + n.opName() + "' produced " + std::to_string(results.size()) +
                                      " values, expected " + std::to_string(n.numResults()));
        for (size_t r = 0; r < results.size(); ++r) stack_[base + dstSlot + r] = std::move(results[r]);
        break;
      }
    }
  }
  return true;
}

}  // namespace xacc::runtime
