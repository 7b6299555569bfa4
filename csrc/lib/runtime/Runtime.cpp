// The runtime object: construction, the program cache, the entry points
// (run, call) and located runtime errors with their call traces. Frames live
// on an explicit stack; slot storage is one growable datum array addressed by
// index (never by pointer, since it reallocates). See Runtime.h; the
// interpreter loops are in Execute.cpp and ExecuteRaw.cpp, the parallel
// scheduler in Scheduler.cpp.
#include "RuntimeImpl.h"

#include <cstdio>

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::runtime {

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
}  // namespace xacc::runtime
