// Graph -> Program: liveness (demand-driven evaluation), slot assignment,
// typed fast paths, ctrl.if arms compiled inline as branches, and tail-position
// detection (a call whose results are its frame's results replaces the frame).
#include "Program.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "xacc/ir/Interpreter.h"

namespace xacc::runtime {

namespace {

using ir::CoreOp;

bool allOf(const ir::Node& n, ir::TypeKind k, unsigned bits = 64) {
  for (ir::Value* v : n.operands()) {
    ir::Type t = v->type();
    if (t.kind() != k) return false;
    if ((k == ir::TypeKind::Int || k == ir::TypeKind::Float) && t.bitWidth() != bits) return false;
  }
  return true;
}

Code fastCode(const ir::Node& n) {
  if (n.op().coreId < 0) return Code::Generic;
  CoreOp op = CoreOp(n.op().coreId);
  bool ints = allOf(n, ir::TypeKind::Int) && n.numOperands() == 2;
  bool floats = allOf(n, ir::TypeKind::Float) && n.numOperands() == 2;
  switch (op) {
    case CoreOp::Const: return Code::Const;
    case CoreOp::Add: return ints ? Code::AddI : floats ? Code::AddF : Code::Generic;
    case CoreOp::Sub: return ints ? Code::SubI : floats ? Code::SubF : Code::Generic;
    case CoreOp::Mul: return ints ? Code::MulI : floats ? Code::MulF : Code::Generic;
    case CoreOp::Div: return ints ? Code::DivI : floats ? Code::DivF : Code::Generic;
    case CoreOp::Rem: return ints ? Code::RemI : Code::Generic;
    case CoreOp::Lt: return ints ? Code::LtI : floats ? Code::LtF : Code::Generic;
    case CoreOp::Le: return ints ? Code::LeI : floats ? Code::LeF : Code::Generic;
    case CoreOp::Gt: return ints ? Code::GtI : floats ? Code::GtF : Code::Generic;
    case CoreOp::Ge: return ints ? Code::GeI : floats ? Code::GeF : Code::Generic;
    case CoreOp::Eq: return ints ? Code::EqI : Code::Generic;
    case CoreOp::Ne: return ints ? Code::NeI : Code::Generic;
    case CoreOp::Not: return Code::Not;
    case CoreOp::And: return Code::And;
    case CoreOp::Or: return Code::Or;
    case CoreOp::Select: return Code::Select;
    case CoreOp::Call: return Code::Call;
    case CoreOp::Apply: return Code::Apply;
    case CoreOp::FuncRef: return Code::FuncRef;
    case CoreOp::Loop: return Code::Loop;
    case CoreOp::ListGet: return Code::ListGet;
    case CoreOp::Builtin: case CoreOp::BuiltinEffect: return Code::Builtin;
    default: return Code::Generic;
  }
}

class Compiler {
public:
  Compiler(Program& p, bool parallel, const SafeFn* safe)
      : p_(p), module_(p.graph->module()), parallel_(parallel), safe_(safe) {}

  /// Emits `g`'s live nodes. `resultsTail`: the frame returns g's results
  /// directly, so a final call producing them can replace the frame.
  /// Returns the slots holding g's results.
  std::vector<uint32_t> emit(const ir::Graph& g, std::unordered_map<const ir::Value*, uint32_t>& slot,
                             bool resultsTail, const std::vector<uint32_t>* preferred = nullptr) {
    // A ctrl.if arm's result values are computed straight into the node's
    // result slots (no moves) when they are single results defined in the arm.
    const ir::Graph* savedGraph = curGraph_;
    const std::vector<uint32_t>* savedPreferred = preferred_;
    std::vector<bool> savedClaimed = std::move(claimed_);
    curGraph_ = &g;
    preferred_ = preferred;
    claimed_.assign(g.results().size(), false);
    std::vector<uint32_t> out = emitBody(g, slot, resultsTail);
    curGraph_ = savedGraph;
    preferred_ = savedPreferred;
    claimed_ = std::move(savedClaimed);
    return out;
  }

