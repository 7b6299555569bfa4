// Lowering and type checking of expressions (spec section 9): literals,
// names, operators with the operand rules of 9.7-9.9 (no implicit numeric
// conversion), assignment (SSA rebinding or a cell store), composite
// literals, member access and indexing, `as`, lambdas and composition.
#include "LowerImpl.h"

namespace xacc::camel::sema {

using ir::CoreOp;
using ir::Type;
using ir::TypeKind;
using ir::Value;

LV Lowerer::expr(Expr* e, Type expected) {
  if (!e) return {};
  setLoc(e->range());
  switch (e->kind()) {
    case NodeKind::ErrorExpr: return {};
    case NodeKind::IntLiteral: return {b_.constInt(cast<IntLiteral>(e)->value), Type::i64()};
    case NodeKind::RealLiteral: return {b_.constFloat(cast<RealLiteral>(e)->value), Type::f64()};
    case NodeKind::StringLiteral: return {b_.constStr(cast<StringLiteral>(e)->value), Type::string()};
    case NodeKind::BoolLiteral: return {b_.constBool(cast<BoolLiteral>(e)->value), Type::boolean()};
    case NodeKind::NullLiteral: return nullConst();
    case NodeKind::Name: {
      auto* n = cast<NameExpr>(e);
      auto it = prog_.refs.find(n);
      if (it == prog_.refs.end()) return {};
      Binding* b = it->second;
      switch (b->kind) {
        case BindKind::Local:
        case BindKind::Global: return readBinding(b, e->range());
        case BindKind::Func: return funcValue(b->overloads.front(), e->range());
        case BindKind::Builtin:
          report(diags_, Diag::FeatureNotSupported, e->loc(),
                 {"using the built-in '" + n->fullName() + "' as a value (wrap it in a lambda)"});
          return {};
        default: return {};
      }
    }
    case NodeKind::Unary: return unary(cast<UnaryExpr>(e));
    case NodeKind::Binary: return binary(cast<BinaryExpr>(e));
    case NodeKind::Assign: return assign(cast<AssignExpr>(e));
    case NodeKind::Wait: {
      ++waitDepth_;
      LV v = expr(cast<WaitExpr>(e)->operand, expected);
      --waitDepth_;
      return v;
    }
    case NodeKind::Cast: return castExpr(cast<CastExpr>(e));
    case NodeKind::Call: {
      auto* c = cast<CallExpr>(e);
      std::vector<ArgIn> args;
      for (Argument& a : c->args) args.push_back({a.value, {}, a.range});
      Expr* callee = c->callee;
      const std::vector<Argument>* withs = nullptr;
      if (auto* w = dyn_cast<WithExpr>(callee)) {
        callee = w->callee;
        withs = &w->args;
      }
      return call(callee, withs, std::move(args), e->range());
    }
    case NodeKind::With: {
      auto* w = cast<WithExpr>(e);
      std::string name = isa<NameExpr>(w->callee) ? cast<NameExpr>(w->callee)->fullName() : "f";
      report(diags_, Diag::BareWithArguments, e->loc(), {name});
      return {};
    }
    case NodeKind::NonNull:
      report(diags_, Diag::IgnoredFeature, e->loc(), {"the non-null mark '!'"});
      return expr(cast<NonNullExpr>(e)->operand, expected);
    case NodeKind::Index: {
      auto* ix = cast<IndexExpr>(e);
      LV base = expr(ix->base);
      LV idx = expr(ix->index);
      if (!base || !idx) return {};
      if (idx.t.kind() != TypeKind::Int) {
        report(diags_, Diag::IndexNotInt, ix->index->loc(), {camelTypeName(idx.t)});
        return {};
      }
      if (base.t.kind() == TypeKind::List) {
        // Ordered after earlier mutations of the (shared) array when effects exist.
        if (cx_->tok) {
          ir::Node* n = effect(CoreOp::ListLoad, {base.v, idx.v}, {}, {}, e->range());
          return n ? LV{n->result(1), n->result(1)->type()} : LV{};
        }
        return one(CoreOp::ListGet, {base.v, idx.v}, e->range());
      }
      if (base.t.isTensor()) {
        // t[i] of module tensor (spec 15.17): element i of a 1-D tensor.
        Type r = base.t.dtype() == ir::DType::Bool ? Type::boolean() : Type::f64();
        return one(CoreOp::Builtin, {base.v, idx.v}, e->range(),
                   ir::attrs({{"name", ir::Attr::string("tensor::__idx__")}}), {r});
      }
      if (base.t.kind() == TypeKind::Str)
        return one(CoreOp::Builtin, {base.v, idx.v}, e->range(),
                   ir::attrs({{"name", ir::Attr::string(kStrAtBuiltin)}}), {Type::string()});
      report(diags_, Diag::TypeNotIndexable, ix->base->loc(), {camelTypeName(base.t)});
      return {};
    }
    case NodeKind::Member: {
      auto* m = cast<MemberExpr>(e);
      LV base = expr(m->base);
      if (!base) return {};
      if (m->isIndex) {
        if (base.t.kind() != TypeKind::Tuple || m->index >= base.t.elements().size()) {
          report(diags_, Diag::InvalidAccessIndex, m->member.range.loc(),
                 {camelTypeName(base.t), "element " + m->member.name});
          return {};
        }
        return one(CoreOp::TupleGet, {base.v}, e->range(),
                   ir::attrs({{"index", ir::Attr::integer(int64_t(m->index))}}));
      }
      if (base.t.kind() != TypeKind::Struct || base.t.fieldIndex(m->member.name) < 0) {
        auto& d = report(diags_, Diag::InvalidAccessIndex, m->member.range.loc(),
                         {camelTypeName(base.t), "field '" + m->member.name + "'"});
        if (base.t.kind() == TypeKind::Struct) {
          std::string best = closestName(m->member.name, base.t.fieldNames());
          if (!best.empty()) d.suggestion = "did you mean '" + best + "'?";
        }
        return {};
      }
      return one(CoreOp::StructGet, {base.v}, e->range(),
                 ir::attrs({{"field", ir::Attr::string(m->member.name)}}));
    }
    case NodeKind::Array: {
      auto* a = cast<ArrayExpr>(e);
      Type elemExpected = expected && expected.kind() == TypeKind::List ? expected.elementType() : Type();
      std::vector<Value*> vs;
      Type elem;
      bool ok = true;
      for (Argument& el : a->elements) {
        LV v = expr(el.value, elemExpected);
        if (!v) {
          ok = false;
          continue;
        }
        if (!elem) {
          elem = v.t;
        } else if (!sameType(elem, v.t)) {
          report(diags_, Diag::ElementTypeMismatch, el.range.loc(), {camelTypeName(elem), camelTypeName(v.t)});
          ok = false;
        }
        vs.push_back(v.v);
      }
      if (!ok) return {};
      if (!elem) elem = elemExpected ? elemExpected : Type::null();
      if (elemExpected && sameType(elemExpected, elem)) elem = elemExpected;
      for (Value*& v : vs) v = coerce({v, v->type()}, elem, e->range()).v;
      return one(CoreOp::ListMake, vs, e->range(), {}, {Type::list(elem)});
    }
    case NodeKind::Struct: {
      auto* s = cast<StructExpr>(e);
      std::vector<std::pair<std::string, Type>> fields;
      std::vector<Value*> vs;
      bool ok = true;
      for (FieldInit& f : s->fields) {
        Type fe;
        if (expected && expected.kind() == TypeKind::Struct) {
          int i = expected.fieldIndex(f.name.name);
          if (i >= 0) fe = expected.elements()[size_t(i)];
        }
        LV v = expr(f.value, fe);
        ok &= bool(v);
        fields.push_back({f.name.name, v.t});
        vs.push_back(v.v);
      }
      if (!ok) return {};
      Type t = Type::structure(fields);
      if (expected && expected.kind() == TypeKind::Struct && expected != t && sameType(expected, t)) {
        // Build in the declared field order (spec 6.2: order is kept for printing).
        std::vector<Value*> ordered;
        for (const std::string& name : expected.fieldNames())
          for (size_t i = 0; i < fields.size(); ++i)
            if (fields[i].first == name) ordered.push_back(vs[i]);
        vs = ordered;
        t = expected;
      }
      return one(CoreOp::StructMake, vs, e->range(), {}, {t});
    }
    case NodeKind::Tuple: {
      std::vector<Value*> vs;
      for (Expr* x : cast<TupleExpr>(e)->elements) {
        LV v = expr(x);
        if (!v) return {};
        vs.push_back(v.v);
      }
      return one(CoreOp::TupleMake, vs, e->range());
    }
    case NodeKind::Lambda: return lambda(cast<LambdaExpr>(e));
    case NodeKind::If: return lowerIf(cast<IfExpr>(e));
    case NodeKind::Match: return lowerMatch(cast<MatchExpr>(e));
    case NodeKind::Block: return lowerStmts(cast<BlockExpr>(e)->stmts).value;
    default: return {};  // reported by sema (try, comprehension)
  }
}

LV Lowerer::coerce(LV v, Type to, const SourceRange& at) {
  if (!v || !to || v.t == to || !sameType(to, v.t)) return v;
  switch (to.kind()) {
    case TypeKind::Struct: {
      // The same struct type with another field order: rebuild in `to`'s order.
      std::vector<Value*> fs;
      for (size_t i = 0; i < to.elements().size(); ++i) {
        LV f = one(CoreOp::StructGet, {v.v}, at, ir::attrs({{"field", ir::Attr::string(to.fieldNames()[i])}}));
        fs.push_back(coerce(f, to.elements()[i], at).v);
      }
      return one(CoreOp::StructMake, fs, at, {}, {to});
    }
    case TypeKind::Tuple: {
      std::vector<Value*> es;
      for (size_t i = 0; i < to.elements().size(); ++i) {
        LV x = one(CoreOp::TupleGet, {v.v}, at, ir::attrs({{"index", ir::Attr::integer(int64_t(i))}}));
        es.push_back(coerce(x, to.elements()[i], at).v);
      }
      return one(CoreOp::TupleMake, es, at);
    }
    default: return v;  // arrays of reordered structs keep their own type
  }
}

LV Lowerer::arith(BinaryOp op, LV a, LV b, const SourceRange& at, const char* spelling) {
  if (!a || !b) return {};
  auto bad = [&]() -> LV {
    auto& d = report(diags_, Diag::OperandTypeMismatch, at.loc(),
                     {spelling, camelTypeName(a.t), camelTypeName(b.t)});
    if (a.t.isNumeric() && b.t.isNumeric())
      d.suggestion = "int and float do not mix; convert explicitly with float(...) or int(...)";
    return {};
  };
  LV tv;
  if (tensorBinary(op, a, b, at, spelling, tv)) return tv;
  bool same = a.t == b.t;
  bool num = same && a.t.isNumeric();
  switch (op) {
    case BinaryOp::Add:
      if (!(num || (same && a.t.kind() == TypeKind::Str))) return bad();
      return one(CoreOp::Add, {a.v, b.v}, at);
    case BinaryOp::Sub: if (!num) return bad(); return one(CoreOp::Sub, {a.v, b.v}, at);
    case BinaryOp::Mul: if (!num) return bad(); return one(CoreOp::Mul, {a.v, b.v}, at);
    case BinaryOp::Div: if (!num) return bad(); return one(CoreOp::Div, {a.v, b.v}, at);
    case BinaryOp::Mod: if (!num) return bad(); return one(CoreOp::Rem, {a.v, b.v}, at);
    case BinaryOp::Pow: if (!num) return bad(); return one(CoreOp::Pow, {a.v, b.v}, at);
    case BinaryOp::Lt: case BinaryOp::Gt: case BinaryOp::Le: case BinaryOp::Ge: {
      if (!(num || (same && a.t.kind() == TypeKind::Str))) return bad();
      CoreOp c = op == BinaryOp::Lt ? CoreOp::Lt : op == BinaryOp::Gt ? CoreOp::Gt
               : op == BinaryOp::Le ? CoreOp::Le : CoreOp::Ge;
      return one(c, {a.v, b.v}, at);
    }
    case BinaryOp::Eq:
      if (!sameType(a.t, b.t)) return bad();
      return one(CoreOp::Eq, {a.v, b.v}, at);
    case BinaryOp::Ne:
      if (!sameType(a.t, b.t)) return bad();
      return one(CoreOp::Ne, {a.v, b.v}, at);
    case BinaryOp::StrictEq: case BinaryOp::StrictNe: {
      if (!sameType(a.t, b.t)) return bad();
      LV same = one(CoreOp::Builtin, {a.v, b.v}, at, ir::attrs({{"name", ir::Attr::string("camel.identical")}}));
      return op == BinaryOp::StrictEq || !same ? same : one(CoreOp::Not, {same.v}, at);
    }
    case BinaryOp::And: case BinaryOp::Or:
      if (!(same && a.t.kind() == TypeKind::Bool)) return bad();
      return one(op == BinaryOp::And ? CoreOp::And : CoreOp::Or, {a.v, b.v}, at);
    default: return bad();
  }
}

LV Lowerer::binary(BinaryExpr* e) {
  switch (e->op) {
    case BinaryOp::Pipe: return pipe(e);
    case BinaryOp::Compose: return compose(e);
    case BinaryOp::Coalesce:
    case BinaryOp::ErrorThen:
      report(diags_, Diag::IgnoredFeature, e->loc(),
             {std::string("'") + binaryOpSpelling(e->op) + "' (its left operand is used)"});
      return expr(e->lhs);
    case BinaryOp::MatMul: {
      LV a = expr(e->lhs), b = expr(e->rhs);
      LV tv;
      if (tensorBinary(e->op, a, b, e->range(), "@", tv)) return tv;
      if (a && b)
        report(diags_, Diag::OperandTypeMismatch, e->loc(), {"@", camelTypeName(a.t), camelTypeName(b.t)});
      return {};
    }
    case BinaryOp::NullPipe:
    case BinaryOp::NullCompose: return {};  // reported by sema
    default: {
      LV a = expr(e->lhs);
      LV b = expr(e->rhs);
      return arith(e->op, a, b, e->range(), binaryOpSpelling(e->op));
    }
  }
}

LV Lowerer::unary(UnaryExpr* e) {
  LV a = expr(e->operand);
  if (!a) return {};
  if (a.t.isTensor() && e->op == UnaryOp::Neg) {
    ir::Node* n = atenNode("aten.neg.default", {a.v}, {}, "-", {a}, e->range());
    return n ? LV{n->result(0), n->result(0)->type()} : LV{};
  }
  bool ok = e->op == UnaryOp::Not ? a.t.kind() == TypeKind::Bool
          : e->op == UnaryOp::Neg ? a.t.isNumeric()
                                  : a.t.isInt();
  if (!ok) {
    report(diags_, Diag::UnaryTypeMismatch, e->loc(), {unaryOpSpelling(e->op), camelTypeName(a.t)});
    return {};
  }
  CoreOp op = e->op == UnaryOp::Not ? CoreOp::Not : e->op == UnaryOp::Neg ? CoreOp::Neg : CoreOp::BitNot;
  return one(op, {a.v}, e->range());
}

void Lowerer::storeTo(Binding* b, LV v, const SourceRange& at) {
  if (!v) return;
  if (!b->isCell) {
    cx_->env[b] = v.v;
    return;
  }
  Value* cell = nullptr;
  if (b->kind == BindKind::Global) {
    if (!lowerGlobal(b)) return;
    ir::Node* n = node(CoreOp::Once, {}, ir::attrs({{"callee", ir::Attr::symbol(b->initGraph->name())}}),
                       b->initGraph->resultTypes(), at);
    if (!n || b->index >= n->numResults()) return;
    cell = n->result(b->index);
  } else {
    cell = cx_->env.count(b) ? cx_->env[b] : nullptr;
  }
  if (!cell) return;
  ir::Node* n = effect(CoreOp::ListSet, {cell, b_.constInt(0), v.v}, {}, {}, at);
  if (n && b->kind == BindKind::Local) cx_->env[b] = n->result(1);
}

LV Lowerer::assign(AssignExpr* e) {
  auto* n = dyn_cast<NameExpr>(e->target);
  Binding* b = n && prog_.refs.count(n) ? prog_.refs[n] : nullptr;
  if (!b || (b->kind != BindKind::Local && b->kind != BindKind::Global)) {
    expr(e->value);
    return {};  // reported by sema
  }
  LV cur = readBinding(b, e->target->range());
  LV v = expr(e->value, cur.t);
  if (!cur || !v) return {};
  if (e->op != AssignOp::Assign) {
    static const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                                   BinaryOp::Div, BinaryOp::Mod, BinaryOp::Pow, BinaryOp::MatMul,
                                   BinaryOp::And, BinaryOp::Or};
    v = arith(ops[size_t(e->op)], cur, v, e->range(), assignOpSpelling(e->op));
    if (!v) return {};
  } else if (!assignable(cur.t, v.t) || cur.t.kind() == TypeKind::Null) {
    if (!(cur.t.kind() == TypeKind::Null && v.t.kind() == TypeKind::Null)) {
      typeError(e->value->range(), cur.t, v.t);
      return {};
    }
  }
  storeTo(b, v, e->range());
  return v;
}

