// The loop form of self-recursive scalar graphs (GraphEmitter, see
// ScalarLoweringImpl.h and ScalarLowering.cpp): which graphs take it, how deep
// the loop is inlined into itself, the proof that bounds its steps, and the
// scf.while it is emitted as.
#include "ScalarLoweringImpl.h"

#include <fmt/format.h>

namespace xacc::backend::mlir::scalar {

// Loop form. A self-recursive graph whose result is built, through ctrl.if
// arms, from base values, tail self-calls and integer accumulators
// `x + f(..)` / `x * f(..)` (one operator throughout; wrapping add and mul
// are associative and commutative, so the order of the terms does not
// matter) is emitted as one scf.while: the loop carries the parameters and
// the accumulator, a tail self-call is the next iteration and a base value
// ends the loop with `acc op value`. This is what LLVM's tail-recursion
// elimination makes of it too; doing it here allows inlining the loop
// itself at the graph's non-tail self-calls, nested loopLevels_ deep, which
// is what removes most calls of a fib-like recursion (gcc does the same at
// -O2; LLVM does not inline a function into itself). Only graphs with a
// non-tail self-call take this form: without one, LLVM does as well.
void GraphEmitter::classifyTail(const ir::Value* v, bool& steps) {
  const ir::Node* d = v->definingNode();
  if (!d || v->numUses() != 1) return;  // a base value
  int op = d->op().coreId;
  if (op == int(CoreOp::If) && d->numRegions() == 2 && d->numResults() == 1 &&
      d->region(0)->results().size() == 1 && d->region(1)->results().size() == 1) {
    tailNodes_.insert(d);
    for (size_t arm = 0; arm < 2; ++arm) classifyTail(d->region(arm)->results()[0], steps);
    return;
  }
  if (isSelfCall(*d)) {
    tailNodes_.insert(d);
    steps = true;
    return;
  }
  if ((op != int(CoreOp::Add) && op != int(CoreOp::Mul)) || d->numOperands() != 2 || !v->type().isInt() ||
      (accOp_ >= 0 && accOp_ != op))
    return;
  for (int i = 1; i >= 0; --i) {
    const ir::Value* o = d->operand(i);
    const ir::Node* c = o->definingNode();
    if (c && isSelfCall(*c) && o->numUses() == 1) {
      accOp_ = op;
      tailNodes_.insert(d);
      tailNodes_.insert(c);
      steps = true;
      return;
    }
  }
}

void GraphEmitter::countLoopBody(const ir::Graph& g, size_t& nodes, size_t& selfCalls) {
  for (const ir::Node* n : g) {
    ++nodes;
    if (isSelfCall(*n) && !tailNodes_.count(n)) ++selfCalls;
    for (size_t i = 0; i < n->numRegions(); ++i) countLoopBody(*n->region(i), nodes, selfCalls);
  }
}

void GraphEmitter::planLoop(const ir::Graph& g) {
  static constexpr int kMaxLoopLevels = 6;
  static constexpr size_t kLoopNodeBudget = 512;
  bool steps = false;
  if (g.numParams() > 0) classifyTail(g.results()[0], steps);
  size_t nodes = 0, calls = 0;
  if (steps) countLoopBody(g, nodes, calls);
  if (calls == 0 && accOp_ < 0) {  // plain tail recursion: LLVM makes it a loop as well
    tailNodes_.clear();
    return;
  }
  // With an accumulator the loop form is taken even without a non-tail
  // self-call, for the call count it carries (kMaxNestedCalls).
  loopForm_ = true;
  if (accOp_ >= 0) proveSteps(g);
  if (calls == 0) return;
  size_t copies = 1, total = nodes;
  while (loopLevels_ < kMaxLoopLevels && total + nodes * copies * calls <= kLoopNodeBudget) {
    copies *= calls;
    total += nodes * copies;
    ++loopLevels_;
  }
}

std::string GraphEmitter::accumulate(const std::string& acc, const std::string& x) {
  return op2(accOp_ == int(CoreOp::Mul) ? "arith.muli" : "arith.addi", acc, x, "i64");
}

bool GraphEmitter::intConst(const ir::Value* v, int64_t& k) {
  const ir::Node* d = v->definingNode();
  if (!d || d->op().coreId != int(CoreOp::Const)) return false;
  const ir::Attr* a = d->attr("value");
  if (!a || a->kind() != ir::Attr::Kind::Int) return false;
  k = a->getInt();
  return true;
}

void GraphEmitter::learn(const ir::Value* cond, bool holds, PathFacts& f) {
  const ir::Node* c = cond->definingNode();
  if (!c || c->numOperands() != 2) return;
  int op = c->op().coreId;
  const ir::Value *x = c->operand(0), *y = c->operand(1);
  int64_t k;
  bool swapped = false;
  if (!intConst(y, k)) {
    if (!intConst(x, k)) return;
    std::swap(x, y);
    swapped = true;  // K op p
  }
  auto it = f.param.find(x);
  if (it == f.param.end()) return;
  // Normalise to p op K.
  if (swapped) {
    if (op == int(CoreOp::Lt)) op = int(CoreOp::Gt);
    else if (op == int(CoreOp::Le)) op = int(CoreOp::Ge);
    else if (op == int(CoreOp::Gt)) op = int(CoreOp::Lt);
    else if (op == int(CoreOp::Ge)) op = int(CoreOp::Le);
  }
  if (!holds) {  // the negation
    if (op == int(CoreOp::Lt)) op = int(CoreOp::Ge);
    else if (op == int(CoreOp::Le)) op = int(CoreOp::Gt);
    else if (op == int(CoreOp::Gt)) op = int(CoreOp::Le);
    else if (op == int(CoreOp::Ge)) op = int(CoreOp::Lt);
    else return;
  }
  int64_t lb;
  if (op == int(CoreOp::Ge)) lb = k;
  else if (op == int(CoreOp::Gt) && k < INT64_MAX) lb = k + 1;
  else return;
  auto [at, fresh] = f.floor.emplace(it->second, lb);
  if (!fresh) at->second = std::max(at->second, lb);
}

bool GraphEmitter::stepFacts(const ir::Value* v, PathFacts f, std::optional<std::map<int, int64_t>>& candidates) {
  const ir::Node* d = v->definingNode();
  if (!d || !tailNodes_.count(d)) return true;  // a base value
  if (d->op().coreId == int(CoreOp::If)) {
    for (size_t arm = 0; arm < 2; ++arm) {
      PathFacts g = f;
      learn(d->operand(0), arm == 0, g);
      const ir::Graph& region = *d->region(arm);
      for (size_t i = 0; i + 1 < d->numOperands() && i < region.numParams(); ++i)
        if (auto it = f.param.find(d->operand(i + 1)); it != f.param.end()) g.param[region.param(i)] = it->second;
      if (!stepFacts(region.results()[0], std::move(g), candidates)) return false;
    }
    return true;
  }
  const ir::Node* call = d;
  if (!isSelfCall(*d)) call = tailNodes_.count(d->operand(1)->definingNode()) ? d->operand(1)->definingNode()
                                                                               : d->operand(0)->definingNode();
  std::map<int, int64_t> here;  // parameter -> floor, for the ones this step decreases
  for (size_t j = 0; j < call->numOperands(); ++j) {
    const ir::Node* s = call->operand(j)->definingNode();
    int64_t c;
    if (!s || s->numOperands() != 2 || !intConst(s->operand(1), c)) continue;
    // Steps of at most 2^32 from a floor of at least -2^62: `p - c` cannot wrap.
    constexpr int64_t kMaxStep = int64_t(1) << 32;
    bool down = (s->op().coreId == int(CoreOp::Sub) && c > 0 && c <= kMaxStep) ||
                (s->op().coreId == int(CoreOp::Add) && c < 0 && c >= -kMaxStep);
    auto p = f.param.find(s->operand(0));
    if (!down || p == f.param.end() || p->second != int(j)) continue;
    if (auto fl = f.floor.find(p->second); fl != f.floor.end()) here[p->second] = fl->second;
  }
  if (!candidates) {
    candidates = std::move(here);
  } else {
    std::map<int, int64_t> both;
    for (auto [i, fl] : *candidates)
      if (auto it = here.find(i); it != here.end()) both[i] = std::min(fl, it->second);
    candidates = std::move(both);
  }
  return !candidates->empty();
}

void GraphEmitter::proveSteps(const ir::Graph& g) {
  PathFacts f;
  for (size_t i = 0; i < g.numParams(); ++i)
    if (g.param(i)->type().isInt()) f.param[g.param(i)] = int(i);
  std::optional<std::map<int, int64_t>> candidates;
  if (!stepFacts(g.results()[0], std::move(f), candidates) || !candidates || candidates->empty()) return;
  auto [i, floor] = *candidates->begin();
  if (floor > INT64_MAX - int64_t(ScalarAbi::kMaxNestedCalls) || floor < INT64_MIN / 2) return;
  boundParam_ = i;
  boundFloor_ = floor;
}

std::string GraphEmitter::carriedTypes() {
  std::string s;
  for (size_t i = 0; i < self_->numParams(); ++i) {
    ScalarKind k;
    scalarKind(self_->param(i)->type(), k);
    s += std::string(i ? ", " : "") + mlirType(k);
  }
  if (accOp_ >= 0) s += ", i64";
  if (countsSteps()) s += ", i64";
  return s;
}

bool GraphEmitter::emitLoop(const std::vector<std::string>& init, std::string& fin, std::string& why) {
  if (init.size() != self_->numParams()) return fail("a self-call with the wrong number of arguments", why);
  std::string accInit;
  if (accOp_ >= 0) accInit = constant(accOp_ == int(CoreOp::Mul) ? "1" : "0", "i64");
  std::string r = fresh(), inits;
  std::vector<std::string> cur;
  for (size_t i = 0; i < init.size(); ++i) {
    cur.push_back(fresh());
    inits += (i ? ", " : "") + cur.back() + " = " + init[i];
  }
  std::string acc, depth, limit;
  if (accOp_ >= 0) {
    acc = fresh();
    inits += ", " + acc + " = " + accInit;
  }
  if (countsSteps()) {
    std::string zero = constant("0", "i64");
    limit = constant(std::to_string(ScalarAbi::kMaxNestedCalls), "i64");
    depth = fresh();
    inits += ", " + depth + " = " + zero;
  } else if (accOp_ >= 0) {
    // proveSteps: this loop takes at most init - floor + 1 steps, so it can
    // only reach the runtime's limit when that is already that large.
    std::string most = constant(std::to_string(boundFloor_ + int64_t(ScalarAbi::kMaxNestedCalls)), "i64");
    bail(cmp("arith.cmpi", "sge", init[size_t(boundParam_)], most, "i64"), ScalarAbi::TooDeep);
  }
  std::string carried = carriedTypes(), rt = mlirType(resultKind_);
  size_t n = cur.size() + (acc.empty() ? 0 : 1) + (depth.empty() ? 0 : 1);
  line(fmt::format("{}:{} = scf.while ({}) : ({}) -> ({}, {}) {{", r, n + 1, inits, carried, carried, rt));
  auto savedNames = names_;
  std::string saved = indent_;
  indent_ = saved + "  ";
  for (size_t i = 0; i < cur.size(); ++i) names_[self_->param(i)] = cur[i];
  std::vector<std::string> t;
  if (!tailRegion(*self_, self_->results()[0], cur, acc, depth, t, why)) return false;
  if (!depth.empty()) {
    // The count only grows on a step, so a count at the limit means the loop
    // was cut: it ends, and the bail-out is after it (no call in the loop).
    t[0] = op2("arith.andi", t[0], cmp("arith.cmpi", "ult", t[n], limit, "i64"), "i1");
  }
  line(fmt::format("scf.condition({}) {} : {}, {}", t[0], join(t, 1), carried, rt));
  indent_ = saved;
  std::vector<std::string> next;
  std::string params;
  for (size_t i = 0; i <= n; ++i) {
    next.push_back(fresh());
    params += (i ? ", " : "") + next.back() + ": " + (i < cur.size() ? mlirType(kindOf(self_->param(i))) : i < n ? "i64" : rt);
  }
  line(fmt::format("}} do {{\n{}^bb0({}):", saved, params));
  next.pop_back();  // the result slot is not carried
  line(fmt::format("  scf.yield {} : {}", join(next, 0), carried));
  line("}");
  if (!depth.empty()) bail(cmp("arith.cmpi", "uge", r + "#" + std::to_string(n - 1), limit, "i64"), ScalarAbi::TooDeep);
  names_ = std::move(savedNames);
  fin = r + "#" + std::to_string(n);
  return true;
}

bool GraphEmitter::tailRegion(const ir::Graph& g, const ir::Value* v, const std::vector<std::string>& cur,
                const std::string& acc, const std::string& depth, std::vector<std::string>& t,
                std::string& why) {
  for (const ir::Node* n : g)
    if (!tailNodes_.count(n) && !node(*n, why)) return false;
  const char* rt = mlirType(resultKind_);
  const ir::Node* d = v->definingNode();
  if (!d || !tailNodes_.count(d)) {  // a base value: the loop ends
    t = {constant("false", "i1")};
    t.insert(t.end(), cur.begin(), cur.end());
    if (!acc.empty()) t.push_back(acc);
    if (!depth.empty()) t.push_back(depth);
    t.push_back(acc.empty() ? name(v) : accumulate(acc, name(v)));
    return true;
  }
  if (d->op().coreId == int(CoreOp::If)) {
    std::vector<std::string> args;
    for (size_t i = 1; i < d->numOperands(); ++i) args.push_back(name(d->operand(i)));
    std::string types = "i1, " + carriedTypes() + ", " + rt;
    size_t width = cur.size() + 2 + (acc.empty() ? 0 : 1) + (depth.empty() ? 0 : 1);
    std::string r = fresh(), saved = indent_;
    line(fmt::format("{}:{} = scf.if {} -> ({}) {{", r, width, name(d->operand(0)), types));
    for (size_t arm = 0; arm < 2; ++arm) {
      indent_ = saved + "  ";
      const ir::Graph& region = *d->region(arm);
      if (region.numParams() != args.size()) return fail("region parameters do not match the operands", why);
      for (size_t i = 0; i < args.size(); ++i) names_[region.param(i)] = args[i];
      std::vector<std::string> at;
      if (!tailRegion(region, region.results()[0], cur, acc, depth, at, why)) return false;
      line(fmt::format("scf.yield {} : {}", join(at, 0), types));
      indent_ = saved;
      line(arm == 0 ? "} else {" : "}");
    }
    t.clear();
    for (size_t i = 0; i < width; ++i) t.push_back(r + "#" + std::to_string(i));
    return true;
  }
  const ir::Node* call = d;
  std::string next = acc, nextDepth = depth;
  if (!isSelfCall(*d)) {  // an accumulator: one operand is the tail self-call, a nested call
    size_t i = tailNodes_.count(d->operand(1)->definingNode()) ? 1 : 0;
    call = d->operand(i)->definingNode();
    next = accumulate(acc, name(d->operand(1 - i)));
    if (!depth.empty()) nextDepth = op2("arith.addi", depth, constant("1", "i64"), "i64");
  }
  t = {constant("true", "i1")};
  for (const ir::Value* o : call->operands()) t.push_back(name(o));
  if (!acc.empty()) t.push_back(next);
  if (!depth.empty()) t.push_back(nextDepth);
  t.push_back(resultKind_ == ScalarKind::F64 ? constant(f64Const(0.0), rt)
              : resultKind_ == ScalarKind::Bool ? constant("false", rt) : constant("0", rt));
  return true;
}

}  // namespace xacc::backend::mlir::scalar