  std::vector<uint32_t> emitBody(const ir::Graph& g,
                                 std::unordered_map<const ir::Value*, uint32_t>& slot,
                                 bool resultsTail) {
    std::vector<const ir::Node*> order;
    order.reserve(g.numNodes());
    for (ir::Node* n : g) order.push_back(n);
    std::unordered_set<const ir::Value*> needed;
    for (ir::Value* v : g.results()) needed.insert(v);
    std::vector<bool> keep(order.size(), false);
    size_t lastLive = order.size();
    for (size_t i = order.size(); i-- > 0;) {
      const ir::Node* n = order[i];
      bool live = false;
      for (size_t r = 0; r < n->numResults() && !live; ++r) live = needed.count(n->result(r));
      if (!live) continue;
      keep[i] = true;
      if (lastLive == order.size()) lastLive = i;
      for (ir::Value* v : n->operands()) needed.insert(v);
    }
    std::vector<size_t> group;
    if (parallel_) group = independentCalls(order, keep, lastLive);
    std::unordered_set<const ir::Value*> tainted;  // results of deferred group members, transitively
    std::vector<size_t> deferred;
    for (size_t i = 0; i < order.size(); ++i) {
      if (!keep[i]) continue;
      bool member = std::find(group.begin(), group.end(), i) != group.end();
      if (!group.empty() && !member && dependsOn(*order[i], tainted)) {
        for (size_t r = 0; r < order[i]->numResults(); ++r) tainted.insert(order[i]->result(r));
        deferred.push_back(i);
        continue;
      }
      if (member && i != group.back()) {
        for (size_t r = 0; r < order[i]->numResults(); ++r) tainted.insert(order[i]->result(r));
        continue;  // emitted with the group at its last member
      }
      if (member) {
        // The group: ParCall, then each member's call; a sequential run
        // executes the calls one after the other, a parallel one skips them.
        Instr par;
        par.code = Code::ParCall;
        par.node = order[i];
        par.jump = uint32_t(group.size());
        p_.code.push_back(std::move(par));
        for (size_t m : group) emitNode(*order[m], slot, false);
        for (size_t d : deferred) emitNode(*order[d], slot, resultsTail && d == lastLive, &g);
        deferred.clear();
        group.clear();
        continue;
      }
      emitNode(*order[i], slot, resultsTail && i == lastLive, &g);
    }
    std::vector<uint32_t> out;
    for (ir::Value* v : g.results()) out.push_back(slot.at(v));
    return out;
  }

private:
  static bool dependsOn(const ir::Node& n, const std::unordered_set<const ir::Value*>& set) {
    for (ir::Value* v : n.operands())
      if (set.count(v)) return true;
    return false;
  }

  /// A set of live calls to known graphs none of which depends on another
  /// (the divide-and-conquer shape `f(a) + f(b)`), or empty when there are fewer
  /// than two. The tail node is excluded: it replaces the frame instead. A
  /// member is a pure call or a call to a concurrency-safe graph; a token one
  /// member passes to the next does not order them (their effects commute),
  /// but anything else on the token chain between two members does.
  std::vector<size_t> independentCalls(const std::vector<const ir::Node*>& order,
                                       const std::vector<bool>& keep, size_t lastLive) {
    std::vector<size_t> group;
    std::unordered_set<const ir::Value*> reach;  // values depending on a group member
    std::unordered_set<const ir::Value*> memberTokens;  // token results of members
    for (size_t i = 0; i < order.size(); ++i) {
      if (!keep[i]) continue;
      const ir::Node& n = *order[i];
      const ir::Graph* callee = n.op().is(CoreOp::Call) && module_ && n.attr("callee")
                                    ? module_->lookup(n.attr("callee")->getSymbol())
                                    : nullptr;
      bool safeCall = callee && i != lastLive && (!n.hasEffects() || (safe_ && (*safe_)(*callee)));
      bool dep = false;
      for (ir::Value* v : n.operands())
        if (reach.count(v) && !(safeCall && memberTokens.count(v))) dep = true;
      if (safeCall && !dep) {
        for (size_t r = 0; r < n.numResults(); ++r)
          if (n.result(r)->type().isToken()) memberTokens.insert(n.result(r));
        group.push_back(i);
        dep = true;
      } else if (!group.empty() && n.hasEffects()) {
        // An effect between members: a later member must not run before it
        // (it may fail, and the effect's output must come first, as in seq).
        break;
      }
      if (dep)
        for (size_t r = 0; r < n.numResults(); ++r) reach.insert(n.result(r));
    }
    if (group.size() < 2) group.clear();
    return group;
  }

