// Built-in `grad` (reverse-mode autodiff, spec 13 / issue "Camel, part 2"):
//
//     grad<f>(x1, ..., xn)  ->  (f(x1, ..., xn), df/dxi for each float xi ...)
//
// `f` is a pure function of n parameters returning a float (or a floating
// tensor); the result is a tuple of f's value followed by one gradient per
// parameter whose type carries gradients (float, f32, floating tensors), in
// parameter order; other parameters (ints, strings, ...) are passed through and
// get none. Example: for `func f(x: float, y: float): float { return x * x * y }`,
// `grad<f>(3.0, 2.0)` is `(18.0, 12.0, 9.0)`.
//
// Note [Camel grad]: the front end expands `grad<f>(...)` at compile time when
// `f` is a named function or a lambda (`func.ref`, captures allowed): it inlines
// the calls in a copy of f's graph, builds the gradient graph with the shared
// GIR-to-GIR transform (xacc/passes/Autodiff.h) as `<f>$grad`, and replaces the
// builtin call by `func.call @<f>$grad` packed into the tuple. When f is only
// known at run time (a function parameter), this builtin does the same on the
// function value when it runs (cached per function graph), so the result is the
// same either way. What cannot be differentiated (an op without a derivative
// rule, recursion, an effectful f) is a compile-time error at the op's location
// when expanded, and a located run-time error otherwise.
#include <mutex>
#include <unordered_map>

#include "StdlibImpl.h"
#include "xacc/camel/Stdlib.h"
#include "xacc/passes/Autodiff.h"
#include "xacc/passes/PassManager.h"
#include "xacc/support/CoreDiags.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::camel {

namespace {

/// Gives tensor parameters the (more precise) types of the call's arguments and
/// re-infers the types of the nodes that depend on them, so that rules that need
/// ranks and shapes (matmul, broadcasting) see them. Nodes with regions and ops
/// whose rule rejects the new types keep their types.
void specialize(ir::Graph& g, const std::vector<ir::Type>& argTypes) {
  bool changed = false;
  for (size_t i = 0; i < g.numParams() && i < argTypes.size(); ++i) {
    ir::Value* p = g.param(i);
    ir::Type t = argTypes[i];
    if (t && t.isTensor() && p->type().isTensor() && t != p->type() && ir::typeCompatible(p->type(), t)) {
      p->setType(t);
      changed = true;
    }
  }
  if (!changed) return;
  for (ir::Node* n : g) {
    if (n->numRegions() || !n->op().infer || n->numResults() == 0) continue;
    std::vector<ir::Type> ops, res;
    for (ir::Value* v : n->operands()) ops.push_back(v ? v->type() : ir::Type::any());
    std::string err;
    ir::InferInput in{ops, n->attrs(), nullptr, nullptr};
    if (!n->op().infer(in, res, err) || res.size() != n->numResults()) continue;
    for (size_t i = 0; i < res.size(); ++i)
      if (res[i]) n->result(i)->setType(res[i]);
  }
  std::vector<ir::Type> rts;
  for (ir::Value* r : g.results()) rts.push_back(r ? r->type() : ir::Type());
  g.setResultTypes(rts);
}

}  // namespace

std::unique_ptr<ir::Graph> buildCamelGradGraph(const ir::Module* m, const ir::Graph& f, size_t ncaps,
                                               const std::string& name, support::DiagnosticEngine& diag,
                                               support::SourceLoc at, const std::vector<ir::Type>& argTypes) {
  // Inline f's calls in a scratch module holding copies of the module's graphs.
  ir::Module scratch;
  ir::Graph* target = nullptr;
  if (m)
    for (auto& g : m->graphs()) {
      ir::Graph* c = scratch.add(g->clone());
      if (g.get() == &f) target = c;
    }
  if (!target) target = scratch.add(f.clone());
  passes::Statistics stats;
  passes::PassContext ctx{diag, stats};
  if (!passes::createPass("inline")->run(scratch, ctx)) return nullptr;
  // Function values thread a token (`func<(!token, T) -> (!token, U)>`); a pure
  // function only passes it through, which is dropped here.
  for (ir::Node* n : *target)
    if (n->hasEffects() || n->op().is(ir::CoreOp::Apply) || n->op().is(ir::CoreOp::Call)) {
      diag.error(
          coreCode(CoreDiag::AutodiffError), n->loc().file ? n->loc() : at,
          std::string("grad: the function must be pure and non-recursive; '") + n->opName() +
              (n->hasEffects() ? "' has effects" : "' calls a function that cannot be inlined"));
      return nullptr;
    }
  for (size_t i = target->numParams(); i-- > 0;) {
    ir::Value* p = target->param(i);
    if (!p->type().isToken()) continue;
    std::vector<ir::Value*> rs;
    std::vector<ir::Type> ts;
    for (size_t k = 0; k < target->results().size(); ++k)
      if (target->results()[k] != p) {
        rs.push_back(target->results()[k]);
        ts.push_back(target->resultTypes()[k]);
      }
    target->setResults(rs);
    target->setResultTypes(ts);
    if (p->hasUses()) {
      diag.error(coreCode(CoreDiag::AutodiffError), at,
                 "grad: the function must be pure (it uses its effect token)");
      return nullptr;
    }
    target->eraseParam(i);
  }
  if (!argTypes.empty()) specialize(*target, argTypes);
  passes::GradOptions opts;
  opts.name = name;
  for (size_t i = ncaps; i < target->numParams(); ++i)
    if (passes::isDifferentiableType(target->param(i)->type())) opts.wrt.push_back(i);
  if (target->results().size() != 1 || !passes::isDifferentiableType(target->resultTypes()[0])) {
    diag.error(coreCode(CoreDiag::AutodiffError), at,
               "grad: the function must return one float or floating-point tensor, not " +
                   (target->resultTypes().size() == 1 ? target->resultTypes()[0].str()
                                                      : std::string("several values")));
    return nullptr;
  }
  if (opts.wrt.empty()) {
    diag.error(coreCode(CoreDiag::AutodiffError), at,
               "grad: the function has no float or floating-point tensor parameter");
    return nullptr;
  }
  return passes::buildGradGraph(*target, opts, diag);
}