LV Lowerer::lambda(LambdaExpr* e) {
  FuncInfo* f = prog_.funcOf[e];
  if (!f || !lowerFunction(f)) return {};
  std::vector<Value*> caps;
  for (Binding* c : f->captures) caps.push_back(captureValue(c, e->range()));
  Type ft = funcValueType(f->withTypes, f->paramTypes, f->varParams, f->resultType);
  return one(CoreOp::FuncRef, caps, e->range(), ir::attrs({{"callee", ir::Attr::symbol(f->graph->name())}}),
             {ft});
}

LV Lowerer::compose(BinaryExpr* e) {
  LV f = expr(e->lhs), g = expr(e->rhs);
  if (!f || !g) return {};
  std::vector<Type> fp, gp;
  Type fr, gr;
  size_t fv = 0, gv = 0;
  if (!splitFuncValueType(f.t, fp, fr, fv) || !splitFuncValueType(g.t, gp, gr, gv) || fv || gv ||
      gp.size() != 1 || !sameType(gp[0], fr)) {
    report(diags_, Diag::ComposeMismatch, e->loc(), {camelTypeName(f.t), camelTypeName(g.t)});
    return {};
  }
  // camel$compose(f, g, t, args...) = g(f(args...)).
  std::vector<Type> ps{f.t, g.t, Type::token()};
  ps.insert(ps.end(), fp.begin(), fp.end());
  ir::Graph* h = helperGraph("compose", ps, {Type::token(), gr});
  ir::Builder hb(*h);
  hb.setLoc(e->loc());
  std::vector<Value*> args{h->param(0), h->param(2)};
  for (size_t i = 3; i < h->numParams(); ++i) args.push_back(h->param(i));
  ir::Node* a = hb.create(CoreOp::Apply, args, {}, {Type::token(), fr});
  ir::Node* b = a ? hb.create(CoreOp::Apply, {h->param(1), a->result(0), a->result(1)}, {},
                              {Type::token(), gr})
                  : nullptr;
  if (!b) return {};
  h->setResults({b->result(0), b->result(1)});
  Type ft = Type::func(std::vector<Type>(ps.begin() + 2, ps.end()), {Type::token(), gr});
  return one(CoreOp::FuncRef, {f.v, g.v}, e->range(), ir::attrs({{"callee", ir::Attr::symbol(h->name())}}),
             {ft});
}