  static bool isIntFast(Code c) {
    switch (c) {
      case Code::AddI: case Code::SubI: case Code::MulI: case Code::DivI: case Code::RemI:
      case Code::LtI: case Code::LeI:
      case Code::GtI: case Code::GeI: case Code::EqI: case Code::NeI: return true;
      default: return false;
    }
  }

  /// `v` is an i64 constant (its value in `out`).
  static bool intConst(const ir::Value* v, int64_t& out) {
    const ir::Node* d = v->definingNode();
    if (!d || !d->op().is(CoreOp::Const) || !v->type().isInt() || v->type().bitWidth() != 64)
      return false;
    const ir::Attr* a = d->attr("value");
    if (!a || a->kind() != ir::Attr::Kind::Int) return false;
    out = a->getInt();
    return true;
  }

  /// A constant all of whose uses read it as an immediate needs no slot.
  static bool onlyImmediateUses(const ir::Node& n) {
    if (!n.op().is(CoreOp::Const) || n.numResults() != 1) return false;
    int64_t k;
    if (!intConst(n.result(0), k)) return false;
    for (const ir::Use& u : n.result(0)->uses()) {
      if (!u.user || u.index != 1 || !isIntFast(fastCode(*u.user)) || u.user->operand(0) == n.result(0))
        return false;
    }
    return n.result(0)->hasUses();
  }

  void emitNode(const ir::Node& n, std::unordered_map<const ir::Value*, uint32_t>& slot,
                bool tailCandidate, const ir::Graph* g = nullptr) {
      if (onlyImmediateUses(n)) return;
      // Tail position: the last live node yields exactly the results, in order.
      bool tail = false;
      if (tailCandidate && g && n.numResults() == g->results().size()) {
        tail = true;
        for (size_t r = 0; r < n.numResults(); ++r) tail &= g->results()[r] == n.result(r);
      }
      if (n.op().is(CoreOp::If)) {
        emitIf(n, slot, tail);
        return;
      }
      Instr in;
      in.node = &n;
      in.code = fastCode(n);
      in.tail = tail && (in.code == Code::Call || in.code == Code::Apply);
      if (isIntFast(in.code) && intConst(n.operand(1), in.imm)) {
        in.hasImm = true;
        in.opBegin = uint32_t(p_.operandSlots.size());
        in.opCount = 1;
        p_.operandSlots.push_back(slot.at(n.operand(0)));
      } else {
        operands(in, n, slot);
      }
      results(in, n, slot);
      if (in.code == Code::Const) {
        if (!ir::attrToDatum(*n.attr("value"), n.result(0)->type(), in.constant)) in.code = Code::Generic;
      } else if (in.code == Code::Call) {
        const ir::Attr* c = n.attr("callee");
        in.target = module_ && c ? module_->lookup(c->getSymbol()) : nullptr;
        if (!in.target) in.code = Code::Generic;  // reports "unknown graph" when run
      } else if (in.code == Code::Builtin) {
        const ir::Attr* a = n.attr("name");
        in.builtin = a && a->kind() == ir::Attr::Kind::Str ? ir::BuiltinRegistry::get().lookup(a->getStr())
                                                          : nullptr;
        if (!in.builtin) in.code = Code::Generic;  // reports "unknown builtin" when run
        else if (a->getStr() == "len" && n.op().is(CoreOp::Builtin) && n.numOperands() == 1)
          in.code = Code::Len;
      } else if (in.code == Code::FuncRef) {
        const ir::Attr* c = n.attr("callee");
        in.target = module_ && c ? module_->lookup(c->getSymbol()) : nullptr;
      }
      p_.code.push_back(std::move(in));
  }

