// Scalar GIR graphs -> MLIR text (func/arith/scf/math plus a few LLVM dialect
// ops for the context pointer and the stack check). No MLIR headers here; see
// ScalarLowering.h for what is compiled and the bail-out protocol.
//
// Each graph is emitted on its own first (emission is also the check: an
// unsupported type or op stops it with a reason), then graphs calling a graph
// that did not make it are dropped until nothing changes. Symbols are the graph
// names (escaped), so a graph's text does not depend on which others compile.
#include "xacc/backend/mlir/ScalarLowering.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "xacc/ir/Op.h"

namespace xacc::backend::mlir {
namespace {

using ir::CoreOp;

bool scalarKind(ir::Type t, ScalarKind& k) {
  if (t.isNull()) return false;
  if (t.isInt() && t.bitWidth() == 64) k = ScalarKind::I64;
  else if (t.isFloat() && t.bitWidth() == 64) k = ScalarKind::F64;
  else if (t.kind() == ir::TypeKind::Bool) k = ScalarKind::Bool;
  else return false;
  return true;
}

const char* mlirType(ScalarKind k) {
  switch (k) {
    case ScalarKind::I64: return "i64";
    case ScalarKind::F64: return "f64";
    case ScalarKind::Bool: return "i1";
  }
  return "i64";
}

/// `@"cml.<name>"` with every character outside [A-Za-z0-9_:.$] written as %XX
/// (so distinct graph names stay distinct symbols).
std::string symbol(const std::string& graph) {
  std::string s = "@\"cml.";
  for (unsigned char c : graph) {
    if (std::isalnum(c) || c == '_' || c == ':' || c == '.' || c == '$') s += char(c);
    else s += fmt::format("%{:02X}", c);
  }
  return s + "\"";
}

std::string f64Const(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return fmt::format("0x{:016X}", bits);
}

/// Emits one graph as a func.func. Fails (with `why`) on the first thing it
/// cannot lower.
class GraphEmitter {
public:
  GraphEmitter(const ir::Module& m) : module_(m) {}

  bool emit(const ir::Graph& g, std::string& out, std::set<std::string>& callees, std::string& why) {
    callees_ = &callees;
    if (g.results().size() != 1) return fail("returns " + std::to_string(g.results().size()) + " values", why);
    ScalarKind rk;
    if (!scalarKind(g.results()[0]->type(), rk))
      return fail("result type " + g.results()[0]->type().str() + " is not i64, f64 or bool", why);
    std::string sig = "%ctx: !llvm.ptr";
    for (size_t i = 0; i < g.numParams(); ++i) {
      ScalarKind k;
      if (!scalarKind(g.param(i)->type(), k))
        return fail("parameter " + std::to_string(i) + " has type " + g.param(i)->type().str(), why);
      std::string n = fresh();
      names_[g.param(i)] = n;
      sig += fmt::format(", {}: {}", n, mlirType(k));
    }
    indent_ = "    ";
    // The stack pointer (llvm.stacksave is a plain read of it on x86-64 and AArch64).
    line("%spp = llvm.intr.stacksave : !llvm.ptr");
    line("%sp = llvm.ptrtoint %spp : !llvm.ptr to i64");
    line("%lim = llvm.load %ctx : !llvm.ptr -> i64");
    line("%low = arith.cmpi ult, %sp, %lim : i64");
    bail("%low", ScalarAbi::StackLow);
    self_ = &g;
    resultKind_ = rk;
    markTail(g, g.results()[0]);
    planLoop(g);
    inlineSelf_ = !loopForm_ && selfInlinable(g);
    std::vector<std::string> res;
    if (loopForm_) {
      std::vector<std::string> params;
      for (size_t i = 0; i < g.numParams(); ++i) params.push_back(names_.at(g.param(i)));
      res.emplace_back();
      if (!emitLoop(params, res[0], why)) return false;
    } else if (!body(g, res, why)) {
      return false;
    }
    out += fmt::format("  // graph @{}\n  func.func private {}({}) -> {} {{\n", g.name(), symbol(g.name()),
                       sig, mlirType(rk));
    out += text_;
    out += fmt::format("    return {} : {}\n  }}\n", res[0], mlirType(rk));
    return true;
  }

private:
  /// Values whose definition is in tail position: the graph's result and,
  /// through ctrl.if, the arm results it is made of, and the last self-call
  /// that an integer add/mul in tail position takes (`f(n-1) + f(n-2)`: LLVM
  /// turns that call into a loop with an accumulator). A self-call defining one
  /// stays a call, for LLVM's tail-recursion elimination to make it a loop.
  void markTail(const ir::Graph& g, const ir::Value* v) {
    tail_.insert(v);
    const ir::Node* lastSelf = nullptr;  // accumulator: the latest self-call operand of a tail add/mul
    for (const ir::Node* n : g) {
      if (isSelfCall(*n)) {
        for (const ir::Node* u : g)
          if ((u->op().coreId == int(CoreOp::Add) || u->op().coreId == int(CoreOp::Mul)) && u->numResults() == 1 &&
              u->result(0) == v && u->result(0)->type().isInt())
            for (const ir::Value* o : u->operands())
              if (o == n->result(0)) lastSelf = n;
      }
      if (n->op().coreId != int(CoreOp::If) || n->numRegions() != 2) continue;
      for (size_t i = 0; i < n->numResults(); ++i)
        if (n->result(i) == v)
          for (size_t arm = 0; arm < 2; ++arm)
            if (i < n->region(arm)->results().size()) markTail(*n->region(arm), n->region(arm)->results()[i]);
    }
    if (lastSelf) tail_.insert(lastSelf->result(0));
  }