LV Lowerer::castExpr(CastExpr* e) {
  LV v = expr(e->operand);
  Type t = prog_.types.count(e->type) ? prog_.types[e->type] : Type();
  if (!v || !t) return {};
  if (e->isTest) return {};
  if (sameType(t, v.t)) return v;
  if (v.t.isAny() || t.isAny() || (v.t.kind() == ir::TypeKind::PyObj && t.kind() == ir::TypeKind::PyObj)) {
    // A view of an `any` value (json::decode results) or into `any`, or a
    // PyObject viewed as PyObject<T> (spec 6.6): identity graph.
    ir::Graph* h = helperGraph("as", {v.t}, {t});
    h->setResults({h->param(0)});
    return one(CoreOp::Call, {v.v}, e->range(), ir::attrs({{"callee", ir::Attr::symbol(h->name())}}), {t});
  }
  bool constant = isa<IntLiteral>(e->operand) || isa<RealLiteral>(e->operand);
  if (constant && v.t.isNumeric() && t.isNumeric())
    return one(CoreOp::Cast, {v.v}, e->range(), {}, {t});
  auto& d = report(diags_, Diag::DynamicCastForbidden, e->loc(), {camelTypeName(v.t), camelTypeName(t)});
  if (v.t.isNumeric() && t.isNumeric())
    d.suggestion = std::string("use ") + (t.isFloat() ? "float(...)" : "int(...)") + " to convert numbers";
  return {};
}

}  // namespace xacc::camel::sema
