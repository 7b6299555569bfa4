// Lowering of statements, blocks and control flow: block values and `return`
// (spec 9.13), let/var declarations and destructuring (8.2), `if` as
// `ctrl.if` with isolated arm regions and `match` as a chain of them (9.11,
// 9.12). Arms receive the effect token and their captures as region
// parameters and return (token, value); see Note [Block functions].
#include "LowerImpl.h"

namespace xacc::camel::sema {

using ir::CoreOp;
using ir::Type;
using ir::Value;

Lowerer::BlockResult Lowerer::lowerStmts(const std::vector<Stmt*>& stmts) {
  BlockResult r;
  for (Stmt* s : stmts) {
    switch (s->kind()) {
      case NodeKind::ReturnStmt: {
        auto* ret = cast<ReturnStmt>(s);
        if (ret->form != ReturnStmt::Form::Return) {
          report(diags_, Diag::FeatureNotSupported, s->loc(), {"'raise'/'throw' (exceptions)"});
          r.value = {};
          r.returned = true;
          return r;
        }
        if (ret->values.empty()) {
          r.value = nullConst();
        } else if (ret->values.size() == 1) {
          r.value = expr(ret->values[0]);
        } else {
          std::vector<Value*> vs;
          bool ok = true;
          for (Expr* e : ret->values) {
            LV v = expr(e);
            ok &= bool(v);
            vs.push_back(v.v);
          }
          r.value = ok ? one(CoreOp::TupleMake, vs, s->range()) : LV{};
        }
        r.returned = true;
        return r;
      }
      case NodeKind::ExprStmt: r.value = expr(cast<ExprStmt>(s)->expr); break;
      case NodeKind::DataDecl: {
        auto* d = cast<DataDecl>(s);
        lowerDataDecl(d);
        auto& bs = prog_.declBindings[d];
        r.value = bs.empty() ? LV{} : readBinding(bs.back(), d->range());
        break;
      }
      case NodeKind::FuncDecl: {
        FuncInfo* f = prog_.funcOf[s];
        if (f && f->decorated)
          lowerNestedDecorated(f);
        else if (f)
          lowerFunction(f);
        r.value = nullConst();
        break;
      }
      case NodeKind::BlockStmt: {
        bool savedSync = inSync_;
        inSync_ = inSync_ || cast<BlockStmt>(s)->block->isSync;
        BlockResult inner = lowerStmts(cast<BlockStmt>(s)->block->stmts);
        inSync_ = savedSync;
        if (inner.returned) return inner;
        r.value = inner.value;
        break;
      }
      default: r.value = nullConst(); break;
    }
  }
  if (stmts.empty()) r.value = nullConst();
  return r;
}

LV Lowerer::lowerBody(Expr* body) {
  if (!body) return {};
  // Each block-function has its own sync-ness (spec 11.3) and is outside any
  // `wait` of the code that contains it.
  bool savedSync = inSync_;
  int savedWait = waitDepth_;
  auto* b = dyn_cast<BlockExpr>(body);
  inSync_ = b && b->isSync;
  waitDepth_ = 0;
  LV v = b ? lowerStmts(b->stmts).value : expr(body);
  inSync_ = savedSync;
  waitDepth_ = savedWait;
  return v;
}

void Lowerer::lowerDataDecl(DataDecl* d) {
  std::vector<Binding*>& bs = prog_.declBindings[d];
  std::vector<LV> values;
  auto expectedOf = [&](size_t i) { return i < bs.size() ? bs[i]->declared : Type(); };
  if (d->values.size() == bs.size()) {
    for (size_t i = 0; i < d->values.size(); ++i) values.push_back(expr(d->values[i], expectedOf(i)));
  } else if (d->values.size() == 1) {
    LV t = expr(d->values[0]);
    if (!t) return;
    if (t.t.kind() != ir::TypeKind::Tuple || t.t.elements().size() != bs.size()) {
      report(diags_, Diag::TupleUnpackingCountMismatch, d->values[0]->loc(),
             {camelTypeName(t.t), std::to_string(bs.size())});
      return;
    }
    for (size_t i = 0; i < bs.size(); ++i)
      values.push_back(one(CoreOp::TupleGet, {t.v}, d->range(),
                           ir::attrs({{"index", ir::Attr::integer(int64_t(i))}})));
  } else {
    report(diags_, Diag::TupleUnpackingCountMismatch, d->range().loc(),
           {std::to_string(d->values.size()) + " values", std::to_string(bs.size())});
    return;
  }
  for (size_t i = 0; i < bs.size(); ++i) {
    Binding* b = bs[i];
    LV v = values[i];
    if (!v) continue;
    if (b->declared && !assignable(b->declared, v.t)) {
      typeError(d->values.size() == bs.size() ? d->values[i]->range() : d->range(), b->declared, v.t);
      continue;
    }
    if (b->declared) v = coerce(v, b->declared, b->range);
    if (b->isCell) v = one(CoreOp::ListMake, {v.v}, b->range);
    cx_->env[b] = v.v;
  }
}

std::unique_ptr<ir::Graph> Lowerer::buildRegion(const char* label, Expr* body,
                                                const std::vector<Value*>& extra,
                                                const std::vector<Binding*>& caps, LV& value,
                                                const std::function<LV()>& custom) {
  auto g = std::make_unique<ir::Graph>(label);
  Ctx c;
  c.fn = cx_->fn;
  c.g = g.get();
  if (cx_->tok) c.tok = g->addParam(Type::token(), "t");
  std::vector<Value*> extraParams;
  for (Value* v : extra) extraParams.push_back(g->addParam(v->type()));
  for (Binding* b : caps) {
    auto it = cx_->env.find(b);
    c.env[b] = g->addParam(it != cx_->env.end() && it->second ? it->second->type() : Type::any(),
                           b->name);
  }
  // Bindings that are not captures stay visible to `custom` through the
  // outer context only; arms see exactly their captures.
  {
    CtxScope scope(*this, c);
    if (custom) {
      // `custom` builds the nested chain of a match; it reads extra params.
      Ctx* saved = cx_;
      (void)saved;
      scratchExtra_ = extraParams;
      value = custom();
    } else {
      value = body ? lowerBody(body) : nullConst();
    }
    if (value) {
      std::vector<Value*> rs;
      std::vector<Type> rts;
      if (c.tok) {
        rs.push_back(c.tok);
        rts.push_back(Type::token());
      }
      rs.push_back(value.v);
      rts.push_back(value.t);
      g->setResultTypes(rts);
      g->setResults(rs);
    }
  }
  return g;
}

namespace {

void unionCaptures(std::vector<Binding*>& out, std::set<Binding*>& seen, FuncInfo* f) {
  if (!f) return;
  for (Binding* b : f->captures)
    if (seen.insert(b).second) out.push_back(b);
}

}  // namespace

/// Joins two arm regions into a ctrl.if node.
LV Lowerer::joinIf(LV cond, std::unique_ptr<ir::Graph> thenG, LV thenV,
                   std::unique_ptr<ir::Graph> elseG, LV elseV, const std::vector<Value*>& extra,
                   const std::vector<Binding*>& caps, const SourceRange& at, const char* what) {
  if (!cond || !thenV || !elseV) return {};
  if (!sameType(thenV.t, elseV.t)) {
    report(diags_, Diag::BranchReturnTypeMismatch, at.loc(),
           {what, camelTypeName(thenV.t), camelTypeName(elseV.t)});
    return {};
  }
  // Struct arms equal up to field order: the else arm's results are declared as the then arm's.
  if (thenV.t != elseV.t) elseG->setResultTypes(thenG->resultTypes());
  std::vector<Value*> ops{cond.v};
  if (cx_->tok) ops.push_back(cx_->tok);
  ops.insert(ops.end(), extra.begin(), extra.end());
  for (Binding* b : caps) ops.push_back(cx_->env.count(b) ? cx_->env[b] : nullptr);
  std::vector<Type> rts;
  if (cx_->tok) rts.push_back(Type::token());
  rts.push_back(thenV.t);
  ir::Node* n = node(CoreOp::If, ops, {}, rts, at);
  if (!n) return {};
  n->addRegion(std::move(thenG));
  n->addRegion(std::move(elseG));
  if (cx_->tok) {
    cx_->tok = n->result(0);
    return {n->result(1), thenV.t};
  }
  return {n->result(0), thenV.t};
}

LV Lowerer::lowerIf(IfExpr* e) {
  LV cond = expr(e->cond);
  if (cond && cond.t.kind() != ir::TypeKind::Bool) {
    report(diags_, Diag::ConditionNotBool, e->cond->loc(), {"if", camelTypeName(cond.t)});
    cond = {};
  }
  std::vector<Binding*> caps;
  std::set<Binding*> seen;
  unionCaptures(caps, seen, prog_.funcOf[e->thenArm]);
  if (e->elseArm) unionCaptures(caps, seen, prog_.funcOf[e->elseArm]);
  LV thenV, elseV;
  auto thenG = buildRegion("then", e->thenArm, {}, caps, thenV);
  auto elseG = buildRegion("else", e->elseArm, {}, caps, elseV);
  return joinIf(cond, std::move(thenG), thenV, std::move(elseG), elseV, {}, caps, e->range(), "if");
}

LV Lowerer::lowerMatch(MatchExpr* e) {
  LV subject = expr(e->subject);
  if (!subject) return {};
  std::vector<Binding*> caps;
  std::set<Binding*> seen;
  for (MatchCase& c : e->cases) unionCaptures(caps, seen, prog_.funcOf[c.body]);
  // Pattern tests, computed up front in the enclosing graph.
  std::vector<Value*> tests;
  size_t n = 0;
  bool wildcard = false;
  for (MatchCase& c : e->cases) {
    Value* t = nullptr;
    for (Pattern* p : c.patterns) {
      Value* one_ = nullptr;
      if (isa<WildcardPattern>(p)) {
        wildcard = true;
        one_ = b_.constBool(true);
      } else if (auto* lp = dyn_cast<LiteralPattern>(p)) {
        LV lit = expr(lp->value);
        if (!lit) return {};
        if (!sameType(lit.t, subject.t)) {
          report(diags_, Diag::PatternTypeMismatch, p->loc(), {camelTypeName(lit.t), camelTypeName(subject.t)});
          return {};
        }
        one_ = one(CoreOp::Eq, {subject.v, lit.v}, p->range()).v;
      } else {
        return {};  // reported by sema
      }
      t = t ? one(CoreOp::Or, {t, one_}, p->range()).v : one_;
    }
    tests.push_back(t);
    ++n;
    if (wildcard) break;
  }
  // Builds the chain from case i on, in the current context; extra params of the
  // enclosing region are the remaining tests.
  std::function<LV(size_t, std::vector<Value*>)> chain = [&](size_t i,
                                                             std::vector<Value*> rest) -> LV {
    MatchCase& c = e->cases[i];
    bool last = i + 1 == n;
    if (last && wildcard) return lowerBody(c.body);
    std::vector<Value*> later(rest.begin() + 1, rest.end());
    LV thenV, elseV;
    auto thenG = buildRegion("then", c.body, later, caps, thenV);
    std::unique_ptr<ir::Graph> elseG;
    if (last) {
      elseG = buildRegion("else", nullptr, later, caps, elseV, [&]() -> LV {
        // No case matched: a located run-time error (spec 9.12).
        Value* f = b_.constBool(false);
        ir::Node* a = effect(CoreOp::Assert, {f},
                             ir::attrs({{"message", ir::Attr::string("no case of 'match' matched the value of '" +
                                                                     e->subject->fullName() + "'")}}),
                             {}, e->range());
        if (!a) return {};
        // Never reached (the assertion fails first); gives the arm its type.
        return lowerBody(c.body);
      });
    } else {
      elseG = buildRegion("else", nullptr, later, caps, elseV,
                          [&]() -> LV { return chain(i + 1, scratchExtra_); });
    }
    return joinIf({rest[0], Type::boolean()}, std::move(thenG), thenV, std::move(elseG), elseV,
                  later, caps, c.range, "match");
  };
  return chain(0, tests);
}

}  // namespace xacc::camel::sema