  /// Counts the nodes of `g` (regions included) and its non-tail self-calls.
  void measure(const ir::Graph& g, size_t& nodes, size_t& selfCalls) {
    for (const ir::Node* n : g) {
      ++nodes;
      if (isSelfCall(*n) && !tail_.count(n->result(0))) ++selfCalls;
      for (size_t i = 0; i < n->numRegions(); ++i) measure(*n->region(i), nodes, selfCalls);
    }
  }

  bool isSelfCall(const ir::Node& n) const {
    if (n.op().coreId != int(CoreOp::Call) || n.numResults() != 1) return false;
    const ir::Attr* callee = n.attr("callee");
    return callee && callee->kind() == ir::Attr::Kind::Symbol && module_.lookup(callee->getSymbol()) == self_;
  }

  /// Recursive inlining (what gcc does for fib): the non-tail self-calls of a
  /// small self-recursive graph get one inlined copy of its body (whose own
  /// self-calls stay calls), halving the calls of a fib-like recursion. Tail
  /// self-calls are left alone. The growth is bounded: at most 4 copies of a
  /// body of at most 48 nodes.
  bool selfInlinable(const ir::Graph& g) {
    size_t nodes = 0, selfCalls = 0;
    measure(g, nodes, selfCalls);
    return selfCalls > 0 && selfCalls <= 4 && nodes <= 48;
  }

  /// Emits `g`'s body (g is the graph being emitted) in place of the call `n`.
  bool inlineSelfCall(const ir::Node& n, const std::vector<std::string>& a, std::string& why) {
    auto saved = names_;  // the copy rebinds the same ir::Values
    ++inlineDepth_;
    std::vector<std::string> res;
    bool ok = inlineRegion(*self_, a, res, why);
    --inlineDepth_;
    if (!ok) return false;
    if (res.size() != 1) return fail("an inlined self-call yields the wrong number of values", why);
    names_ = std::move(saved);
    names_[n.result(0)] = res[0];
    return true;
  }

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