namespace stdlib {

namespace {

struct RuntimeGradCache {
  std::mutex mu;
  std::unordered_map<const ir::Graph*, std::unique_ptr<ir::Graph>> graphs;
};

RuntimeGradCache& cache() {
  static RuntimeGradCache* c = new RuntimeGradCache;  // outlives every interpreter
  return *c;
}

}  // namespace

void registerGrad() {
  define({.name = "grad",
          .gir = "grad",
          .withParams = 1,
          .params = kVariadic,
          .signature = "<f: (x1: T1, …, xn: Tn) => float>(x1: T1, …, xn: Tn): (float, …)",
          .summary = "f's value and its gradients with respect to each float/tensor parameter (reverse-mode autodiff)",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (a.empty()) {
                  err = "takes the function to differentiate as with-argument";
                  return false;
                }
                FnSig f;
                if (!fnSig(a[0], a.size() - 1, "grad's function", f, err)) return false;
                if (!f.result.isAny() && !passes::isDifferentiableType(f.result)) {
                  err = "grad's function must return a float or a floating-point tensor, got " + typeName(f.result);
                  return false;
                }
                std::vector<Type> elems{f.result.isAny() ? Type::f64() : f.result};
                for (size_t i = 0; i < f.params.size(); ++i) {
                  if (!ir::typeCompatible(f.params[i], a[i + 1])) {
                    err = "argument " + std::to_string(i + 1) + " is " + typeName(a[i + 1]) +
                          " but grad's function takes " + typeName(f.params[i]);
                    return false;
                  }
                  if (passes::isDifferentiableType(f.params[i])) elems.push_back(f.params[i]);
                }
                if (elems.size() == 1) {
                  err = "grad's function has no float or floating-point tensor parameter";
                  return false;
                }
                r = {Type::tuple(elems)};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                if (a.empty() || a[0].kind() != DKind::Func)
                  return fail(I, n, RuntimeDiag::TypeMismatch,
                              {"grad", "a function", a.empty() ? "nothing" : kindName(a[0])});
                const ir::Graph* f = a[0].funcGraph();
                const auto& caps = a[0].funcCaptures();
                const ir::Graph* dg = nullptr;
                {
                  RuntimeGradCache& c = cache();
                  std::lock_guard<std::mutex> lock(c.mu);
                  auto it = c.graphs.find(f);
                  if (it == c.graphs.end()) {
                    support::DiagnosticEngine diag;
                    auto g = buildCamelGradGraph(I.module(), *f, caps.size(), f->name() + "$grad", diag, n.loc());
                    if (!g)
                      return fail(I, n, RuntimeDiag::InvalidArgument,
                                  {"grad", diag.diagnostics().empty() ? std::string("cannot differentiate")
                                                                      : diag.diagnostics().front().message});
                    it = c.graphs.emplace(f, std::move(g)).first;
                  }
                  dg = it->second.get();
                }
                std::vector<Datum> args(caps.begin(), caps.end());
                args.insert(args.end(), a.begin() + 1, a.end());
                std::vector<Datum> results;
                if (!I.run(*dg, args, results)) return false;
                r.push_back(Datum::tuple(std::move(results)));
                return true;
              }});
}

}  // namespace stdlib
}  // namespace xacc::camel
