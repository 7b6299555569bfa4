// Calls (spec 8.5, 9.4, 9.5, 6.8): overload resolution (first declared
// overload whose with- and ordinary parameter counts and types accept the
// arguments), direct calls of declared functions (`func.call`, captures first),
// standard-library calls (`func.builtin[_effect]`, overloads decided by each
// builtin's `infer`), calls of function values (`func.apply` with the effect
// token), pipes, and the rebinding of variables passed to `var` parameters.
#include "LowerImpl.h"
#include "xacc/ir/Builtins.h"

namespace xacc::camel::sema {

using ir::CoreOp;
using ir::Type;
using ir::Value;

namespace {

Binding* varTarget(Program& prog, Expr* e) {
  auto* n = dyn_cast<NameExpr>(e);
  if (!n || !prog.refs.count(n)) return nullptr;
  Binding* b = prog.refs[n];
  return b->kind == BindKind::Local || b->kind == BindKind::Global ? b : nullptr;
}

std::string signatureOf(FuncInfo* f) {
  std::string s;
  if (!f->withTypes.empty()) s += "<" + typeListName(f->withTypes).substr(1);
  if (!s.empty()) s.back() = '>';
  return f->name + s + typeListName(f->paramTypes);
}

std::string argsText(const std::vector<LV>& ws, const std::vector<LV>& as) {
  std::vector<Type> w, a;
  for (const LV& v : ws) w.push_back(v.t);
  for (const LV& v : as) a.push_back(v.t);
  std::string s;
  if (!ws.empty()) {
    s = typeListName(w);
    s = "<" + s.substr(1, s.size() - 2) + ">";
  }
  return s + typeListName(a);
}

}  // namespace

LV Lowerer::call(Expr* callee, const std::vector<Argument>* withArgs, std::vector<ArgIn> args,
                 const SourceRange& at) {
  auto* n = dyn_cast<NameExpr>(callee);
  Binding* b = n && prog_.refs.count(n) ? prog_.refs[n] : nullptr;
  if (n && !b) {
    // Unresolved (reported by sema); still lower the arguments for their errors.
    for (ArgIn& a : args)
      if (!a.v && a.e) expr(a.e);
    return {};
  }
  // Parameter types guide the arguments (empty array literals) for a single overload.
  FuncInfo* only = b && b->kind == BindKind::Func && b->overloads.size() == 1 ? b->overloads[0] : nullptr;
  std::vector<LV> ws, as;
  std::vector<ArgIn> argIn;
  bool ok = true;
  if (withArgs)
    for (size_t i = 0; i < withArgs->size(); ++i) {
      const Argument& a = (*withArgs)[i];
      Type exp = only && i < only->withTypes.size() ? only->withTypes[i] : Type();
      LV v = expr(a.value, exp);
      ok &= bool(v);
      ws.push_back(v);
      argIn.push_back({a.value, v, a.range});
    }
  for (size_t i = 0; i < args.size(); ++i) {
    ArgIn& a = args[i];
    Type exp = only && i < only->paramTypes.size() ? only->paramTypes[i] : Type();
    LV v = a.v ? a.v : expr(a.e, exp);
    ok &= bool(v);
    as.push_back(v);
    argIn.push_back({a.e, v, a.range});
  }
  if (!ok) return {};
  if (b && b->kind == BindKind::Func) return callUser(b, n, ws, as, argIn, at);
  if (b && b->kind == BindKind::Builtin) return callBuiltin(b, n, ws, as, argIn, ws.size(), at);
  LV f = expr(callee);
  if (!f) return {};
  return applyValue(f, ws, as, argIn, at);
}

void Lowerer::checkWaited(const std::string& callee, const SourceRange& at) {
  if (inSync_ || waitDepth_ > 0) return;
  auto& d = report(diags_, Diag::IgnoredSideEffect, at.loc(), {callee});
  d.suggestion = "write 'wait' before the call, or put it in a 'sync' block, so that its effect is ordered";
}

void Lowerer::checkMacroCall(const std::string& callee, const SourceRange& at) {
  FuncInfo* f = cx_ ? cx_->fn : nullptr;
  while (f && f->kind != FuncInfo::Kind::Decl) f = f->parent;
  if (!f || !f->sig || !(f->sig->modifiers & ModMacro)) return;
  auto& d = report(diags_, Diag::MacroCallsNonMacro, at.loc(), {f->name, callee});
  d.suggestion = "a macro may call only macros and pure built-in operators when it is expanded at compile time";
}

LV Lowerer::callUser(Binding* b, NameExpr* name, std::vector<LV>& ws, std::vector<LV>& as,
                     std::vector<ArgIn>& argIn, const SourceRange& at) {
  FuncInfo* chosen = nullptr;
  for (FuncInfo* f : b->overloads) {
    if (f->withTypes.size() != ws.size() || f->paramTypes.size() != as.size()) continue;
    bool fits = true;
    for (size_t i = 0; i < ws.size(); ++i) fits &= assignable(f->withTypes[i], ws[i].t);
    for (size_t i = 0; i < as.size(); ++i) fits &= assignable(f->paramTypes[i], as[i].t);
    if (fits) {
      chosen = f;
      break;
    }
  }
  if (!chosen) {
    if (b->overloads.size() == 1) {
      FuncInfo* f = b->overloads[0];
      if (f->withTypes.size() != ws.size()) {
        report(diags_, Diag::WithArgCountMismatch, at.loc(),
               {b->name, std::to_string(f->withTypes.size()), std::to_string(ws.size())});
        return {};
      }
      if (f->paramTypes.size() != as.size()) {
        report(diags_, Diag::ArgCountMismatch, at.loc(),
               {b->name, std::to_string(f->paramTypes.size()), std::to_string(as.size())});
        return {};
      }
      for (size_t i = 0; i < ws.size(); ++i)
        if (!assignable(f->withTypes[i], ws[i].t))
          return typeError(argIn[i].range, f->withTypes[i], ws[i].t), LV{};
      for (size_t i = 0; i < as.size(); ++i)
        if (!assignable(f->paramTypes[i], as[i].t))
          return typeError(argIn[ws.size() + i].range, f->paramTypes[i], as[i].t), LV{};
    }
    auto& d = report(diags_, Diag::NoMatchingFunction, at.loc(), {b->name, argsText(ws, as)});
    for (FuncInfo* f : b->overloads)
      d.notes.push_back({support::Severity::Note, "", f->decl->name.range.loc(),
                         "candidate: " + signatureOf(f), {}, {}});
    return {};
  }
  FuncInfo* f = chosen;
  for (bool v : f->varParams)
    if (v) {
      checkWaited(b->name, at);
      break;
    }
  if (!(f->sig && (f->sig->modifiers & ModMacro))) checkMacroCall(b->name, at);
  if (f->decorated) {
    LV fv = decoratedValue(f, at);
    if (!fv) return {};
    return applyValue(fv, ws, as, argIn, at);
  }
  Type result = f->declaredResult;
  if (!result) {
    if (f->lowering) {
      auto& d = report(diags_, Diag::CallingIncompleteFunction, at.loc(), {b->name});
      d.suggestion = "declare the result type of '" + b->name + "' (recursive functions need one)";
      return {};
    }
    if (!lowerFunction(f)) return {};
    result = f->resultType;
  }
  if (!result) return {};
  std::vector<Value*> ops;
  for (Binding* c : f->captures) ops.push_back(captureValue(c, at));
  if (f->effectful) {
    if (!cx_->tok) {
      report(diags_, Diag::FeatureNotSupported, at.loc(), {"calling a function with effects here"});
      return {};
    }
    ops.push_back(cx_->tok);
  }
  for (size_t i = 0; i < ws.size(); ++i) ops.push_back(coerce(ws[i], f->withTypes[i], at).v);
  for (size_t i = 0; i < as.size(); ++i) ops.push_back(coerce(as[i], f->paramTypes[i], at).v);
  std::vector<Type> rts;
  if (f->effectful) rts.push_back(Type::token());
  rts.push_back(result);
  for (size_t i = 0; i < f->varParams.size(); ++i)
    if (f->varParams[i]) rts.push_back(f->paramTypes[i]);
  ir::AttrDict callAttrs = ir::attrs({{"callee", ir::Attr::symbol(graphNameFor(f))}});
  // A tensor whose shape is known here, passed to a `Tensor` parameter (any
  // shape): inlining would re-infer the callee's aten ops on the static shape
  // and turn a run-time TensorDimensionMismatch into a compile-time error.
  bool refined = false;
  for (size_t i = 0; i < ws.size(); ++i)
    refined |= ws[i].t.isTensor() && ws[i].t != f->withTypes[i];
  for (size_t i = 0; i < as.size(); ++i)
    refined |= as[i].t.isTensor() && as[i].t != f->paramTypes[i];
  if (refined) callAttrs.set("noinline", ir::Attr::boolean(true));
  ir::Node* n = node(CoreOp::Call, ops, std::move(callAttrs), rts, at);
  if (!n) return {};
  size_t r = 0;
  if (f->effectful) cx_->tok = n->result(r++);
  LV value{n->result(r++), result};
  for (size_t i = 0; i < f->varParams.size(); ++i) {
    if (!f->varParams[i]) continue;
    Value* fin = n->result(r++);
    // A value that is not a variable is passed by copy (nothing to update).
    if (Binding* t = varTarget(prog_, argIn[ws.size() + i].e)) storeTo(t, {fin, f->paramTypes[i]}, at);
  }
  (void)name;
  return value;
}

LV Lowerer::callBuiltin(Binding* b, NameExpr* name, std::vector<LV>& ws, std::vector<LV>& as,
                        std::vector<ArgIn>& argIn, size_t nWithIn, const SourceRange& at) {
  std::vector<Type> types;
  for (LV& v : ws) types.push_back(v.t);
  for (LV& v : as) types.push_back(v.t);
  const StdlibEntry* chosen = nullptr;
  std::string lastErr;
  auto overloads = builtinOverloads(*b);
  for (const StdlibEntry* e : overloads) {
    if (e->withParams != kVariadic && size_t(e->withParams) != ws.size()) continue;
    if (e->params != kVariadic && size_t(e->params) != as.size()) continue;
    const ir::Builtin* bi = ir::BuiltinRegistry::get().lookup(e->gir);
    if (!bi) continue;
    std::vector<Type> rs;
    std::string err;
    if (bi->infer && !bi->infer(types, rs, err)) {
      lastErr = err;
      continue;
    }
    chosen = e;
    break;
  }
  std::string shown = (b->module.empty() ? "" : b->module + "::") + b->name;
  if (!chosen) {
    auto& d = report(diags_, Diag::NoMatchingFunction, at.loc(), {shown, argsText(ws, as)});
    if (!lastErr.empty()) d.suggestion = lastErr;
    // Built-ins have no source: their notes are located at "<built-in>".
    support::SourceLoc builtinLoc{support::SourceManager::global().internName("<built-in>"), 0, 0, 1};
    for (const StdlibEntry* e : overloads) {
      std::string qual = e->module.empty() ? "" : e->module + "::";
      d.notes.push_back({support::Severity::Note, "", builtinLoc,
                         "candidate: " + qual + b->name + e->signature, {}, {}});
    }
    return {};
  }
  // In a graph with effects, builtins that see functions or arrays are ordered
  // too: a function argument may have effects, and an array may have been
  // mutated by an earlier effect (arrays are shared, spec 7.1).
  bool ordered = false;
  for (Type t : types)
    ordered |= t.kind() == ir::TypeKind::Func || t.kind() == ir::TypeKind::List || t.isAny();
  if (!chosen->effectful && chosen->deterministic) {
    std::vector<LV> all = ws;
    all.insert(all.end(), as.begin(), as.end());
    LV tv;
    if (tensorRecipe(chosen->gir, shown, all, at, tv)) return tv;
  }
  bool eff = chosen->effectful || !chosen->deterministic || (cx_->tok && ordered);
  if (!chosen->varOperands.empty()) checkWaited(shown, at);
  if (chosen->effectful || !chosen->deterministic) checkMacroCall(shown, at);
  std::vector<Value*> ops;
  for (LV& v : ws) ops.push_back(v.v);
  for (LV& v : as) ops.push_back(v.v);
  ir::AttrDict attrs = ir::attrs({{"name", ir::Attr::string(chosen->gir)}});
  ir::Node* n = eff ? effect(CoreOp::BuiltinEffect, ops, attrs, {}, at)
                    : node(CoreOp::Builtin, ops, attrs, {}, at);
  if (!n) return {};
  size_t first = eff ? 1 : 0;
  LV value = n->numResults() > first ? LV{n->result(first), n->result(first)->type()} : nullConst();
  // Arrays mutated in place: later uses of the variable see the new version.
  for (int idx : chosen->varOperands) {
    if (idx < 0 || size_t(idx) >= argIn.size()) continue;
    Binding* t = varTarget(prog_, argIn[size_t(idx)].e);
    if (t && !t->isCell && t->kind == BindKind::Local && value.t == argIn[size_t(idx)].v.t)
      cx_->env[t] = value.v;
  }
  (void)name;
  (void)nWithIn;
  return value;
}

LV Lowerer::applyValue(LV f, std::vector<LV>& ws, std::vector<LV>& as, std::vector<ArgIn>& argIn,
                       const SourceRange& at) {
  std::vector<Type> ps;
  Type result;
  size_t nvar = 0;
  if (!splitFuncValueType(f.t, ps, result, nvar)) {
    report(diags_, Diag::NotCallable, at.loc(), {camelTypeName(f.t)});
    return {};
  }
  std::vector<LV> all = ws;
  all.insert(all.end(), as.begin(), as.end());
  bool fits = all.size() == ps.size();
  for (size_t i = 0; fits && i < ps.size(); ++i) fits = assignable(ps[i], all[i].t);
  if (!fits) {
    report(diags_, Diag::ArgumentsMismatch, at.loc(), {camelTypeName(f.t), argsText(ws, as)});
    return {};
  }
  bool token = !f.t.elements().empty() && f.t.elements()[0].isToken();
  std::vector<Value*> ops{f.v};
  if (token) {
    if (!cx_->tok) {
      report(diags_, Diag::FeatureNotSupported, at.loc(), {"calling a function value here"});
      return {};
    }
    ops.push_back(cx_->tok);
  }
  for (LV& v : all) ops.push_back(v.v);
  ir::Node* n = node(CoreOp::Apply, ops, {}, f.t.funcResults(), at);
  if (!n) return {};
  size_t r = 0;
  if (token) cx_->tok = n->result(r++);
  LV value{n->result(r++), result};
  // Final values of `var` parameters follow the value, in parameter order.
  std::vector<bool> flags = varParamFlags(f.t);
  for (size_t i = 0; i < flags.size() && i < argIn.size() && r < n->numResults(); ++i) {
    if (!flags[i]) continue;
    if (Binding* t = varTarget(prog_, argIn[i].e)) storeTo(t, {n->result(r), ps[i]}, at);
    ++r;
  }
  return value;
}

LV Lowerer::pipe(BinaryExpr* e) {
  LV x = expr(e->lhs);
  if (!x) return {};
  std::vector<ArgIn> args{{e->lhs, x, e->lhs->range()}};
  if (auto* w = dyn_cast<WithExpr>(e->rhs)) return call(w->callee, &w->args, args, e->range());
  return call(e->rhs, nullptr, args, e->range());
}

}  // namespace xacc::camel::sema