  void operands(Instr& in, const ir::Node& n, std::unordered_map<const ir::Value*, uint32_t>& slot,
                size_t from = 0) {
    in.opBegin = uint32_t(p_.operandSlots.size());
    in.opCount = uint32_t(n.numOperands() - from);
    for (size_t i = from; i < n.numOperands(); ++i) p_.operandSlots.push_back(slot.at(n.operand(i)));
  }
  void results(Instr& in, const ir::Node& n, std::unordered_map<const ir::Value*, uint32_t>& slot) {
    if (preferred_ && curGraph_ && n.numResults() == 1) {
      const auto& rs = curGraph_->results();
      for (size_t k = 0; k < rs.size(); ++k)
        if (rs[k] == n.result(0) && !claimed_[k]) {
          claimed_[k] = true;
          in.dst = (*preferred_)[k];
          in.nres = 1;
          slot[n.result(0)] = in.dst;
          return;
        }
    }
    in.dst = p_.numSlots;
    in.nres = uint32_t(n.numResults());
    for (size_t r = 0; r < n.numResults(); ++r) slot[n.result(r)] = p_.numSlots++;
  }
  void move(uint32_t dst, uint32_t src, const ir::Node* n) {
    Instr mv;
    mv.code = Code::Move;
    mv.node = n;
    mv.dst = dst;
    mv.opBegin = uint32_t(p_.operandSlots.size());
    mv.opCount = 1;
    p_.operandSlots.push_back(src);
    p_.code.push_back(std::move(mv));
  }

  // Branch c -> else; then-arm; Jump end; else-arm; end. Each arm binds its
  // parameters with moves and moves its results into the node's result slots.
  void emitIf(const ir::Node& n, std::unordered_map<const ir::Value*, uint32_t>& slot, bool tail) {
    Instr br;
    br.code = Code::Branch;
    br.node = &n;
    operands(br, n, slot);
    br.opCount = 1;  // only the condition; arm arguments are moved below
    std::vector<uint32_t> args;
    for (size_t i = 1; i < n.numOperands(); ++i) args.push_back(slot.at(n.operand(i)));
    Instr dummy;
    results(dummy, n, slot);
    uint32_t dst = dummy.dst;
    size_t brIndex = p_.code.size();
    p_.code.push_back(std::move(br));
    size_t jumpIndex = 0;
    for (int arm = 0; arm < 2; ++arm) {
      if (arm == 1) p_.code[brIndex].jump = uint32_t(p_.code.size());
      const ir::Graph& r = *n.region(arm);
      // Values are immutable, so an arm's parameters simply alias the
      // operand slots: no copies on entry.
      std::unordered_map<const ir::Value*, uint32_t> inner;
      for (size_t i = 0; i < r.numParams(); ++i) inner[r.param(i)] = args[i];
      std::vector<uint32_t> want(r.results().size());
      for (size_t i = 0; i < want.size(); ++i) want[i] = dst + uint32_t(i);
      std::vector<uint32_t> res = emit(r, inner, tail, &want);
      for (size_t i = 0; i < res.size(); ++i)
        if (res[i] != dst + uint32_t(i)) move(dst + uint32_t(i), res[i], &n);
      if (arm == 0) {
        Instr j;
        j.code = Code::Jump;
        j.node = &n;
        jumpIndex = p_.code.size();
        p_.code.push_back(std::move(j));
      }
    }
    p_.code[jumpIndex].jump = uint32_t(p_.code.size());
  }