  /// Marks the tail-structure nodes under `v` (a result of its graph, used
  /// once): ctrl.if with one result, tail self-calls, accumulators and the
  /// self-calls they take. Sets `steps` when one recurses.
  void classifyTail(const ir::Value* v, bool& steps) {
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

  /// Counts the nodes of `g` (regions included) and the self-calls that are
  /// not part of the tail structure.
  void countLoopBody(const ir::Graph& g, size_t& nodes, size_t& selfCalls) {
    for (const ir::Node* n : g) {
      ++nodes;
      if (isSelfCall(*n) && !tailNodes_.count(n)) ++selfCalls;
      for (size_t i = 0; i < n->numRegions(); ++i) countLoopBody(*n->region(i), nodes, selfCalls);
    }
  }

  /// Decides whether `g` takes the loop form and how deep its loop is inlined
  /// into itself: at most kMaxLoopLevels levels and kLoopNodeBudget nodes in
  /// all (a body with k non-tail self-calls is copied k^level times per level).
  void planLoop(const ir::Graph& g) {
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

  /// `acc op x` with the accumulator's operator.
  std::string accumulate(const std::string& acc, const std::string& x) {
    return op2(accOp_ == int(CoreOp::Mul) ? "arith.muli" : "arith.addi", acc, x, "i64");
  }

  // Termination of the loop form. A loop with an accumulator stands for
  // nested calls, which the runtime limits (kMaxNestedCalls); native code must
  // not loop forever where the runtime reports a stack overflow. When every
  // step (tail or accumulator self-call) passes some integer parameter as
  // `p - c` (c > 0) on a path whose ctrl.if conditions bound p from below
  // (`p < K` false, `p >= K` true, ...), the loop takes at most p - floor + 1
  // steps: one check at loop entry is enough (LLVM's trip-count reasoning,
  // done here on GIR). Otherwise the loop carries a step count.

  bool countsSteps() const { return accOp_ >= 0 && boundParam_ < 0; }

  static bool intConst(const ir::Value* v, int64_t& k) {
    const ir::Node* d = v->definingNode();
    if (!d || d->op().coreId != int(CoreOp::Const)) return false;
    const ir::Attr* a = d->attr("value");
    if (!a || a->kind() != ir::Attr::Kind::Int) return false;
    k = a->getInt();
    return true;
  }

  /// Lower bounds on parameters known on a path, and which values are which
  /// parameter (arm parameters forward ctrl.if operands).
  struct PathFacts {
    std::map<const ir::Value*, int> param;
    std::map<int, int64_t> floor;
  };

  /// `cond` (true when `holds`) as a lower bound on a parameter.
  static void learn(const ir::Value* cond, bool holds, PathFacts& f) {
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

  /// Walks the tail structure under `v`; for each step records the
  /// parameters it decreases with a known floor (`candidates`, intersected).
  bool stepFacts(const ir::Value* v, PathFacts f, std::optional<std::map<int, int64_t>>& candidates) {
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

  void proveSteps(const ir::Graph& g) {
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

  /// The loop-carried types (parameters, then the accumulator and the count
  /// of calls it stands for, if any).
  std::string carriedTypes() {
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

  /// Emits self_'s loop on the argument names `init`; `fin` names the result.
  bool emitLoop(const std::vector<std::string>& init, std::string& fin, std::string& why) {
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

  /// Emits region `g` (its parameters named) of the loop body, tail nodes left
  /// out, and the tuple its result `v` gives: continue?, next parameters,
  /// next accumulator and call count (if any), final result.
  bool tailRegion(const ir::Graph& g, const ir::Value* v, const std::vector<std::string>& cur,
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

  static std::string join(const std::vector<std::string>& xs, size_t from) {
    std::string s;
    for (size_t i = from; i < xs.size(); ++i) s += (i > from ? ", " : "") + xs[i];
    return s;
  }
  static ScalarKind kindOf(const ir::Value* v) {
    ScalarKind k = ScalarKind::I64;
    scalarKind(v->type(), k);
    return k;
  }

  bool fail(std::string reason, std::string& why) {
    why = std::move(reason);
    return false;
  }
  std::string fresh() { return "%v" + std::to_string(next_++); }
  void line(const std::string& s) { text_ += indent_ + s + "\n"; }
  std::string constant(const std::string& v, const char* type) {
    std::string n = fresh();
    if (std::strcmp(type, "i1") == 0) line(fmt::format("{} = arith.constant {}", n, v));  // true / false
    else line(fmt::format("{} = arith.constant {} : {}", n, v, type));
    return n;
  }
  void bail(const std::string& cond, int code) {
    line(fmt::format("scf.if {} {{", cond));
    std::string c = fresh();
    line(fmt::format("  {} = arith.constant {} : i32", c, code));
    line(fmt::format("  llvm.call @xacc_scalar_bail(%ctx, {}) : (!llvm.ptr, i32) -> ()", c));
    line("}");
  }
  std::string op2(const char* op, const std::string& a, const std::string& b, const char* type) {
    std::string n = fresh();
    line(fmt::format("{} = {} {}, {} : {}", n, op, a, b, type));
    return n;
  }
  std::string cmp(const char* op, const char* pred, const std::string& a, const std::string& b, const char* type) {
    std::string n = fresh();
    line(fmt::format("{} = {} {}, {}, {} : {}", n, op, pred, a, b, type));
    return n;
  }
  std::string select(const std::string& c, const std::string& a, const std::string& b, const char* type) {
    std::string n = fresh();
    line(fmt::format("{} = arith.select {}, {}, {} : {}", n, c, a, b, type));
    return n;
  }
  std::string name(const ir::Value* v) { return names_.at(v); }

  /// Emits the nodes of `g` (whose parameters are already named) and returns
  /// the names of its results.
  bool body(const ir::Graph& g, std::vector<std::string>& results, std::string& why) {
    for (const ir::Node* n : g)
      if (!node(*n, why)) return false;
    for (const ir::Value* v : g.results()) {
      auto it = names_.find(v);
      if (it == names_.end()) return fail("a result is not defined in the graph", why);
      results.push_back(it->second);
    }
    return true;
  }

  bool node(const ir::Node& n, std::string& why) {
    const ir::OpInfo& op = n.op();
    if (op.coreId < 0) return fail("op " + n.opName() + " is not a scalar op", why);
    std::vector<ScalarKind> in, out;
    for (const ir::Value* v : n.operands()) {
      ScalarKind k;
      if (!v || !scalarKind(v->type(), k))
        return fail(n.opName() + " has an operand of type " + (v ? v->type().str() : "?"), why);
      in.push_back(k);
    }
    for (size_t i = 0; i < n.numResults(); ++i) {
      ScalarKind k;
      if (!scalarKind(n.result(i)->type(), k))
        return fail(n.opName() + " yields a " + n.result(i)->type().str(), why);
      out.push_back(k);
    }
    CoreOp c = CoreOp(op.coreId);
    std::vector<std::string> a;
    for (const ir::Value* v : n.operands()) a.push_back(name(v));
    auto sameKinds = [&](ScalarKind k) {
      for (ScalarKind x : in)
        if (x != k) return false;
      return true;
    };
    std::string r;  // the single result's name
    switch (c) {
      case CoreOp::Const: {
        const ir::Attr* v = n.attr("value");
        if (!v) return fail("constant without a value", why);
        if (out[0] == ScalarKind::I64 && v->kind() == ir::Attr::Kind::Int) r = constant(std::to_string(v->getInt()), "i64");
        else if (out[0] == ScalarKind::F64 && v->kind() == ir::Attr::Kind::Float) r = constant(f64Const(v->getFloat()), "f64");
        else if (out[0] == ScalarKind::F64 && v->kind() == ir::Attr::Kind::Int) r = constant(f64Const(double(v->getInt())), "f64");
        else if (out[0] == ScalarKind::Bool && v->kind() == ir::Attr::Kind::Bool) r = constant(v->getBool() ? "true" : "false", "i1");
        else if (out[0] == ScalarKind::Bool && v->kind() == ir::Attr::Kind::Int) r = constant(v->getInt() != 0 ? "true" : "false", "i1");
        else return fail("constant " + v->str() + " of type " + n.result(0)->type().str(), why);
        break;
      }
      case CoreOp::Cast:
        if (!cast(in[0], out[0], a[0], r, why)) return false;
        break;
      case CoreOp::Add: case CoreOp::Sub: case CoreOp::Mul: case CoreOp::Div: case CoreOp::FloorDiv:
      case CoreOp::Rem: case CoreOp::Mod: case CoreOp::Pow: case CoreOp::Neg: case CoreOp::Abs:
      case CoreOp::Min: case CoreOp::Max:
        if (sameKinds(ScalarKind::I64) && out[0] == ScalarKind::I64) r = intArith(c, a);
        else if (sameKinds(ScalarKind::F64) && out[0] == ScalarKind::F64) r = floatArith(c, a);
        else return fail(n.opName() + " on these operand types", why);
        break;
      case CoreOp::BitAnd: case CoreOp::BitOr: case CoreOp::BitXor: {
        const char* mop = c == CoreOp::BitAnd ? "arith.andi" : c == CoreOp::BitOr ? "arith.ori" : "arith.xori";
        if (sameKinds(ScalarKind::I64) && out[0] == ScalarKind::I64) r = op2(mop, a[0], a[1], "i64");
        else if (sameKinds(ScalarKind::Bool) && out[0] == ScalarKind::Bool) r = op2(mop, a[0], a[1], "i1");
        else return fail(n.opName() + " on these operand types", why);
        break;
      }
      case CoreOp::BitNot:
        if (in[0] != ScalarKind::I64 || out[0] != ScalarKind::I64) return fail("arith.bitnot on a non-integer", why);
        r = op2("arith.xori", a[0], constant("-1", "i64"), "i64");
        break;
      case CoreOp::Shl: case CoreOp::Shr: {
        if (!sameKinds(ScalarKind::I64) || out[0] != ScalarKind::I64) return fail(n.opName() + " on a non-integer", why);
        // Shift counts outside [0, 63] are poison in LLVM; the interpreter
        // gives 0 (shl) or the sign (shr, which shifting by 63 also gives).
        std::string ok = cmp("arith.cmpi", "ult", a[1], constant("64", "i64"), "i64");
        if (c == CoreOp::Shl) {
          std::string amt = select(ok, a[1], constant("0", "i64"), "i64");
          r = select(ok, op2("arith.shli", a[0], amt, "i64"), constant("0", "i64"), "i64");
        } else {
          r = op2("arith.shrsi", a[0], select(ok, a[1], constant("63", "i64"), "i64"), "i64");
        }
        break;
      }
      case CoreOp::Eq: case CoreOp::Ne: case CoreOp::Lt: case CoreOp::Le: case CoreOp::Gt: case CoreOp::Ge: {
        if (in[0] != in[1] || out[0] != ScalarKind::Bool) return fail(n.opName() + " on mixed operand types", why);
        static const std::map<CoreOp, const char*> si = {{CoreOp::Eq, "eq"}, {CoreOp::Ne, "ne"}, {CoreOp::Lt, "slt"},
                                                         {CoreOp::Le, "sle"}, {CoreOp::Gt, "sgt"}, {CoreOp::Ge, "sge"}};
        static const std::map<CoreOp, const char*> ui = {{CoreOp::Eq, "eq"}, {CoreOp::Ne, "ne"}, {CoreOp::Lt, "ult"},
                                                         {CoreOp::Le, "ule"}, {CoreOp::Gt, "ugt"}, {CoreOp::Ge, "uge"}};
        // Ordered predicates: NaN compares false, except != (unordered).
        static const std::map<CoreOp, const char*> fl = {{CoreOp::Eq, "oeq"}, {CoreOp::Ne, "une"}, {CoreOp::Lt, "olt"},
                                                         {CoreOp::Le, "ole"}, {CoreOp::Gt, "ogt"}, {CoreOp::Ge, "oge"}};
        if (in[0] == ScalarKind::I64) r = cmp("arith.cmpi", si.at(c), a[0], a[1], "i64");
        else if (in[0] == ScalarKind::Bool) r = cmp("arith.cmpi", ui.at(c), a[0], a[1], "i1");
        else r = cmp("arith.cmpf", fl.at(c), a[0], a[1], "f64");
        break;
      }
      case CoreOp::And: case CoreOp::Or:
        if (!sameKinds(ScalarKind::Bool)) return fail(n.opName() + " on non-bool operands", why);
        r = op2(c == CoreOp::And ? "arith.andi" : "arith.ori", a[0], a[1], "i1");
        break;
      case CoreOp::Not:
        if (in[0] != ScalarKind::Bool) return fail("logic.not on a non-bool", why);
        r = op2("arith.xori", a[0], constant("true", "i1"), "i1");
        break;
      case CoreOp::Select:
        if (in[0] != ScalarKind::Bool || in[1] != in[2] || out[0] != in[1]) return fail("ctrl.select types", why);
        r = select(a[0], a[1], a[2], mlirType(out[0]));
        break;
      case CoreOp::Builtin: {
        // The numeric conversions of the Camel standard library, with the
        // same semantics as arith.cast (floats truncate; NaN and out of range
        // are runtime errors, here bail-outs).
        std::string b = n.attrs().getStr("name");
        if ((b != "int" && b != "float") || in.size() != 1 || in[0] == ScalarKind::Bool ||
            out[0] != (b == "int" ? ScalarKind::I64 : ScalarKind::F64))
          return fail("builtin '" + b + "' is not lowered to scalar code", why);
        if (!cast(in[0], out[0], a[0], r, why)) return false;
        break;
      }
      case CoreOp::Call: return call(n, a, out, why);
      case CoreOp::If: return ifOp(n, a, out, why);
      case CoreOp::Loop: return loop(n, a, in, out, why);
      default: return fail("op " + n.opName() + " is not lowered to scalar code", why);
    }
    names_[n.result(0)] = r;
    return true;
  }

  bool cast(ScalarKind from, ScalarKind to, const std::string& x, std::string& r, std::string& why) {
    if (from == to) {
      r = x;
      return true;
    }
    std::string n = fresh();
    switch (to) {
      case ScalarKind::F64:
        line(fmt::format("{} = {} {} : {} to f64", n, from == ScalarKind::I64 ? "arith.sitofp" : "arith.uitofp", x,
                         mlirType(from)));
        break;
      case ScalarKind::Bool:
        if (from == ScalarKind::I64) n = cmp("arith.cmpi", "ne", x, constant("0", "i64"), "i64");
        else n = cmp("arith.cmpf", "une", x, constant(f64Const(0.0), "f64"), "f64");
        break;
      case ScalarKind::I64:
        if (from == ScalarKind::Bool) {
          line(fmt::format("{} = arith.extui {} : i1 to i64", n, x));
        } else {
          // NaN and values outside [-2^63, 2^63) are a runtime error.
          std::string below = cmp("arith.cmpf", "olt", x, constant(f64Const(9.2233720368547758e18), "f64"), "f64");
          std::string above = cmp("arith.cmpf", "oge", x, constant(f64Const(-9.2233720368547758e18), "f64"), "f64");
          std::string ok = op2("arith.andi", below, above, "i1");
          bail(op2("arith.xori", ok, constant("true", "i1"), "i1"), ScalarAbi::BadConversion);
          line(fmt::format("{} = arith.fptosi {} : f64 to i64", n, x));
        }
        break;
    }
    r = n;
    return true;
  }

  std::string intArith(CoreOp c, const std::vector<std::string>& a) {
    const char* T = "i64";
    switch (c) {
      case CoreOp::Add: return op2("arith.addi", a[0], a[1], T);
      case CoreOp::Sub: return op2("arith.subi", a[0], a[1], T);
      case CoreOp::Mul: return op2("arith.muli", a[0], a[1], T);
      case CoreOp::Neg: return op2("arith.subi", constant("0", T), a[0], T);
      case CoreOp::Abs: {
        std::string zero = constant("0", T);
        std::string neg = cmp("arith.cmpi", "slt", a[0], zero, T);
        return select(neg, op2("arith.subi", zero, a[0], T), a[0], T);
      }
      case CoreOp::Min: return op2("arith.minsi", a[0], a[1], T);
      case CoreOp::Max: return op2("arith.maxsi", a[0], a[1], T);
      case CoreOp::Pow: return intPow(a[0], a[1]);
      default: break;
    }
    // Division family: q == 0 is an error; q == -1 is computed without the
    // (poison) INT64_MIN / -1 and wraps as the interpreter does.
    std::string zero = constant("0", T), one = constant("1", T);
    std::string isZero = cmp("arith.cmpi", "eq", a[1], zero, T);
    bail(isZero, ScalarAbi::DivByZero);
    std::string isM1 = cmp("arith.cmpi", "eq", a[1], constant("-1", T), T);
    std::string safeQ = select(op2("arith.ori", isZero, isM1, "i1"), one, a[1], T);
    switch (c) {
      case CoreOp::Div: return select(isM1, op2("arith.subi", zero, a[0], T), op2("arith.divsi", a[0], safeQ, T), T);
      case CoreOp::FloorDiv:
        return select(isM1, op2("arith.subi", zero, a[0], T), op2("arith.floordivsi", a[0], safeQ, T), T);
      case CoreOp::Rem: return select(isM1, zero, op2("arith.remsi", a[0], safeQ, T), T);
      default: {  // Mod: the sign of the divisor
        std::string rem = op2("arith.remsi", a[0], safeQ, T);
        std::string nz = cmp("arith.cmpi", "ne", rem, zero, T);
        std::string signs = op2("arith.xori", cmp("arith.cmpi", "slt", rem, zero, T),
                                cmp("arith.cmpi", "slt", a[1], zero, T), "i1");
        std::string fixed = select(op2("arith.andi", nz, signs, "i1"), op2("arith.addi", rem, a[1], T), rem, T);
        return select(isM1, zero, fixed, T);
      }
    }
  }

  std::string intPow(const std::string& p, const std::string& q) {
    const char* T = "i64";
    std::string zero = constant("0", T), one = constant("1", T);
    bail(cmp("arith.cmpi", "slt", q, zero, T), ScalarAbi::NegativeExponent);
    std::string res = fresh();
    std::string e = fresh(), b = fresh(), acc = fresh();
    line(fmt::format("{}:3 = scf.while ({} = {}, {} = {}, {} = {}) : (i64, i64, i64) -> (i64, i64, i64) {{", res, e, q,
                     b, p, acc, one));
    std::string saved = indent_;
    indent_ += "  ";
    std::string more = cmp("arith.cmpi", "sgt", e, zero, T);
    line(fmt::format("scf.condition({}) {}, {}, {} : i64, i64, i64", more, e, b, acc));
    indent_ = saved;
    std::string e2 = fresh(), b2 = fresh(), acc2 = fresh();
    line(fmt::format("}} do {{\n{}^bb0({}: i64, {}: i64, {}: i64):", indent_, e2, b2, acc2));
    indent_ += "  ";
    std::string odd = cmp("arith.cmpi", "ne", op2("arith.andi", e2, one, T), zero, T);
    std::string accN = select(odd, op2("arith.muli", acc2, b2, T), acc2, T);
    std::string bN = op2("arith.muli", b2, b2, T);
    std::string eN = op2("arith.shrsi", e2, one, T);
    line(fmt::format("scf.yield {}, {}, {} : i64, i64, i64", eN, bN, accN));
    indent_ = saved;
    line("}");
    return res + "#2";
  }

  std::string floatArith(CoreOp c, const std::vector<std::string>& a) {
    const char* T = "f64";
    auto un = [&](const char* op) {
      std::string n = fresh();
      line(fmt::format("{} = {} {} : {}", n, op, a[0], T));
      return n;
    };
    switch (c) {
      case CoreOp::Add: return op2("arith.addf", a[0], a[1], T);
      case CoreOp::Sub: return op2("arith.subf", a[0], a[1], T);
      case CoreOp::Mul: return op2("arith.mulf", a[0], a[1], T);
      case CoreOp::Div: return op2("arith.divf", a[0], a[1], T);
      case CoreOp::FloorDiv: {
        std::string q = op2("arith.divf", a[0], a[1], T), n = fresh();
        line(fmt::format("{} = math.floor {} : {}", n, q, T));
        return n;
      }
      case CoreOp::Rem: return op2("arith.remf", a[0], a[1], T);
      case CoreOp::Mod: {
        std::string zero = constant(f64Const(0.0), T);
        std::string rem = op2("arith.remf", a[0], a[1], T);
        std::string nz = cmp("arith.cmpf", "une", rem, zero, T);
        std::string signs = op2("arith.xori", cmp("arith.cmpf", "olt", rem, zero, T),
                                cmp("arith.cmpf", "olt", a[1], zero, T), "i1");
        return select(op2("arith.andi", nz, signs, "i1"), op2("arith.addf", rem, a[1], T), rem, T);
      }
      case CoreOp::Pow: return op2("math.powf", a[0], a[1], T);
      case CoreOp::Neg: return un("arith.negf");
      case CoreOp::Abs: return un("math.absf");
      case CoreOp::Min: return op2("arith.minnumf", a[0], a[1], T);  // fmin: NaN-ignoring
      case CoreOp::Max: return op2("arith.maxnumf", a[0], a[1], T);
      default: return a[0];
    }
  }

  bool call(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& out,
            std::string& why) {
    const ir::Attr* callee = n.attr("callee");
    if (!callee || callee->kind() != ir::Attr::Kind::Symbol) return fail("func.call without a callee", why);
    const ir::Graph* g = module_.lookup(callee->getSymbol());
    if (!g) return fail("calls unknown graph @" + callee->getSymbol(), why);
    if (out.size() != 1 || g->results().size() != 1 || g->numParams() != a.size())
      return fail("calls @" + g->name() + " with a signature that is not one scalar result", why);
    callees_->insert(g->name());
    if (g == self_ && loopForm_ && loopDepth_ < loopLevels_) {
      // A non-tail self-call of a loop-form graph: its own loop, inlined.
      ++loopDepth_;
      std::string fin;
      bool ok = emitLoop(a, fin, why);
      --loopDepth_;
      if (!ok) return false;
      names_[n.result(0)] = fin;
      return true;
    }
    if (g == self_ && inlineSelf_ && inlineDepth_ == 0 && !tail_.count(n.result(0))) return inlineSelfCall(n, a, why);
    std::string args = "%ctx", types = "!llvm.ptr";
    for (size_t i = 0; i < a.size(); ++i) {
      ScalarKind k;
      if (!scalarKind(g->param(i)->type(), k)) return fail("calls @" + g->name() + " with non-scalar parameters", why);
      args += ", " + a[i];
      types += std::string(", ") + mlirType(k);
    }
    std::string r = fresh();
    line(fmt::format("{} = func.call {}({}) : ({}) -> {}", r, symbol(g->name()), args, types, mlirType(out[0])));
    names_[n.result(0)] = r;
    return true;
  }

  std::string typeList(const std::vector<ScalarKind>& ks) {
    std::string s;
    for (size_t i = 0; i < ks.size(); ++i) s += std::string(i ? ", " : "") + mlirType(ks[i]);
    return s;
  }

  /// Binds `region`'s parameters to `args` and emits its body; its result
  /// names go to `res`.
  bool inlineRegion(const ir::Graph& region, const std::vector<std::string>& args, std::vector<std::string>& res,
                    std::string& why) {
    if (region.numParams() != args.size()) return fail("region parameters do not match the operands", why);
    for (size_t i = 0; i < args.size(); ++i) names_[region.param(i)] = args[i];
    return body(region, res, why);
  }

  bool ifOp(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& out,
            std::string& why) {
    if (n.numRegions() != 2) return fail("ctrl.if without two regions", why);
    std::vector<std::string> args(a.begin() + 1, a.end());
    std::string r = fresh();
    std::string types = typeList(out);
    if (out.empty()) line(fmt::format("scf.if {} {{", a[0]));
    else line(fmt::format("{}{} = scf.if {} -> ({}) {{", r, out.size() > 1 ? ":" + std::to_string(out.size()) : "", a[0], types));
    std::string saved = indent_;
    for (size_t arm = 0; arm < 2; ++arm) {
      indent_ = saved + "  ";
      std::vector<std::string> res;
      if (!inlineRegion(*n.region(arm), args, res, why)) return false;
      if (res.size() != out.size()) return fail("a ctrl.if arm yields the wrong number of values", why);
      if (!out.empty()) {
        std::string list;
        for (size_t i = 0; i < res.size(); ++i) list += (i ? ", " : "") + res[i];
        line(fmt::format("scf.yield {} : {}", list, types));
      }
      indent_ = saved;
      line(arm == 0 ? "} else {" : "}");
    }
    for (size_t i = 0; i < out.size(); ++i) names_[n.result(i)] = out.size() == 1 ? r : r + "#" + std::to_string(i);
    return true;
  }

  bool loop(const ir::Node& n, const std::vector<std::string>& a, const std::vector<ScalarKind>& in,
            const std::vector<ScalarKind>& out, std::string& why) {
    if (n.numRegions() != 2 || in != out || in.empty()) return fail("ctrl.loop shape", why);
    std::string types = typeList(in);
    std::string r = fresh();
    std::vector<std::string> cur, next;
    std::string inits;
    for (size_t i = 0; i < a.size(); ++i) {
      cur.push_back(fresh());
      inits += (i ? ", " : "") + cur.back() + " = " + a[i];
    }
    line(fmt::format("{}:{} = scf.while ({}) : ({}) -> ({}) {{", r, in.size(), inits, types, types));
    std::string saved = indent_;
    indent_ = saved + "  ";
    std::vector<std::string> c;
    if (!inlineRegion(*n.region(0), cur, c, why)) return false;
    if (c.size() != 1) return fail("ctrl.loop condition does not yield one bool", why);
    std::string list;
    for (size_t i = 0; i < cur.size(); ++i) list += (i ? ", " : "") + cur[i];
    line(fmt::format("scf.condition({}) {} : {}", c[0], list, types));
    indent_ = saved;
    std::string params;
    for (size_t i = 0; i < in.size(); ++i) {
      next.push_back(fresh());
      params += std::string(i ? ", " : "") + next.back() + ": " + mlirType(in[i]);
    }
    line(fmt::format("}} do {{\n{}^bb0({}):", saved, params));
    indent_ = saved + "  ";
    std::vector<std::string> res;
    if (!inlineRegion(*n.region(1), next, res, why)) return false;
    if (res.size() != in.size()) return fail("ctrl.loop body yields the wrong number of values", why);
    std::string yl;
    for (size_t i = 0; i < res.size(); ++i) yl += (i ? ", " : "") + res[i];
    line(fmt::format("scf.yield {} : {}", yl, types));
    indent_ = saved;
    line("}");
    for (size_t i = 0; i < out.size(); ++i) names_[n.result(i)] = r + "#" + std::to_string(i);
    return true;
  }

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

std::string dispatcher(const std::vector<ScalarFunction>& fs) {
  std::string s = fmt::format(
      "  func.func @{}(%fn: i64, %ctx: !llvm.ptr, %args: !llvm.ptr, %res: !llvm.ptr) {{\n"
      "    %i = arith.index_cast %fn : i64 to index\n    scf.index_switch %i\n",
      ScalarAbi::kDispatch);
  for (const ScalarFunction& f : fs) {
    s += fmt::format("    case {} {{\n", f.index);
    std::string args = "%ctx", types = "!llvm.ptr";
    for (size_t i = 0; i < f.params.size(); ++i) {
      s += fmt::format("      %p{0} = llvm.getelementptr %args[{0}] : (!llvm.ptr) -> !llvm.ptr, i64\n", i);
      if (f.params[i] == ScalarKind::Bool) {
        s += fmt::format("      %w{0} = llvm.load %p{0} : !llvm.ptr -> i64\n      %a{0} = arith.trunci %w{0} : i64 to i1\n", i);
      } else {
        s += fmt::format("      %a{0} = llvm.load %p{0} : !llvm.ptr -> {1}\n", i, mlirType(f.params[i]));
      }
      args += fmt::format(", %a{}", i);
      types += std::string(", ") + mlirType(f.params[i]);
    }
    s += fmt::format("      %r = func.call {}({}) : ({}) -> {}\n", symbol(f.graph), args, types, mlirType(f.result));
    if (f.result == ScalarKind::Bool) s += "      %rw = arith.extui %r : i1 to i64\n      llvm.store %rw, %res : i64, !llvm.ptr\n";
    else s += fmt::format("      llvm.store %r, %res : {}, !llvm.ptr\n", mlirType(f.result));
    s += "      scf.yield\n    }\n";
  }
  s += "    default {\n    }\n    return\n  }\n";
  return s;
}

}  // namespace

ScalarPlan planScalarModule(const ir::Module& m) {
  ScalarPlan plan;
  struct Emitted {
    std::string text;
    std::set<std::string> callees;
  };
  std::map<std::string, Emitted> ok;  // by name: a deterministic order
  std::vector<std::string> order;
  for (const auto& g : m.graphs()) {
    Emitted e;
    std::string why;
    GraphEmitter em(m);
    if (em.emit(*g, e.text, e.callees, why)) {
      order.push_back(g->name());
      ok.emplace(g->name(), std::move(e));
    } else {
      plan.rejected.emplace_back(g->name(), why);
    }
  }
  // Drop graphs that call a graph that is not compiled, until none does.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = ok.begin(); it != ok.end();) {
      std::string missing;
      for (const std::string& c : it->second.callees)
        if (!ok.count(c)) missing = c;
      if (missing.empty()) {
        ++it;
        continue;
      }
      plan.rejected.emplace_back(it->first, "calls @" + missing + ", which is not compiled");
      it = ok.erase(it);
      changed = true;
    }
  }
  std::string funcs;
  for (const std::string& name : order) {
    auto it = ok.find(name);
    if (it == ok.end()) continue;
    ScalarFunction f;
    f.graph = name;
    f.index = uint32_t(plan.functions.size());
    const ir::Graph& g = *m.lookup(name);
    for (size_t i = 0; i < g.numParams(); ++i) scalarKind(g.param(i)->type(), f.params.emplace_back());
    scalarKind(g.results()[0]->type(), f.result);
    plan.functions.push_back(std::move(f));
    funcs += it->second.text;
  }
  if (plan.functions.empty()) return plan;
  plan.mlir = fmt::format("module attributes {{xacc.lowering = \"{}\"}} {{\n", kScalarLoweringVersion);
  plan.mlir +=
      "  llvm.func @longjmp(!llvm.ptr, i32) attributes {passthrough = [\"noreturn\"]}\n"
      "  // Gives up on the whole native call: back to the entry's setjmp. Cold\n"
      "  // and noreturn: the code after a bail-out check is the only path on.\n"
      "  llvm.func internal @xacc_scalar_bail(%ctx: !llvm.ptr, %code: i32)\n"
      "      attributes {passthrough = [\"noreturn\", \"cold\", \"noinline\"]} {\n"
      "    %p = llvm.getelementptr %ctx[1] : (!llvm.ptr) -> !llvm.ptr, i64\n"
      "    %jb = llvm.load %p : !llvm.ptr -> !llvm.ptr\n"
      "    llvm.call @longjmp(%jb, %code) : (!llvm.ptr, i32) -> ()\n"
      "    llvm.unreachable\n  }\n";
  plan.mlir += funcs;
  plan.mlir += dispatcher(plan.functions);
  plan.mlir += "}\n";
  return plan;
}

std::string describeScalarPlan(const ScalarPlan& p) {
  std::string s;
  for (const ScalarFunction& f : p.functions) s += fmt::format("compiled @{} (function {})\n", f.graph, f.index);
  for (const auto& [g, why] : p.rejected) s += fmt::format("runtime  @{}: {}\n", g, why);
  return s;
}

}  // namespace xacc::backend::mlir
