// Name resolution (spec 8.1): scopes, hoisting of top-level functions,
// let/var/parameter bindings, overload sets, type aliases (which must precede
// their uses), closure captures (Note [Block functions] in SemaImpl.h), and
// the facts lowering needs about effects: which FuncInfos perform effects
// directly and which functions they call. Type expressions are resolved here
// too. Every problem is reported and resolution continues.
#include "SemaResolve.h"

#include <algorithm>

namespace xacc::camel::sema {

using ir::Type;

namespace {

bool isReserved(const std::string& n) {
  return n.size() >= 4 && n.compare(0, 2, "__") == 0 && n.compare(n.size() - 2, 2, "__") == 0;
}

const char* kBuiltinTypes[] = {"int", "i32", "i64", "float", "f32", "f64",
                               "bool", "string", "any", "void"};

Type builtinType(const std::string& n) {
  if (n == "int" || n == "i64") return Type::i64();
  if (n == "i32") return Type::i32();
  if (n == "float" || n == "f64") return Type::f64();
  if (n == "f32") return Type::f32();
  if (n == "bool") return Type::boolean();
  if (n == "string") return Type::string();
  if (n == "any") return Type::any();
  if (n == "void") return Type::null();
  return Type();
}

}  // namespace

Resolver::Resolver(Program& p, support::DiagnosticEngine& d, UnitLoader loader)
    : prog_(p), diags_(d), loader_(std::move(loader)) {}

// ---- Scopes -------------------------------------------------------------------

void Resolver::pushScope() { scopes_.push_back({}); }
void Resolver::popScope() { scopes_.pop_back(); }

FuncInfo* Resolver::effectOwner(FuncInfo* f) {
  while (f && f->kind == FuncInfo::Kind::Arm) f = f->parent;
  return f;
}

bool Resolver::declare(Binding* b, const SourceRange& r) {
  if (isReserved(b->name)) {
    report(diags_, Diag::ReservedIdentifier, r.loc(), {b->name});
    return false;
  }
  auto& names = scopes_.empty() ? unit_->scope : scopes_.back();
  auto it = names.find(b->name);
  if (it != names.end()) {
    Binding* prev = it->second;
    if (prev->kind == BindKind::Func && b->kind == BindKind::Func && prev != b) {
      // Overloads share one binding.
      prev->overloads.insert(prev->overloads.end(), b->overloads.begin(), b->overloads.end());
      for (FuncInfo* f : b->overloads) f->self = prev;
      return true;
    }
    if (prev == b) return true;
    auto& d = report(diags_, Diag::Redeclaration, r.loc(), {b->name});
    if (prev->range.valid())
      d.notes.push_back({support::Severity::Note, "", prev->range.loc(), "previously declared here",
                         {}, {}});
    return false;
  }
  names[b->name] = b;
  return true;
}

void Resolver::addCapture(FuncInfo* from, Binding* b) {
  for (FuncInfo* f = from; f && f != b->owner; f = f->parent) {
    if (f->kind == FuncInfo::Kind::Decl || f->kind == FuncInfo::Kind::Lambda) b->captured = true;
    if (f->captureSet.insert(b).second) {
      f->captures.push_back(b);
      // The reference builds a nested function's closure as its body is
      // read: a capture first needed after the function referred to itself
      // is missing from that self-call (spec 8.10).
      if (f->selfCalled && curName_) {
        auto& d = report(diags_, Diag::ClosureCaptureAfterSelfCall, curName_->loc(), {f->name, b->name});
        d.suggestion = "use '" + b->name + "' in '" + f->name + "' before its recursive call";
      }
    }
  }
}

void Resolver::noteUse(Binding* b) {
  if (!cur_) return;
  if (b->kind == BindKind::Local && b->owner != cur_) addCapture(cur_, b);
  if (b->kind == BindKind::Local || b->kind == BindKind::Global)
    uses_.push_back({effectOwner(cur_), b});
  if (b->kind == BindKind::Func) {
    for (FuncInfo* f : b->overloads) {
      // A nested function's captures become captures of whoever refers to it;
      // references from inside its own body are completed once it is resolved.
      // A reference from a lambda inside `f` is not a self-call while `f`'s
      // body is read: the lambda is created when `f` runs, with `f`'s final
      // captures (pendingSelf_ below), so `f` may still acquire captures
      // after it (issue 23, item 4a). Arms are part of `f`'s own body.
      bool inside = false, viaLambda = false;
      for (FuncInfo* g = cur_; g; g = g->parent) {
        if (g == f) {
          inside = true;
          break;
        }
        if (g->kind == FuncInfo::Kind::Lambda) viaLambda = true;
      }
      if (inside) {
        if (f->parent && f->kind == FuncInfo::Kind::Decl && !viaLambda) f->selfCalled = true;
        if (f != cur_) pendingSelf_[f].push_back(cur_);
        continue;
      }
      for (Binding* c : f->captures) noteUse(c);
      if (f->decoratedLocal) noteUse(f->decoratedLocal);
    }
  }
}

Binding* Resolver::lookupBuiltin(const std::string& module, const std::string& name) {
  std::string key = module + "::" + name;
  auto it = prog_.builtins.find(key);
  if (it != prog_.builtins.end()) return it->second;
  if (stdlibOverloads(module, name).empty()) return nullptr;
  Binding* b = prog_.newBinding(BindKind::Builtin, name);
  b->module = module;
  prog_.builtins[key] = b;
  return b;
}

Binding* Resolver::importedBuiltin(Binding* b) {
  if (stdlibOverloads("", b->name).empty()) return b;
  std::string key = "import:" + b->module + "::" + b->name;
  auto it = prog_.builtins.find(key);
  if (it != prog_.builtins.end()) return it->second;
  Binding* g = prog_.newBinding(BindKind::Builtin, b->name);
  g->module = b->module;
  g->withGlobal = true;
  prog_.builtins[key] = g;
  return g;
}

Binding* Resolver::lookup(const std::string& name) {
  for (size_t i = scopes_.size(); i-- > 0;) {
    auto it = scopes_[i].find(name);
    if (it != scopes_[i].end()) return it->second;
  }
  auto it = unit_->scope.find(name);
  if (it != unit_->scope.end()) {
    Binding* b = it->second;
    // Top-level let/var are visible after their declaration only (for other
    // initializers); function bodies see every global.
    if (b->kind == BindKind::Global && inGlobalInit_ && b->declOrder >= order_) return nullptr;
    if (b->kind == BindKind::Type && b->declOrder > order_) return nullptr;
    return b;
  }
  return lookupBuiltin("", name);
}

Binding* Resolver::lookupQualified(const std::vector<std::string>& quals, const std::string& name) {
  if (quals.empty()) return lookup(name);
  std::string mod;
  for (size_t i = 0; i < quals.size(); ++i) mod += (i ? "." : "") + quals[i];
  for (auto& u : prog_.units)
    if (u->name == quals.back() || u->name == mod) {
      auto it = u->exports.find(name);
      if (it != u->exports.end()) return it->second;
    }
  return lookupBuiltin(quals.back(), name);
}

std::vector<std::string> Resolver::visibleNames() {
  std::vector<std::string> out;
  for (auto& s : scopes_)
    for (auto& [n, b] : s) out.push_back(n);
  for (auto& [n, b] : unit_->scope) out.push_back(n);
  for (const StdlibEntry& e : stdlibEntries())
    if (e.module.empty()) out.push_back(e.name);
  return out;
}

// ---- Types --------------------------------------------------------------------

Type Resolver::resolveType(TypeExpr* t) {
  Type r = resolveTypeImpl(t);
  if (t) prog_.types[t] = r;
  return r;
}

Type Resolver::resolveTypeImpl(TypeExpr* t) {
  if (!t) return Type();
  switch (t->kind()) {
    case NodeKind::NamedType: {
      auto* n = cast<NamedType>(t);
      if (n->qualifiers.empty()) {
        if (Type b = builtinType(n->name)) return b;
      }
      Binding* b = nullptr;
      if (n->qualifiers.empty()) {
        b = lookup(n->name);
      } else {
        b = lookupQualified(n->qualifiers, n->name);
      }
      if (b && b->kind == BindKind::Type) return b->type;
      if (b) {
        report(diags_, Diag::NotAType, t->loc(), {n->fullName()});
        return Type();
      }
      auto& d = report(diags_, Diag::UnresolvedTypeReference, t->loc(), {n->fullName()});
      std::vector<std::string> cands(std::begin(kBuiltinTypes), std::end(kBuiltinTypes));
      for (auto& s : scopes_)
        for (auto& [nm, bb] : s)
          if (bb->kind == BindKind::Type) cands.push_back(nm);
      for (auto& [nm, bb] : unit_->scope)
        if (bb->kind == BindKind::Type) cands.push_back(nm);
      std::string best = closestName(n->name, cands);
      if (!best.empty()) d.suggestion = "did you mean '" + best + "'?";
      return Type();
    }
    case NodeKind::SpecializedType: {
      auto* s = cast<SpecializedType>(t);
      std::string name = isa<NamedType>(s->base) ? cast<NamedType>(s->base)->fullName() : "type";
      // Only module types take type arguments (spec 6.4): `Tensor<bool>`.
      if (auto* nt = dyn_cast<NamedType>(s->base)) {
        Binding* b = nt->qualifiers.empty() ? lookup(nt->name) : lookupQualified(nt->qualifiers, nt->name);
        const ModuleType* mt = b && b->kind == BindKind::Type && !b->module.empty()
                                   ? moduleType(b->module, b->name)
                                   : nullptr;
        if (mt) {
          std::vector<Type> args;
          for (TypeArg& a : s->args) {
            if (!a.type) {
              report(diags_, Diag::BadTypeArguments, t->loc(), {name, "type arguments must be types"});
              return Type();
            }
            Type x = resolveType(a.type);
            if (!x) return Type();
            args.push_back(x);
          }
          Type out;
          std::string err;
          if (!mt->make(args, out, err)) {
            report(diags_, Diag::BadTypeArguments, t->loc(), {name, err});
            return Type();
          }
          return out;
        }
      }
      report(diags_, Diag::TypeArgsNotAllowed, t->loc(), {name});
      return Type();
    }
    case NodeKind::ArrayType: {
      Type e = resolveType(cast<ArrayType>(t)->element);
      return e ? Type::list(e) : Type();
    }
    case NodeKind::TupleType: {
      std::vector<Type> es;
      for (TypeExpr* e : cast<TupleType>(t)->elements) {
        Type x = resolveType(e);
        if (!x) return Type();
        es.push_back(x);
      }
      return Type::tuple(es);
    }
    case NodeKind::StructType: {
      std::vector<std::pair<std::string, Type>> fs;
      std::set<std::string> seen;
      bool ok = true;
      for (FieldType& f : cast<StructType>(t)->fields) {
        if (!seen.insert(f.name.name).second) {
          report(diags_, Diag::DuplicateField, f.name.range.loc(), {f.name.name});
          ok = false;
        }
        Type x = resolveType(f.type);
        if (!x) ok = false;
        fs.push_back({f.name.name, x});
      }
      return ok ? Type::structure(fs) : Type();
    }
    case NodeKind::FuncType: {
      auto* f = cast<FuncType>(t);
      std::vector<Type> ws, ps;
      std::vector<bool> vars;
      bool ok = true;
      for (Param& p : f->sig.withParams) {
        ws.push_back(resolveType(p.type));
        ok &= bool(ws.back());
      }
      for (Param& p : f->sig.params) {
        ps.push_back(resolveType(p.type));
        vars.push_back(p.isVar);
        ok &= bool(ps.back());
      }
      Type r = f->sig.result ? resolveType(f->sig.result) : Type::null();
      if (!ok || !r) return Type();
      return funcValueType(ws, ps, vars, r);
    }
    case NodeKind::NullableType: {
      auto* n = cast<NullableType>(t);
      if (n->alternative) {
        report(diags_, Diag::FeatureNotSupported, t->loc(), {"the type operator 'T ? U'"});
        return Type();
      }
      return resolveType(n->base);  // [REF] T? means T
    }
    case NodeKind::BinaryType: {
      auto* b = cast<BinaryType>(t);
      Type l = resolveType(b->lhs), r = resolveType(b->rhs);
      if (b->op != TypeOp::Union) {
        report(diags_, Diag::FeatureNotSupported, t->loc(),
               {std::string("the type operator '") + typeOpSpelling(b->op) + "'"});
        return Type();
      }
      if (!l || !r) return Type();
      return sameType(l, r) ? l : Type::any();  // unions are checked dynamically
    }
    case NodeKind::TypeofType:
      report(diags_, Diag::FeatureNotSupported, t->loc(), {"'typeof'"});
      return Type();
    case NodeKind::TypeasType:
      report(diags_, Diag::FeatureNotSupported, t->loc(), {"'typeas'"});
      return Type();
    case NodeKind::OfType:
      report(diags_, Diag::FeatureNotSupported, t->loc(), {"'of' types"});
      return Type();
    default: return Type();
  }
}

void Resolver::resolveSignature(FuncInfo* f) {
  const FunctionSig& sig = *f->sig;
  std::set<std::string> seen;
  auto param = [&](const Param& p) {
    if (!seen.insert(p.name.name).second)
      report(diags_, Diag::DuplicateParameter, p.name.range.loc(), {p.name.name});
    if (p.defaultValue)
      report(diags_, Diag::FeatureNotSupported, p.defaultValue->loc(), {"a default parameter value"});
    return resolveType(p.type);
  };
  for (const Param& p : sig.withParams) f->withTypes.push_back(param(p));
  for (const Param& p : sig.params) {
    f->paramTypes.push_back(param(p));
    f->varParams.push_back(p.isVar);
    if (p.isVar && !(sig.modifiers & ModSync) && f->kind == FuncInfo::Kind::Decl)
      report(diags_, Diag::VarParamInAsyncFunction, p.name.range.loc(), {p.name.name});
  }
  if (sig.result) f->declaredResult = resolveType(sig.result);
}

// ---- Functions ----------------------------------------------------------------

void Resolver::bindParams(FuncInfo* f) {
  auto bind = [&](const Param& p, Type t, bool isWith) {
    Binding* b = prog_.newBinding(BindKind::Local, p.name.name);
    b->range = p.name.range;
    b->unit = unit_;
    b->owner = f;
    b->isVar = p.isVar;
    b->isParam = true;
    b->isWith = isWith;
    b->declared = t;
    // A duplicate parameter was reported by resolveSignature.
    if (!scopes_.back().count(b->name)) declare(b, p.name.range);
    prog_.paramBindings[&p] = b;
  };
  for (size_t i = 0; i < f->sig->withParams.size(); ++i)
    bind(f->sig->withParams[i], f->withTypes[i], true);
  for (size_t i = 0; i < f->sig->params.size(); ++i)
    bind(f->sig->params[i], f->paramTypes[i], false);
}

void Resolver::resolveBody(FuncInfo* f, Expr* body) {
  FuncInfo* saved = cur_;
  cur_ = f;
  pushScope();
  bindParams(f);
  if (f->sig && (f->sig->modifiers & ModSync)) f->directEffect = true;
  if (auto* blk = dyn_cast<BlockExpr>(body)) {
    if (blk->isSync) effectOwner(f)->directEffect = true;
    resolveStmts(blk->stmts);
  } else if (body) {
    resolveExpr(body);
  }
  popScope();
  cur_ = saved;
  // References to `f` from its own arms and lambdas need its final captures.
  auto it = pendingSelf_.find(f);
  if (it != pendingSelf_.end()) {
    for (FuncInfo* from : it->second)
      for (Binding* c : f->captures) {
        FuncInfo* savedCur = cur_;
        cur_ = from;
        noteUse(c);
        cur_ = savedCur;
      }
    pendingSelf_.erase(it);
  }
}

FuncInfo* Resolver::declareFunction(FuncDecl* d, bool topLevel) {
  FuncInfo* f = prog_.newFunc(FuncInfo::Kind::Decl);
  f->decl = d;
  f->sig = &d->sig;
  f->parent = topLevel ? nullptr : cur_;
  f->unit = unit_;
  f->name = d->name.name;
  f->decorated = !d->decorators.empty();
  f->declOrder = order_;
  // Foreign code may do anything: outer functors are called in program order.
  if (!d->outerUri.empty()) f->directEffect = true;
  prog_.funcOf[d] = f;
  Binding* b = prog_.newBinding(BindKind::Func, d->name.name);
  b->range = d->name.range;
  b->unit = unit_;
  b->owner = topLevel ? nullptr : cur_;
  b->overloads.push_back(f);
  b->exported = d->isExport;
  f->self = b;
  declare(b, d->name.range);
  if (topLevel) unit_->functions.push_back(f);
  return f;
}

void Resolver::resolveDecorators(FuncInfo* f) {
  for (Decorator& dec : f->decl->decorators) {
    resolveExpr(dec.name);
    for (Argument& a : dec.args) resolveExpr(a.value);
  }
}

// ---- Statements ---------------------------------------------------------------

void Resolver::resolveStmts(std::vector<Stmt*>& stmts) {
  bool returned = false;
  for (Stmt* s : stmts) {
    if (returned && !isa<FuncDecl>(s) && !isa<TypeDecl>(s)) {
      report(diags_, Diag::UnreachableAfterReturn, s->loc());
      returned = false;  // once per block
    }
    resolveStmt(s);
    if (isa<ReturnStmt>(s)) returned = true;
  }
}

void Resolver::resolveDataDecl(DataDecl* d, bool global) {
  if (d->carrier == DataDecl::Carrier::Struct || d->carrier == DataDecl::Carrier::Array) {
    report(diags_, Diag::FeatureNotSupported, d->loc(),
           {d->carrier == DataDecl::Carrier::Struct ? "struct destructuring"
                                                     : "array destructuring"});
  }
  for (Expr* v : d->values) resolveExpr(v);
  std::vector<Binding*>& bs = prog_.declBindings[d];
  for (size_t i = 0; i < d->names.size(); ++i) {
    Binding* b = prog_.newBinding(global ? BindKind::Global : BindKind::Local, d->names[i].name);
    b->range = d->names[i].range;
    b->unit = unit_;
    b->owner = global ? nullptr : cur_;
    b->isVar = d->isVar;
    b->decl = d;
    b->index = i;
    b->declOrder = order_;
    if (i < d->types.size()) b->declared = resolveType(d->types[i]);
    else if (d->types.size() == 1 && d->carrier == DataDecl::Carrier::List && d->names.size() == 1)
      b->declared = resolveType(d->types[0]);
    bs.push_back(b);
    declare(b, d->names[i].range);
    if (global) unit_->globals.push_back(b);
  }
  if (d->types.size() > d->names.size())
    for (size_t i = d->names.size(); i < d->types.size(); ++i) resolveType(d->types[i]);
}

void Resolver::resolveTypeDecl(TypeDecl* t) {
  Binding* b = prog_.newBinding(BindKind::Type, t->name.name);
  b->range = t->name.range;
  b->unit = unit_;
  b->declOrder = order_;
  if (t->type) {
    b->type = resolveType(t->type);
  } else {
    report(diags_, Diag::FeatureNotSupported, t->loc(), {"an opaque (native) type"});
  }
  declare(b, t->name.range);
}

void Resolver::resolveStmt(Stmt* s) {
  switch (s->kind()) {
    case NodeKind::DataDecl: resolveDataDecl(cast<DataDecl>(s), false); break;
    case NodeKind::FuncDecl: {
      auto* d = cast<FuncDecl>(s);
      FuncInfo* f = declareFunction(d, false);
      resolveSignature(f);
      if (f->decorated) {
        effectOwner(cur_)->directEffect = true;
        resolveDecorators(f);
        Binding* hb = prog_.newBinding(BindKind::Local, f->name);
        hb->owner = cur_;
        hb->unit = unit_;
        hb->range = d->name.range;
        f->decoratedLocal = hb;
      }
      if (d->body) resolveBody(f, d->body);
      break;
    }
    case NodeKind::TypeDecl: resolveTypeDecl(cast<TypeDecl>(s)); break;
    case NodeKind::UseDecl:
      report(diags_, Diag::FeatureNotSupported, s->loc(), {"'use'"});
      break;
    case NodeKind::ReturnStmt:
      for (Expr* e : cast<ReturnStmt>(s)->values) resolveExpr(e);
      break;
    case NodeKind::BlockStmt: {
      auto* b = cast<BlockStmt>(s);
      if (b->block->isSync) effectOwner(cur_)->directEffect = true;
      pushScope();
      resolveStmts(b->block->stmts);
      popScope();
      break;
    }
    case NodeKind::ExprStmt: resolveExpr(cast<ExprStmt>(s)->expr); break;
    case NodeKind::ImportDecl:
    case NodeKind::ExportDecl:
    case NodeKind::ModuleDecl:
      report(diags_, Diag::FeatureNotSupported, s->loc(), {"this declaration inside a function"});
      break;
    default: break;
  }
}

// ---- Expressions --------------------------------------------------------------

void Resolver::resolveArm(Expr* arm) {
  if (!arm) return;
  FuncInfo* f = prog_.newFunc(FuncInfo::Kind::Arm);
  f->armBody = arm;
  f->parent = cur_;
  f->unit = unit_;
  f->name = cur_ ? cur_->name : "";
  prog_.funcOf[arm] = f;
  FuncInfo* saved = cur_;
  cur_ = f;
  pushScope();
  if (auto* blk = dyn_cast<BlockExpr>(arm)) {
    if (blk->isSync) effectOwner(f)->directEffect = true;
    resolveStmts(blk->stmts);
  } else {
    resolveExpr(arm);
  }
  popScope();
  cur_ = saved;
}

void Resolver::noteCall(Expr* callee) {
  FuncInfo* owner = effectOwner(cur_);
  if (!owner) return;
  Expr* base = callee;
  if (auto* w = dyn_cast<WithExpr>(base)) base = w->callee;
  auto* n = dyn_cast<NameExpr>(base);
  Binding* b = n ? prog_.refs[n] : nullptr;
  if (!b) {
    owner->directEffect = true;  // applying a function value
    return;
  }
  switch (b->kind) {
    case BindKind::Func:
      for (FuncInfo* f : b->overloads) {
        if (f->decorated) owner->directEffect = true;
        owner->callees.push_back(f);
      }
      break;
    case BindKind::Builtin:
      for (const StdlibEntry* e : builtinOverloads(*b))
        if (e->effectful || !e->deterministic) owner->directEffect = true;
      break;
    default: owner->directEffect = true; break;
  }
}

void Resolver::resolveName(NameExpr* n) {
  Binding* b = n->qualifiers.empty() ? lookup(n->name) : lookupQualified(n->qualifiers, n->name);
  if (!b) {
    auto& d = report(diags_, Diag::UnresolvedReference, n->loc(), {n->fullName()});
    for (const StdlibEntry& e : stdlibEntries())
      if (!e.module.empty() && e.name == n->name && n->qualifiers.empty()) {
        d.suggestion = "'" + n->name + "' is in module '" + e.module + "': add 'import { " + n->name +
                       " } from " + e.module + "'";
        return;
      }
    std::string best = closestName(n->name, visibleNames());
    if (!best.empty()) d.suggestion = "did you mean '" + best + "'?";
    return;
  }
  if (b->kind == BindKind::Type) {
    report(diags_, Diag::NotAValue, n->loc(), {n->fullName()});
    return;
  }
  prog_.refs[n] = b;
  curName_ = n;
  noteUse(b);
  curName_ = nullptr;
}

void Resolver::resolveExpr(Expr* e) {
  if (!e) return;
  // Left-nested operator chains parse without recursion; analysing them
  // recurses, so bound the depth (lowering then never sees deeper trees).
  struct Depth {
    size_t& d;
    explicit Depth(size_t& x) : d(x) { ++d; }
    ~Depth() { --d; }
  } depth(exprDepth_);
  if (exprDepth_ > kMaxExprDepth) {
    if (!depthReported_)
      report(diags_, Diag::NestingTooDeep, e->loc(), {std::to_string(kMaxExprDepth)});
    depthReported_ = true;
    return;
  }
  switch (e->kind()) {
    case NodeKind::Name: resolveName(cast<NameExpr>(e)); return;
    case NodeKind::Assign: {
      auto* a = cast<AssignExpr>(e);
      resolveExpr(a->value);
      resolveExpr(a->target);
      auto* n = dyn_cast<NameExpr>(a->target);
      Binding* b = n ? prog_.refs[n] : nullptr;
      if (!n) {
        report(diags_, Diag::AssignToNonVariable, a->target->loc(), {"this expression"});
      } else if (b && (b->kind == BindKind::Local || b->kind == BindKind::Global)) {
        if (!b->isVar && !b->isParam) report(diags_, Diag::LetAssigned, n->loc(), {b->name});
        b->assigned = true;
        if (b->kind == BindKind::Global || b->owner != cur_) b->assignedOutsideOwner = true;
      } else if (b) {
        report(diags_, Diag::AssignToNonVariable, n->loc(), {"'" + n->fullName() + "'"});
      }
      return;
    }
    case NodeKind::Call: {
      auto* c = cast<CallExpr>(e);
      resolveExpr(c->callee);
      for (Argument& a : c->args) {
        if (!a.name.empty() || a.spread)
          report(diags_, Diag::FeatureNotSupported, a.range.loc(),
                 {a.spread ? "a spread argument" : "a named argument"});
        resolveExpr(a.value);
      }
      noteCall(c->callee);
      return;
    }
    case NodeKind::With: {
      auto* w = cast<WithExpr>(e);
      resolveExpr(w->callee);
      for (Argument& a : w->args) resolveExpr(a.value);
      return;
    }
    case NodeKind::Binary: {
      auto* b = cast<BinaryExpr>(e);
      resolveExpr(b->lhs);
      resolveExpr(b->rhs);
      if (b->op == BinaryOp::Pipe) {
        if (isa<NameExpr>(b->rhs) || (isa<WithExpr>(b->rhs) &&
                                      isa<NameExpr>(cast<WithExpr>(b->rhs)->callee)))
          noteCall(b->rhs);
        else if (FuncInfo* o = effectOwner(cur_))
          o->directEffect = true;
      } else if (b->op == BinaryOp::Compose) {
        if (FuncInfo* o = effectOwner(cur_)) o->directEffect = true;
      } else if (b->op == BinaryOp::NullPipe || b->op == BinaryOp::NullCompose) {
        report(diags_, Diag::FeatureNotSupported, e->loc(),
               {std::string("'") + binaryOpSpelling(b->op) + "'"});
      }
      return;
    }
    case NodeKind::Lambda: {
      auto* l = cast<LambdaExpr>(e);
      FuncInfo* f = prog_.newFunc(FuncInfo::Kind::Lambda);
      f->lambda = l;
      f->sig = &l->sig;
      f->parent = cur_;
      f->unit = unit_;
      f->name = "lambda";
      f->effectful = true;
      prog_.funcOf[l] = f;
      resolveSignature(f);
      resolveBody(f, l->body);
      return;
    }
    case NodeKind::If: {
      auto* i = cast<IfExpr>(e);
      resolveExpr(i->cond);
      resolveArm(i->thenArm);
      resolveArm(i->elseArm);
      return;
    }
    case NodeKind::Match: {
      auto* m = cast<MatchExpr>(e);
      resolveExpr(m->subject);
      bool wildcard = false;
      for (MatchCase& c : m->cases) {
        for (Pattern* p : c.patterns) {
          if (isa<WildcardPattern>(p)) wildcard = true;
          else if (!isa<LiteralPattern>(p))
            report(diags_, Diag::UnsupportedPattern, p->loc(),
                   {isa<NamePattern>(p) ? "name" : isa<TuplePattern>(p) ? "tuple" : "struct"});
        }
        resolveArm(c.body);
      }
      if (!wildcard)
        if (FuncInfo* o = effectOwner(cur_)) o->directEffect = true;  // no-match failure
      return;
    }
    case NodeKind::Try:
      report(diags_, Diag::FeatureNotSupported, e->loc(), {"'try'"});
      return;
    case NodeKind::Comprehension:
      report(diags_, Diag::FeatureNotSupported, e->loc(), {"an array comprehension"});
      return;
    case NodeKind::Block: {
      auto* b = cast<BlockExpr>(e);
      if (b->isSync)
        if (FuncInfo* o = effectOwner(cur_)) o->directEffect = true;
      pushScope();
      resolveStmts(b->stmts);
      popScope();
      return;
    }
    case NodeKind::Cast: {
      auto* c = cast<CastExpr>(e);
      resolveExpr(c->operand);
      resolveType(c->type);
      if (c->isTest) report(diags_, Diag::FeatureNotSupported, e->loc(), {"'is'"});
      return;
    }
    case NodeKind::Array:
      for (Argument& a : cast<ArrayExpr>(e)->elements) {
        if (a.spread) report(diags_, Diag::FeatureNotSupported, a.range.loc(), {"a spread element"});
        resolveExpr(a.value);
      }
      return;
    case NodeKind::Struct: {
      std::set<std::string> seen;
      for (FieldInit& f : cast<StructExpr>(e)->fields) {
        if (f.spread) report(diags_, Diag::FeatureNotSupported, f.range.loc(), {"a spread field"});
        else if (!seen.insert(f.name.name).second)
          report(diags_, Diag::DuplicateField, f.name.range.loc(), {f.name.name});
        resolveExpr(f.value);
      }
      return;
    }
    case NodeKind::Index: {
      auto* i = cast<IndexExpr>(e);
      if (i->isSlice()) report(diags_, Diag::FeatureNotSupported, e->loc(), {"slicing 'a[i:j]'"});
      forEachChild(e, [this](Node* c) { resolveExpr(static_cast<Expr*>(c)); });
      return;
    }
    default:
      forEachChild(e, [this](Node* c) {
        if (Expr* x = dyn_cast<Expr>(c)) resolveExpr(x);
        else if (TypeExpr* t = dyn_cast<TypeExpr>(c)) resolveType(t);
      });
      return;
  }
}

// ---- Modules ------------------------------------------------------------------

void Resolver::resolveImport(ImportDecl* d) {
  std::string modName = d->path.str();
  std::string last = d->path.parts.empty() ? "" : d->path.parts.back().name;
  ModuleUnit* u = loader_(d, unit_);
  if (!u) {
    if (!d->path.prefix.empty() || !isStdlibModule(last)) return;  // loader reported it
    unit_->importedStdModules.insert(last);
    auto bindType = [&](const std::string& name) {
      const ModuleType* mt = moduleType(last, name);
      if (!mt) return false;
      Binding* b = prog_.newBinding(BindKind::Type, name);
      b->module = last;
      std::string err;
      if (!mt->make({}, b->type, err)) b->type = Type::any();
      unit_->scope[name] = b;
      return true;
    };
    auto bindStd = [&](const Ident& n) {
      if (bindType(n.name)) return;
      Binding* b = lookupBuiltin(last, n.name);
      if (!b) {
        report(diags_, Diag::ImportNameNotExported, n.range.loc(), {modName, n.name});
        return;
      }
      unit_->scope[n.name] = importedBuiltin(b);
    };
    if (d->form == ImportDecl::Form::Names) {
      for (const Ident& n : d->names) bindStd(n);
    } else {
      for (const StdlibEntry& e : stdlibEntries())
        if (e.module == last) unit_->scope[e.name] = importedBuiltin(lookupBuiltin(last, e.name));
      for (const std::string& t : moduleTypeNames(last)) bindType(t);
    }
    return;
  }
  if (d->form == ImportDecl::Form::Names) {
    for (const Ident& n : d->names) {
      auto it = u->exports.find(n.name);
      if (it == u->exports.end()) {
        auto& diag = report(diags_, Diag::ImportNameNotExported, n.range.loc(), {modName, n.name});
        std::vector<std::string> names;
        for (auto& [nm, b] : u->exports) names.push_back(nm);
        std::string best = closestName(n.name, names);
        if (!best.empty()) diag.suggestion = "did you mean '" + best + "'?";
        continue;
      }
      unit_->scope[n.name] = it->second;
    }
  } else {
    for (auto& [nm, b] : u->exports) unit_->scope[nm] = b;
  }
}

void Resolver::resolveUnit(ModuleUnit& u) {
  // Imports analyse other units from inside this call: keep the state.
  ModuleUnit* savedUnit = unit_;
  FuncInfo* savedCur = cur_;
  size_t savedOrder = order_;
  auto savedScopes = std::move(scopes_);
  scopes_.clear();
  struct Restore {
    Resolver& r;
    ModuleUnit* u;
    FuncInfo* c;
    size_t o;
    std::vector<std::map<std::string, Binding*>>& s;
    ~Restore() {
      r.unit_ = u;
      r.cur_ = c;
      r.order_ = o;
      r.scopes_ = std::move(s);
    }
  } restore{*this, savedUnit, savedCur, savedOrder, savedScopes};
  unit_ = &u;
  cur_ = nullptr;
  std::vector<Stmt*>& decls = u.ast->decls;
  // Imports first, then hoisted functions.
  for (Stmt* s : decls)
    if (auto* i = dyn_cast<ImportDecl>(s)) resolveImport(i);
  order_ = 0;
  for (Stmt* s : decls) {
    ++order_;
    if (auto* f = dyn_cast<FuncDecl>(s)) declareFunction(f, true);
  }
  // Declarations in order: types, globals, signatures.
  order_ = 0;
  std::vector<FuncInfo*> bodies;
  for (Stmt* s : decls) {
    ++order_;
    Stmt* d = s;
    bool exported = false;
    if (auto* ex = dyn_cast<ExportDecl>(s)) {
      d = ex->decl;
      exported = true;
      if (!d) continue;
    }
    if (auto* t = dyn_cast<TypeDecl>(d)) {
      resolveTypeDecl(t);
      if (exported) u.exports[t->name.name] = u.scope[t->name.name];
    } else if (auto* dd = dyn_cast<DataDecl>(d)) {
      FuncInfo* init = prog_.newFunc(FuncInfo::Kind::Init);
      init->unit = &u;
      init->name = dd->names.empty() ? "" : dd->names[0].name;
      prog_.funcOf[dd] = init;
      cur_ = init;
      inGlobalInit_ = true;
      resolveDataDecl(dd, true);
      inGlobalInit_ = false;
      cur_ = nullptr;
      for (Binding* b : prog_.declBindings[dd]) {
        b->owner = nullptr;
        if (exported) u.exports[b->name] = b;
      }
    } else if (auto* fd = dyn_cast<FuncDecl>(d)) {
      FuncInfo* f = prog_.funcOf[fd];
      resolveSignature(f);
      if (f->decorated) {
        FuncInfo* init = prog_.newFunc(FuncInfo::Kind::Decorated);
        init->unit = &u;
        init->name = f->name;
        init->decl = fd;
        cur_ = init;
        resolveDecorators(f);
        cur_ = nullptr;
        Binding* g = prog_.newBinding(BindKind::Global, f->name);
        g->unit = &u;
        g->range = fd->name.range;
        f->decoratedGlobal = g;
        f->decoratorInit = init;
      }
      if (fd->isExport) u.exports[fd->name.name] = f->self;
      bodies.push_back(f);
    }
  }
  for (FuncInfo* f : bodies) {
    order_ = f->declOrder;
    if (f->decl->body) resolveBody(f, f->decl->body);
  }
  order_ = decls.size() + 1;
  for (Stmt* s : decls)
    if (auto* ex = dyn_cast<ExportDecl>(s); ex && !ex->decl)
      for (const Ident& n : ex->names) {
        auto it = u.scope.find(n.name);
        if (it == u.scope.end()) report(diags_, Diag::UnresolvedReference, n.range.loc(), {n.name});
        else u.exports[n.name] = it->second;
      }
}

void Resolver::finish() {
  // Cells: mutable bindings that a nested function, lambda or arm assigns, or
  // that a nested function or lambda captures and someone assigns.
  for (auto& b : prog_.bindings) {
    if (b->kind == BindKind::Local && b->assigned &&
        (b->assignedOutsideOwner || b->captured))
      b->isCell = true;
    if (b->kind == BindKind::Global && b->assigned) b->isCell = true;
  }
  for (auto& [owner, b] : uses_)
    if (b->isCell && owner) owner->directEffect = true;
  // Effects: direct effects, sync functions, var parameters, then callers of
  // effectful functions (fixpoint).
  for (auto& f : prog_.funcs) {
    if (f->kind == FuncInfo::Kind::Lambda) f->effectful = true;
    if (f->kind == FuncInfo::Kind::Arm) continue;
    if (f->directEffect) f->effectful = true;
    if (f->sig && (f->sig->modifiers & ModSync)) f->effectful = true;
    if (f->decl && f->decl->body && f->decl->body->isSync) f->effectful = true;
    for (bool v : f->varParams) f->effectful |= v;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& f : prog_.funcs) {
      if (f->effectful || f->kind == FuncInfo::Kind::Arm) continue;
      for (FuncInfo* c : f->callees)
        if (c->effectful) {
          f->effectful = true;
          changed = true;
          break;
        }
    }
    // Reading a top-level binding whose initializer has effects may run that
    // initializer (spec 11.9: on first use), so the reader has effects too.
    for (auto& [owner, b] : uses_) {
      if (!owner || owner->effectful || b->kind != BindKind::Global || !b->decl) continue;
      auto it = prog_.funcOf.find(b->decl);
      if (it != prog_.funcOf.end() && it->second && it->second->effectful) {
        owner->effectful = true;
        changed = true;
      }
    }
  }
  // Arms follow their function.
  for (auto& f : prog_.funcs)
    if (f->kind == FuncInfo::Kind::Arm) f->effectful = effectOwner(f.get())->effectful;
}

}  // namespace xacc::camel::sema
