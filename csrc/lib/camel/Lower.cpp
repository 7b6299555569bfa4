// Lowering driver: graphs for declared functions, lambdas' and pure
// functions' value wrappers, module globals (`func.once` initializer graphs,
// cells for assigned top-level `var`s), decorated functions, and the program
// entry. See docs/camel-lowering.md.
#include "LowerImpl.h"

#include <chrono>

namespace xacc::camel::sema {

using ir::CoreOp;
using ir::Type;
using ir::Value;

Lowerer::Lowerer(Program& p, support::DiagnosticEngine& d, ir::Module& m)
    : prog_(p), diags_(d), mod_(m) {}

void Lowerer::setLoc(const SourceRange& r) { b_.setLoc(r.loc()); }

ir::Node* Lowerer::node(CoreOp op, const std::vector<Value*>& operands, ir::AttrDict attrs,
                        std::vector<Type> results, const SourceRange& at) {
  setLoc(at);
  for (Value* v : operands)
    if (!v) return nullptr;
  ir::Node* n = b_.create(op, operands, std::move(attrs), std::move(results));
  if (!n) report(diags_, Diag::TypeMismatch, at.loc(), {"a valid operation", b_.error()});
  return n;
}

LV Lowerer::one(CoreOp op, const std::vector<Value*>& operands, const SourceRange& at,
                ir::AttrDict attrs, std::vector<Type> results) {
  ir::Node* n = node(op, operands, std::move(attrs), std::move(results), at);
  if (!n) return {};
  return {n->result(0), n->result(0)->type()};
}

ir::Node* Lowerer::effect(CoreOp op, std::vector<Value*> operands, ir::AttrDict attrs,
                          std::vector<Type> results, const SourceRange& at) {
  if (!cx_->tok) {
    report(diags_, Diag::FeatureNotSupported, at.loc(), {"an effect in this context"});
    return nullptr;
  }
  operands.insert(operands.begin(), cx_->tok);
  ir::Node* n = node(op, operands, std::move(attrs), std::move(results), at);
  if (n) cx_->tok = n->result(0);
  return n;
}

bool Lowerer::typeError(const SourceRange& at, Type expected, Type found) {
  if (!expected || !found) return false;
  auto& d = report(diags_, Diag::TypeMismatch, at.loc(), {camelTypeName(expected), camelTypeName(found)});
  if (expected.isNumeric() && found.isNumeric())
    d.suggestion = "there is no implicit numeric conversion; use " +
                   std::string(expected.isFloat() ? "float(...)" : "int(...)");
  return false;
}

LV Lowerer::nullConst() {
  Value* v = b_.constNull();
  return {v, Type::null()};
}

std::string Lowerer::uniqueName(std::string base) {
  std::string name = base;
  for (int n = 2; usedNames_.count(name) || mod_.lookup(name); ++n)
    name = base + "$" + std::to_string(n);
  usedNames_.insert(name);
  return name;
}

std::string Lowerer::graphNameFor(FuncInfo* f) {
  if (!f->graphName.empty()) return f->graphName;
  std::string base;
  if (f->kind == FuncInfo::Kind::Lambda) {
    FuncInfo* top = f->parent;
    while (top && top->parent) top = top->parent;
    base = (top && top->kind == FuncInfo::Kind::Decl ? graphNameFor(top) : f->unit->name + "::$init") +
           "$lambda";
  } else if (f->parent) {
    FuncInfo* p = f->parent;
    while (p && p->kind == FuncInfo::Kind::Arm) p = p->parent;
    base = (p ? graphNameFor(p) : f->unit->name) + "$" + f->name;
  } else {
    base = f->unit->name + "::" + f->name;
    if (f->decorated) base += "$raw";
  }
  f->graphName = uniqueName(base);
  return f->graphName;
}

ir::Graph* Lowerer::helperGraph(const std::string& kind, const std::vector<Type>& params,
                                const std::vector<Type>& results) {
  auto g = std::make_unique<ir::Graph>(uniqueName("camel$" + kind));
  for (Type t : params) g->addParam(t);
  g->setResultTypes(results);
  return mod_.add(std::move(g));
}

// ---- Functions ----------------------------------------------------------------

bool Lowerer::lowerFunction(FuncInfo* f) {
  if (f->lowered || f->lowering) return !f->failed;
  f->lowering = true;
  size_t errorsBefore = diags_.errorCount();
  auto owned = std::make_unique<ir::Graph>(graphNameFor(f));
  Ctx c;
  c.fn = f;
  c.g = owned.get();
  // Captured values come from the context that declares the function.
  for (Binding* cap : f->captures) {
    Value* v = cx_ ? captureValue(cap, f->decl ? f->decl->name.range : f->lambda->range()) : nullptr;
    Value* p = c.g->addParam(v ? v->type() : Type::any(), cap->name);
    c.env[cap] = p;
  }
  if (f->effectful) c.tok = c.g->addParam(Type::token(), "t");
  std::vector<Binding*> varBindings;
  auto bindParam = [&](const Param& p, Type t) {
    Binding* b = prog_.paramBindings[&p];
    Value* v = c.g->addParam(t ? t : Type::any(), p.name.name);
    if (b) c.env[b] = v;
    return b;
  };
  for (size_t i = 0; i < f->sig->withParams.size(); ++i)
    bindParam(f->sig->withParams[i], f->withTypes[i]);
  for (size_t i = 0; i < f->sig->params.size(); ++i) {
    Binding* b = bindParam(f->sig->params[i], f->paramTypes[i]);
    if (f->varParams[i]) varBindings.push_back(b);
  }
  ir::Graph* g = mod_.add(std::move(owned));
  f->graph = g;
  {
    CtxScope scope(*this, c);
    // Parameters that nested code assigns live in cells.
    for (auto& [b, v] : c.env)
      if (b->isCell && b->owner == f)
        c.env[b] = one(CoreOp::ListMake, {v}, b->range).v;
    Expr* body = f->decl ? static_cast<Expr*>(f->decl->body) : f->lambda->body;
    bool outer = f->decl && !f->decl->outerUri.empty();
    bool inner = f->decl && !body && f->decl->impl == ImplMark::Inner;
    const SourceRange bodyRange = body ? body->range() : f->decl->range();
    LV value = outer ? lowerOuter(f) : inner ? lowerInner(f) : lowerBody(body);
    Type result = value.t;
    if (f->declaredResult) {
      if (value && !assignable(f->declaredResult, value.t)) {
        report(diags_, Diag::ReturnTypeMismatch, (f->sig->result ? f->sig->result->range() : bodyRange).loc(),
               {f->name, camelTypeName(f->declaredResult), camelTypeName(value.t)});
        value = {};
      }
      result = f->declaredResult;
      if (value && result.kind() == ir::TypeKind::Null && value.t.kind() != ir::TypeKind::Null)
        value = nullConst();
      else if (value)
        value = coerce(value, result, bodyRange);
    }
    if (!value) {
      f->failed = true;
      value = {nullptr, result};
    }
    f->resultType = result;
    if (value.v) {
      std::vector<Value*> rs;
      std::vector<Type> rts;
      if (c.tok) {
        rs.push_back(c.tok);
        rts.push_back(Type::token());
      }
      rs.push_back(value.v);
      rts.push_back(result ? result : value.t);
      for (Binding* vb : varBindings) {
        LV cur = vb ? readBinding(vb, bodyRange) : LV{};
        rs.push_back(cur.v);
        rts.push_back(cur.t);
      }
      // A final read of a var parameter may have advanced the token.
      if (c.tok) rs[0] = c.tok;
      bool ok = true;
      for (Value* v : rs) ok &= v != nullptr;
      if (ok) {
        g->setResultTypes(rts);
        g->setResults(rs);
      }
    }
  }
  if (g->resultTypes().empty() && !f->failed) f->failed = true;
  f->failed |= diags_.errorCount() > errorsBefore;
  f->lowering = false;
  f->lowered = true;
  return !f->failed;
}

Value* Lowerer::captureValue(Binding* b, const SourceRange& at) {
  auto it = cx_->env.find(b);
  if (it != cx_->env.end()) return it->second;
  report(diags_, Diag::UnresolvedReference, at.loc(), {b->name});
  return nullptr;
}

LV Lowerer::funcValue(FuncInfo* f, const SourceRange& at) {
  if (f->decorated) return decoratedValue(f, at);
  if (!f->declaredResult && !f->lowered) {
    if (f->lowering) {
      report(diags_, Diag::CallingIncompleteFunction, at.loc(), {f->name});
      return {};
    }
    lowerFunction(f);
  }
  Type result = f->declaredResult ? f->declaredResult : f->resultType;
  if (!result) return {};
  Type ft = funcValueType(f->withTypes, f->paramTypes, f->varParams, result);
  std::vector<Value*> caps;
  for (Binding* c : f->captures) caps.push_back(captureValue(c, at));
  std::string callee = graphNameFor(f);
  if (!f->effectful) {
    // A pure function becomes a value through a token-threading wrapper.
    ir::Graph*& w = wrappers_[f];
    if (!w) {
      std::vector<Type> ps;
      for (Value* v : caps) ps.push_back(v ? v->type() : Type::any());
      size_t ncap = ps.size();
      ps.push_back(Type::token());
      ps.insert(ps.end(), f->withTypes.begin(), f->withTypes.end());
      ps.insert(ps.end(), f->paramTypes.begin(), f->paramTypes.end());
      std::vector<Type> rs = ft.funcResults();
      w = helperGraph("fv$" + f->name, ps, rs);
      ir::Builder wb(*w);
      wb.setLoc(at.loc());
      std::vector<Value*> args;
      for (size_t i = 0; i < w->numParams(); ++i)
        if (i != ncap) args.push_back(w->param(i));
      std::vector<Type> callRs(rs.begin() + 1, rs.end());
      ir::Node* n = wb.create(CoreOp::Call, args, ir::attrs({{"callee", ir::Attr::symbol(callee)}}), callRs);
      std::vector<Value*> out{w->param(ncap)};
      for (size_t i = 0; n && i < n->numResults(); ++i) out.push_back(n->result(i));
      w->setResults(out);
    }
    callee = w->name();
  }
  return one(CoreOp::FuncRef, caps, at, ir::attrs({{"callee", ir::Attr::symbol(callee)}}), {ft});
}

// ---- Globals ------------------------------------------------------------------

bool Lowerer::lowerGlobal(Binding* b) {
  if (b->initGraph) return true;
  if (b->initLowering) {
    report(diags_, Diag::CallingIncompleteFunction, b->range.loc(), {b->name});
    return false;
  }
  DataDecl* d = b->decl;
  FuncInfo* init = prog_.funcOf[d];
  if (init && init->effectful) return lowerEffectfulGlobal(b);
  std::vector<Binding*>& bs = prog_.declBindings[d];
  for (Binding* x : bs) x->initLowering = true;
  auto owned = std::make_unique<ir::Graph>(uniqueName(b->unit->name + "::$init_" + b->name));
  ir::Graph* g = mod_.add(std::move(owned));
  Ctx c;
  c.fn = init;
  c.g = g;
  {
    CtxScope scope(*this, c);
    lowerDataDecl(d);
    std::vector<Value*> rs;
    std::vector<Type> rts;
    for (Binding* x : bs) {
      auto it = c.env.find(x);
      if (it == c.env.end() || !it->second) {
        rs.clear();
        break;
      }
      Value* v = it->second;
      x->valueType = x->isCell ? v->type().elementType() : v->type();
      rs.push_back(v);
      rts.push_back(v->type());
    }
    if (rs.size() == bs.size()) {
      g->setResultTypes(rts);
      g->setResults(rs);
    }
  }
  for (Binding* x : bs) {
    x->initLowering = false;
    x->initGraph = g;
  }
  return g->results().size() == bs.size() && !bs.empty();
}

// A top-level initializer with effects (spec 11.9: initializers run as
// needed by main, once) is an effectful graph `$init_x(t)`, run at the first
// read in token order: readers call the getter `$get_x(t)`, which keeps the
// values in cells made by the parameterless `$state_x` (read with func.once):
//   flag = [false], one empty list per bound name;
//   $get_x(t): if flag[0] then load the cells else call $init_x, append each
//              value to its cell, set flag[0] = true; yields (t, values...).
bool Lowerer::lowerEffectfulGlobal(Binding* b) {
  DataDecl* d = b->decl;
  FuncInfo* init = prog_.funcOf[d];
  std::vector<Binding*>& bs = prog_.declBindings[d];
  for (Binding* x : bs) x->initLowering = true;
  std::string base = b->unit->name + "::$";
  ir::Graph* ig = mod_.add(std::make_unique<ir::Graph>(uniqueName(base + "init_" + b->name)));
  std::vector<Type> vts;
  bool ok = true;
  {
    Ctx c;
    c.fn = init;
    c.g = ig;
    c.tok = ig->addParam(Type::token(), "t");
    CtxScope scope(*this, c);
    lowerDataDecl(d);
    std::vector<Value*> rs{nullptr};
    std::vector<Type> rts{Type::token()};
    for (Binding* x : bs) {
      auto it = c.env.find(x);
      if (it == c.env.end() || !it->second) {
        ok = false;
        break;
      }
      Value* v = it->second;
      x->valueType = x->isCell ? v->type().elementType() : v->type();
      rs.push_back(v);
      rts.push_back(v->type());
      vts.push_back(v->type());
    }
    rs[0] = c.tok;
    if (ok && c.tok) {
      ig->setResultTypes(rts);
      ig->setResults(rs);
    }
    ok = ok && c.tok;
  }
  for (Binding* x : bs) x->initLowering = false;
  if (!ok || bs.empty()) return false;
  support::SourceLoc loc = d->range().loc();
  // The state: a flag and one (empty) cell per value.
  ir::Graph* sg = mod_.add(std::make_unique<ir::Graph>(uniqueName(base + "state_" + b->name)));
  {
    ir::Builder sb(*sg);
    sb.setLoc(loc);
    std::vector<Value*> rs;
    std::vector<Type> rts;
    ir::Node* flag = sb.create(CoreOp::ListMake, {sb.constBool(false)}, {}, {Type::list(Type::boolean())});
    if (!flag) return false;
    rs.push_back(flag->result(0));
    for (Type t : vts) {
      ir::Node* cell = sb.create(CoreOp::ListMake, {}, {}, {Type::list(t)});
      if (!cell) return false;
      rs.push_back(cell->result(0));
    }
    for (Value* v : rs) rts.push_back(v->type());
    sg->setResultTypes(rts);
    sg->setResults(rs);
  }
  // The getter.
  ir::Graph* gg = mod_.add(std::make_unique<ir::Graph>(uniqueName(base + "get_" + b->name)));
  std::vector<Type> outTypes{Type::token()};
  outTypes.insert(outTypes.end(), vts.begin(), vts.end());
  {
    Value* t = gg->addParam(Type::token(), "t");
    ir::Builder gb(*gg);
    gb.setLoc(loc);
    ir::Node* st = gb.create(CoreOp::Once, {}, ir::attrs({{"callee", ir::Attr::symbol(sg->name())}}),
                             sg->resultTypes());
    if (!st) return false;
    ir::Node* ld = gb.create(CoreOp::ListLoad, {t, st->result(0), gb.constInt(0)}, {},
                             {Type::token(), Type::boolean()});
    if (!ld) return false;
    std::vector<Value*> ops{ld->result(1), ld->result(0)};
    for (size_t i = 0; i < st->numResults(); ++i) ops.push_back(st->result(i));
    auto region = [&](bool ready) -> std::unique_ptr<ir::Graph> {
      auto r = std::make_unique<ir::Graph>(ready ? "then" : "else");
      Value* rt = r->addParam(Type::token(), "t");
      std::vector<Value*> cells;
      for (size_t i = 0; i < st->numResults(); ++i) cells.push_back(r->addParam(st->result(i)->type()));
      ir::Builder rb(*r);
      rb.setLoc(loc);
      std::vector<Value*> out{nullptr};
      if (ready) {
        for (size_t i = 1; i < cells.size(); ++i) {
          ir::Node* n = rb.create(CoreOp::ListLoad, {rt, cells[i], rb.constInt(0)}, {},
                                  {Type::token(), vts[i - 1]});
          if (!n) return nullptr;
          rt = n->result(0);
          out.push_back(n->result(1));
        }
      } else {
        ir::Node* call = rb.create(CoreOp::Call, {rt}, ir::attrs({{"callee", ir::Attr::symbol(ig->name())}}),
                                   ig->resultTypes());
        if (!call) return nullptr;
        rt = call->result(0);
        for (size_t i = 1; i < cells.size(); ++i) {
          ir::Node* n = rb.create(CoreOp::ListAppend, {rt, cells[i], call->result(i)}, {},
                                  {Type::token(), cells[i]->type()});
          if (!n) return nullptr;
          rt = n->result(0);
          out.push_back(call->result(i));
        }
        ir::Node* set = rb.create(CoreOp::ListSet, {rt, cells[0], rb.constInt(0), rb.constBool(true)}, {},
                                  {Type::token(), cells[0]->type()});
        if (!set) return nullptr;
        rt = set->result(0);
      }
      out[0] = rt;
      r->setResultTypes(outTypes);
      r->setResults(out);
      return r;
    };
    auto thenG = region(true);
    auto elseG = region(false);
    if (!thenG || !elseG) return false;
    ir::Node* n = gb.create(CoreOp::If, ops, {}, outTypes);
    if (!n) return false;
    n->addRegion(std::move(thenG));
    n->addRegion(std::move(elseG));
    std::vector<Value*> rs;
    for (size_t i = 0; i < n->numResults(); ++i) rs.push_back(n->result(i));
    gg->setResultTypes(outTypes);
    gg->setResults(rs);
  }
  for (Binding* x : bs) {
    x->initGraph = gg;
    x->effectfulInit = true;
  }
  return true;
}

LV Lowerer::readBinding(Binding* b, const SourceRange& at) {
  Value* cell = nullptr;
  if (b->kind == BindKind::Global && b->initGraph && b->effectfulInit) {
    ir::Node* n = effect(CoreOp::Call, {}, ir::attrs({{"callee", ir::Attr::symbol(b->initGraph->name())}}),
                         b->initGraph->resultTypes(), at);
    // A global whose initializer failed (reported) has no result here.
    if (!n || 1 + b->index >= n->numResults()) return {};
    Value* v = n->result(1 + b->index);
    if (!b->isCell) return {v, v->type()};
    cell = v;
  } else if (b->kind == BindKind::Global) {
    if (!lowerGlobal(b)) return {};
    if (b->effectfulInit) return readBinding(b, at);
    ir::Node* n = node(CoreOp::Once, {}, ir::attrs({{"callee", ir::Attr::symbol(b->initGraph->name())}}),
                       b->initGraph->resultTypes(), at);
    if (!n || b->index >= n->numResults()) return {};
    Value* v = n->result(b->index);
    if (!b->isCell) return {v, v->type()};
    cell = v;
  } else {
    auto it = cx_->env.find(b);
    // Not bound: its declaration failed to lower and was reported.
    if (it == cx_->env.end() || !it->second) return {};
    if (!b->isCell) return {it->second, it->second->type()};
    cell = it->second;
  }
  Value* zero = b_.constInt(0);
  if (cx_->tok) {
    ir::Node* n = effect(CoreOp::ListLoad, {cell, zero}, {}, {}, at);
    if (!n) return {};
    return {n->result(1), n->result(1)->type()};
  }
  return one(CoreOp::ListGet, {cell, zero}, at);
}

LV Lowerer::applyDecorators(FuncInfo* f, LV v) {
  Type want = v.t;
  auto& decs = f->decl->decorators;
  for (size_t i = decs.size(); v && i-- > 0;) {
    std::vector<ArgIn> args{{nullptr, v, decs[i].range}};
    LV r = call(decs[i].name, decs[i].hasArgs ? &decs[i].args : nullptr, args, decs[i].range);
    if (r && !sameType(r.t, want)) {
      report(diags_, Diag::DecoratorMismatch, decs[i].range.loc(),
             {decs[i].name->fullName(), camelTypeName(want), camelTypeName(r.t)});
      r = {};
    }
    v = r;
  }
  return v;
}

// A decorated nested function (spec 8.8): the decorators run where the
// declaration stands, in the declaring function, and every later use of the
// name reads the hidden local holding the result.
void Lowerer::lowerNestedDecorated(FuncInfo* f) {
  if (!lowerFunction(f)) return;
  f->decorated = false;
  LV v = funcValue(f, f->decl->name.range);
  f->decorated = true;
  v = applyDecorators(f, v);
  if (v && f->decoratedLocal) cx_->env[f->decoratedLocal] = v.v;
}

LV Lowerer::decoratedValue(FuncInfo* f, const SourceRange& at) {
  Binding* g = f->decoratedGlobal;
  if (!g && f->decoratedLocal) {
    for (FuncInfo* p = cx_->fn; p; p = p->parent)
      if (p == f) {
        report(diags_, Diag::FeatureNotSupported, at.loc(),
               {"a decorated nested function referring to itself"});
        return {};
      }
    return readBinding(f->decoratedLocal, at);
  }
  if (!g) {
    report(diags_, Diag::FeatureNotSupported, at.loc(), {"a decorator on a nested function"});
    return {};
  }
  if (!g->initGraph) {
    if (g->initLowering) {
      report(diags_, Diag::CallingIncompleteFunction, at.loc(), {f->name});
      return {};
    }
    if (f->decoratorInit && f->decoratorInit->effectful) {
      report(diags_, Diag::EffectfulGlobalInit, f->decl->name.range.loc(), {f->name});
      return {};
    }
    g->initLowering = true;
    ir::Graph* ig = mod_.add(std::make_unique<ir::Graph>(uniqueName(f->unit->name + "::" + f->name)));
    Ctx c;
    c.fn = f->decoratorInit;
    c.g = ig;
    {
      CtxScope scope(*this, c);
      f->decorated = false;
      LV v = funcValue(f, f->decl->name.range);
      f->decorated = true;
      v = applyDecorators(f, v);
      if (v) {
        ig->setResultTypes({v.t});
        ig->setResults({v.v});
      }
    }
    g->initLowering = false;
    if (ig->results().empty()) return {};
    g->initGraph = ig;
    g->index = 0;
  }
  LV r = one(CoreOp::Once, {}, at, ir::attrs({{"callee", ir::Attr::symbol(g->initGraph->name())}}),
             g->initGraph->resultTypes());
  return r;
}

// ---- Driver -------------------------------------------------------------------

bool Lowerer::run(CompiledProgram& out) {
  size_t errorsBefore = diags_.errorCount();
  for (auto& u : prog_.units) {
    if (u->failed) continue;
    for (FuncInfo* f : u->functions) lowerFunction(f);
    for (Binding* g : u->globals) lowerGlobal(g);
  }
  if (prog_.main) {
    auto it = prog_.main->scope.find("main");
    if (it != prog_.main->scope.end() && it->second->kind == BindKind::Func &&
        !it->second->overloads.empty()) {
      FuncInfo* m = it->second->overloads.front();
      out.mainGraph = m->decorated ? "" : graphNameFor(m);
      out.mainTakesToken = m->effectful;
      out.mainResult = m->resultType;
      out.mainIsMacro = m->sig && (m->sig->modifiers & ModMacro);
    }
    for (auto& [name, b] : prog_.main->exports) {
      if (b->kind != BindKind::Func) continue;
      for (FuncInfo* f : b->overloads) {
        if (!f->lowered || f->failed) continue;
        ExportedFunction e;
        e.name = name;
        e.graph = f->decorated ? "" : graphNameFor(f);
        e.takesToken = f->effectful;
        for (const Param& p : f->sig->withParams) e.withParams.push_back(p.name.name);
        for (const Param& p : f->sig->params) e.params.push_back(p.name.name);
        e.withTypes = f->withTypes;
        e.paramTypes = f->paramTypes;
        e.result = f->resultType;
        out.exports.push_back(std::move(e));
      }
    }
  }
  if (diags_.errorCount() != errorsBefore) return false;
  if (!expandGrads()) return false;
  expandMacros();
  return true;
}

}  // namespace xacc::camel::sema

namespace xacc::camel {

bool compileProgram(const std::string& path, const CompileOptions& opts,
                    support::DiagnosticEngine& diags, CompiledProgram& out) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  sema::Program prog;
  bool ok = sema::analyseProgram(path, opts, diags, prog);
  auto t1 = Clock::now();
  // Parsing happens inside analysis (modules load on demand); report it as sema.
  out.semaSeconds = std::chrono::duration<double>(t1 - t0).count();
  if (!ok || !opts.lower) return ok;
  sema::registerFrontendBuiltins();
  out.module = std::make_unique<ir::Module>();
  sema::Lowerer lowerer(prog, diags, *out.module);
  ok = lowerer.run(out);
  out.lowerSeconds = std::chrono::duration<double>(Clock::now() - t1).count();
  return ok;
}

}  // namespace xacc::camel