  Program& p_;
  const ir::Module* module_;
  bool parallel_;
  const SafeFn* safe_;
  const ir::Graph* curGraph_ = nullptr;
  const std::vector<uint32_t>* preferred_ = nullptr;
  std::vector<bool> claimed_;
};

/// Cheap rewrites on the finished code: operands cached in the instruction,
/// a Jump to a Ret returns directly, and a typed compare feeding the Branch
/// right after it (not a jump target) becomes a fused compare-and-branch.
void peephole(Program& p) {
  for (Instr& in : p.code) {
    if (in.opCount > 0) in.a = p.operandSlots[in.opBegin];
    if (in.opCount > 1) in.b = p.operandSlots[in.opBegin + 1];
  }
  std::vector<bool> target(p.code.size() + 1, false);
  for (const Instr& in : p.code)
    if (in.code == Code::Branch || in.code == Code::Jump) target[in.jump] = true;
  for (Instr& in : p.code)
    if (in.code == Code::Jump && in.jump < p.code.size() && p.code[in.jump].code == Code::Ret)
      in.code = Code::Ret;
  for (size_t i = 0; i + 1 < p.code.size(); ++i) {
    Instr& c = p.code[i];
    const Instr& br = p.code[i + 1];
    if (br.code != Code::Branch || target[i + 1] || br.a != c.dst || c.nres != 1) continue;
    Code fused;
    switch (c.code) {
      case Code::LtI: fused = Code::BrLtI; break;
      case Code::LeI: fused = Code::BrLeI; break;
      case Code::GtI: fused = Code::BrGtI; break;
      case Code::GeI: fused = Code::BrGeI; break;
      case Code::EqI: fused = Code::BrEqI; break;
      case Code::NeI: fused = Code::BrNeI; break;
      default: continue;
    }
    c.code = fused;
    c.jump = br.jump;
  }
}

bool scalarType(ir::Type t) {
  switch (t.kind()) {
    case ir::TypeKind::Int: case ir::TypeKind::Float: case ir::TypeKind::Bool:
    case ir::TypeKind::Null: case ir::TypeKind::Token: return true;
    default: return false;
  }
}

bool scalarGraph(const ir::Graph& g) {
  for (size_t i = 0; i < g.numParams(); ++i)
    if (!scalarType(g.param(i)->type())) return false;
  for (const ir::Node* n : g) {
    for (size_t r = 0; r < n->numResults(); ++r)
      if (!scalarType(n->result(r)->type())) return false;
    for (size_t k = 0; k < n->numRegions(); ++k)
      if (!scalarGraph(*n->region(k))) return false;
  }
  return true;
}

/// Whether `p` can run unboxed (see Program::rawable). Constants get their
/// raw bits in `imm`.
bool rawable(Program& p) {
  if (!p.scalarOnly) return false;
  for (Instr& in : p.code) {
    switch (in.code) {
      case Code::Const:
        switch (in.constant.kind()) {
          case ir::DKind::Int: in.imm = in.constant.asInt(); break;
          case ir::DKind::Float: {
            double d = in.constant.asFloat();
            static_assert(sizeof(d) == sizeof(in.imm));
            __builtin_memcpy(&in.imm, &d, sizeof d);
            break;
          }
          case ir::DKind::Bool: in.imm = in.constant.asBool() ? 1 : 0; break;
          case ir::DKind::Null: case ir::DKind::Token: in.imm = 0; break;
          default: return false;
        }
        break;
      case Code::Call:
        if (in.opCount > 16) return false;
        break;
      case Code::Apply: case Code::FuncRef: case Code::Loop: case Code::Generic:
      case Code::ListGet: case Code::Len: case Code::Builtin:
        return false;
      default: break;
    }
  }
  return true;
}

}  // namespace

std::unique_ptr<Program> compileProgram(const ir::Graph& g, bool parallel, const SafeFn* safe) {
  auto p = std::make_unique<Program>();
  p->graph = &g;
  p->parallel = parallel;
  std::unordered_map<const ir::Value*, uint32_t> slot;
  p->numParams = uint32_t(g.numParams());
  for (size_t i = 0; i < g.numParams(); ++i) slot[g.param(i)] = p->numSlots++;
  Compiler c(*p, parallel, safe);
  p->resultSlots = c.emit(g, slot, /*resultsTail=*/true);
  Instr ret;
  ret.code = Code::Ret;
  p->code.push_back(std::move(ret));
  peephole(*p);
  p->scalarOnly = scalarGraph(g);
  p->rawable = rawable(*p);
  for (const Instr& in : p->code) {
    p->leaf &= in.code != Code::Call;
    p->hasParCall |= in.code == Code::ParCall;
  }
  for (size_t i = 0; i < p->resultSlots.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (p->resultSlots[i] == p->resultSlots[j]) p->distinctResults = false;
  for (size_t i = 0; i < g.numParams(); ++i) p->paramKinds.push_back(g.param(i)->type().kind());
  for (ir::Value* v : g.results()) p->resultKinds.push_back(v->type().kind());
  return p;
}

}  // namespace xacc::runtime
