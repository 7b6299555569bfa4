// Outer functors (architecture 3, Executor.h):
//     outer func f(x: int): int = "python://helpers.py::f"
// The URI names a scheme whose executor (loaded here on first use) resolves it,
// with the functor's Camel signature, to a native builtin. The functor's graph
// is one effectful call of that builtin on its parameters, so calls, function
// values and exports of outer functors need nothing special. A malformed URI,
// an unknown scheme, an executor that cannot be loaded or a target the resolver
// rejects is a located E2015 at the URI.
#include <atomic>
#include <filesystem>

#include "LowerImpl.h"
#include "xacc/camel/Executor.h"
#include "xacc/ir/Builtins.h"

namespace xacc::camel::sema {

using ir::Type;

LV Lowerer::lowerOuter(FuncInfo* f) {
  FuncDecl* d = f->decl;
  const std::string& uri = d->outerUri;
  auto fail = [&](const std::string& why) -> LV {
    report(diags_, Diag::BadOuterFunctor, d->outerUriRange.loc(), {f->name, uri, why});
    return {};
  };
  size_t sep = uri.find("://");
  if (sep == std::string::npos || sep == 0) return fail("expected 'scheme://target::symbol'");
  OuterFunctor of;
  of.uri = uri;
  of.scheme = uri.substr(0, sep);
  std::string rest = uri.substr(sep + 3);
  size_t sym = rest.rfind("::");
  of.target = sym == std::string::npos ? rest : rest.substr(0, sym);
  of.symbol = sym == std::string::npos ? "" : rest.substr(sym + 2);
  of.baseDir = f->unit->dir;
  of.name = f->name;
  of.params = f->paramTypes;
  of.result = f->declaredResult;
  if (!f->withTypes.empty()) return fail("outer functors take no with-parameters");
  for (bool v : f->varParams)
    if (v) return fail("outer functors take no 'var' parameters");
  if (f->decorated) return fail("outer functors cannot be decorated");

  ExecutorRegistry& reg = ExecutorRegistry::get();
  if (!reg.scheme(of.scheme)) {
    std::string provider = reg.providerOfScheme(of.scheme);
    if (provider.empty()) return fail("no executor provides the '" + of.scheme + "' scheme");
    std::string error;
    if (!reg.load(provider, error)) return fail("executor '" + provider + "' cannot be loaded: " + error);
  }
  const OuterResolver* resolve = reg.scheme(of.scheme);
  if (!resolve) return fail("no executor provides the '" + of.scheme + "' scheme");
  ir::Builtin b;
  std::string error;
  if (!(*resolve)(of, b, error)) return fail(error);
  // One builtin per declaration (a module compiled twice in one process gets two).
  static std::atomic<unsigned> counter{0};
  b.name = "outer." + std::to_string(counter++) + ":" + graphNameFor(f);
  Type result = f->declaredResult ? f->declaredResult : Type::null();
  b.infer = [result](const std::vector<Type>&, std::vector<Type>& rs, std::string&) {
    rs = {result};
    return true;
  };
  b.effectful = true;  // see SemaResolve: outer functors run in program order
  std::string name = b.name;
  if (b.summary.empty()) b.summary = "outer functor " + uri;
  ir::BuiltinRegistry::get().add(std::move(b));

  // Operands: the graph's ordinary parameters (after the captures and token).
  ir::Graph& g = *cx_->g;
  size_t first = g.numParams() - f->paramTypes.size();
  std::vector<ir::Value*> ops;
  for (size_t i = first; i < g.numParams(); ++i) ops.push_back(g.param(i));
  ir::Node* n = effect(ir::CoreOp::BuiltinEffect, ops, ir::attrs({{"name", ir::Attr::string(name)}}), {},
                       d->outerUriRange);
  if (!n || n->numResults() < 2) return {};
  // No location of its own: a failure of the foreign code (a Python exception,
  // a dll error) is reported at the Camel call that reached it (the runtime
  // and the interpreter use the innermost call site; inlining gives the node
  // the call's location), not at this declaration.
  n->setLoc({});
  return {n->result(1), n->result(1)->type()};
}

// Inner functors: `inner func f(x: float): float` with no body is the C++
// builtin `f` (or the standard library's `camel.f`) of the runtime registry,
// called on the functor's parameters; a name the registry does not know is a
// compile-time error at the declaration.
LV Lowerer::lowerInner(FuncInfo* f) {
  FuncDecl* d = f->decl;
  const ir::BuiltinRegistry& reg = ir::BuiltinRegistry::get();
  const ir::Builtin* b = reg.lookup(f->name);
  if (!b) b = reg.lookup("camel." + f->name);
  if (!b) {
    report(diags_, Diag::UnknownInnerFunctor, d->name.range.loc(), {f->name, f->name});
    return {};
  }
  ir::Graph& g = *cx_->g;
  size_t first = g.numParams() - f->paramTypes.size();
  std::vector<ir::Value*> ops;
  std::vector<Type> types;
  for (size_t i = first; i < g.numParams(); ++i) {
    ops.push_back(g.param(i));
    types.push_back(g.param(i)->type());
  }
  if (b->infer) {
    std::vector<Type> rs;
    std::string err;
    if (!b->infer(types, rs, err)) {
      report(diags_, Diag::UnknownInnerFunctor, d->name.range.loc(), {f->name, f->name + "' for these parameter types: " + err + "'"});
      return {};
    }
  }
  ir::AttrDict attrs = ir::attrs({{"name", ir::Attr::string(b->name)}});
  bool eff = b->effectful || !b->deterministic;
  ir::Node* n = eff ? effect(ir::CoreOp::BuiltinEffect, ops, attrs, {}, d->range())
                    : node(ir::CoreOp::Builtin, ops, attrs, {}, d->range());
  if (!n) return {};
  size_t firstResult = eff ? 1 : 0;
  if (n->numResults() <= firstResult) return nullConst();
  return {n->result(firstResult), n->result(firstResult)->type()};
}

}  // namespace xacc::camel::sema
