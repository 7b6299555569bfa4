// Compile-time macro expansion (spec 13, 16.8): after lowering, every call of
// a `macro` function whose arguments are compile-time constants (literals,
// values computed from them by pure operators, results of other expanded
// macro calls) is evaluated with the reference interpreter and replaced by
// constants. Calls whose arguments are not known (parameters, function values,
// run-time data), macros with effects, evaluations that fail (a run-time
// error, too much work) and results without a constant form (arrays, which
// are mutable objects, and functions) stay ordinary run-time calls, so the
// observable behaviour is the same either way.
#include "LowerImpl.h"
#include "xacc/support/CoreDiags.h"

#include <chrono>

#include "xacc/camel/Stdlib.h"
#include "xacc/ir/Builder.h"
#include "xacc/ir/Interpreter.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::camel::sema {

namespace {

/// An interpreter with a work budget: a macro that recurses too much (or
/// exponentially) is left for run time instead of hanging the compiler.
class BudgetInterpreter : public ir::Interpreter {
public:
  using ir::Interpreter::Interpreter;
  bool run(const ir::Graph& g, const std::vector<ir::Datum>& args,
           std::vector<ir::Datum>& results) override {
    if (++calls_ > kMaxCalls || (calls_ % 1024 == 0 && Clock::now() > deadline_)) {
      exhausted_ = true;
      return false;
    }
    return ir::Interpreter::run(g, args, results);
  }
  void start() {
    calls_ = 0;
    exhausted_ = false;
    deadline_ = Clock::now() + std::chrono::milliseconds(200);
  }

private:
  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kMaxCalls = 200000;
  uint64_t calls_ = 0;
  bool exhausted_ = false;
  Clock::time_point deadline_;
};

bool pureFoldable(const ir::Node* n) {
  return n->isPure() && n->numRegions() == 0 && !n->op().has(ir::kCallLike) &&
         !n->op().has(ir::kConstantLike) && n->op().interp;
}

}  // namespace

size_t Lowerer::expandMacros() {
  std::unordered_set<std::string> macros;
  for (auto& f : prog_.funcs)
    if (f->kind == FuncInfo::Kind::Decl && f->sig && (f->sig->modifiers & ModMacro) && !f->effectful &&
        f->graph && !f->failed && !f->decorated)
      macros.insert(f->graph->name());
  if (macros.empty()) return 0;
  support::DiagnosticEngine scratch(&diags_.sourceManager());
  BudgetInterpreter interp(scratch, &mod_);
  interp.setOutput([](std::string_view) {});
  size_t expanded = 0;
  std::function<void(ir::Graph&)> walk = [&](ir::Graph& g) {
    std::unordered_map<const ir::Value*, ir::Datum> known;
    std::vector<ir::Datum> args, results;
    for (ir::Node* n = g.front(); n;) {
      ir::Node* next = n->next();
      for (size_t k = 0; k < n->numRegions(); ++k) walk(*n->region(k));
      auto knownArgs = [&] {
        args.clear();
        for (ir::Value* v : n->operands()) {
          auto it = known.find(v);
          if (it == known.end()) return false;
          args.push_back(it->second);
        }
        return true;
      };
      if (n->op().has(ir::kConstantLike) && n->isPure()) {
        ir::Datum d;
        if (const ir::Attr* a = n->attr("value"); a && ir::attrToDatum(*a, n->result(0)->type(), d))
          known.emplace(n->result(0), std::move(d));
      } else if (pureFoldable(n)) {
        // Known for macro arguments only; const-fold decides about the node.
        results.clear();
        if (knownArgs() && n->op().interp(interp, *n, args, results) && results.size() == n->numResults())
          for (size_t i = 0; i < results.size(); ++i)
            if (results[i].kind() != ir::DKind::List) known.emplace(n->result(i), results[i]);
        scratch.clear();
      } else if (n->op().is(ir::CoreOp::Call) && n->attr("callee") &&
                 macros.count(n->attr("callee")->getSymbol()) && knownArgs()) {
        results.clear();
        interp.start();
        bool ok = interp.call(n->attr("callee")->getSymbol(), args, results, n) &&
                  results.size() == n->numResults();
        scratch.clear();
        std::vector<ir::Attr> attrs(results.size());
        for (size_t i = 0; ok && i < results.size(); ++i)
          ok = results[i].kind() != ir::DKind::List && results[i].kind() != ir::DKind::Func &&
               n->result(i)->type().kind() != ir::TypeKind::Any && ir::datumToAttr(results[i], attrs[i]);
        if (ok) {
          ir::Builder b(g, n);
          b.setLoc(n->loc());
          std::vector<ir::Value*> consts;
          for (size_t i = 0; ok && i < results.size(); ++i) {
            ir::Value* c = b.constant(attrs[i], n->result(i)->type());
            ok = c != nullptr;
            consts.push_back(c);
          }
          if (ok) {
            for (size_t i = 0; i < results.size(); ++i) {
              n->result(i)->replaceAllUsesWith(consts[i]);
              known.emplace(consts[i], results[i]);
            }
            g.erase(n);
            ++expanded;
          }
        }
      }
      n = next;
    }
  };
  for (auto& g : mod_.graphs()) walk(*g);
  return expanded;
}

bool Lowerer::expandGrads() {
  // Note [Camel grad]: grad<f>(args) on a func.ref becomes a call of f's gradient graph.
  std::unordered_map<std::string, std::string> built;  // callee -> gradient graph
  bool ok = true;
  std::vector<ir::Graph*> todo;
  for (auto& g : mod_.graphs()) todo.push_back(g.get());
  std::function<void(ir::Graph&)> walk = [&](ir::Graph& g) {
    for (ir::Node* n = g.front(); n;) {
      ir::Node* next = n->next();
      for (size_t k = 0; k < n->numRegions(); ++k) walk(*n->region(k));
      // Function values thread a token, so the front end may call grad through
      // func.builtin_effect(%tok, f, args...) -> (%tok', tuple); f's purity is
      // checked when its gradient graph is built.
      bool eff = n->op().is(ir::CoreOp::BuiltinEffect);
      size_t first = eff ? 1 : 0;
      if (!(n->op().is(ir::CoreOp::Builtin) || eff) || n->attrs().getStr("name") != "grad" ||
          n->numOperands() <= first || n->numResults() != first + 1) {
        n = next;
        continue;
      }
      ir::Value* fv = n->operand(first);
      ir::Node* ref = fv->isParam() ? nullptr : fv->definingNode();
      if (!ref || !ref->op().is(ir::CoreOp::FuncRef) || !ref->attr("callee")) {
        n = next;  // a function known only at run time: the builtin differentiates it then
        continue;
      }
      const std::string& callee = ref->attr("callee")->getSymbol();
      const ir::Graph* f = mod_.lookup(callee);
      if (!f) {
        n = next;
        continue;
      }
      // One gradient graph per callee and argument types (tensor shapes specialise it).
      std::vector<ir::Type> argTypes;
      std::string key = callee;
      for (ir::Value* v : ref->operands()) argTypes.push_back(v->type());
      for (size_t i = first + 1; i < n->numOperands(); ++i) argTypes.push_back(n->operand(i)->type());
      for (ir::Type t : argTypes) key += "|" + t.str();
      auto it = built.find(key);
      if (it == built.end()) {
        auto dg = buildCamelGradGraph(&mod_, *f, ref->numOperands(), uniqueName(callee + "$grad"), diags_,
                                      n->loc(), argTypes);
        if (!dg) {
          ok = false;
          n = next;
          continue;
        }
        std::string name = dg->name();
        mod_.add(std::move(dg));
        it = built.emplace(key, name).first;
      }
      const ir::Graph* dg = mod_.lookup(it->second);
      std::vector<ir::Value*> args(ref->operands().begin(), ref->operands().end());
      for (size_t i = first + 1; i < n->numOperands(); ++i) args.push_back(n->operand(i));
      ir::Builder b(g, n);
      b.setLoc(n->loc());
      ir::Node* call = b.create(ir::CoreOp::Call, args, ir::attrs({{"callee", ir::Attr::symbol(it->second)}}),
                                dg->resultTypes());
      std::vector<ir::Value*> parts;
      for (size_t i = 0; call && i < call->numResults(); ++i) parts.push_back(call->result(i));
      ir::Value* tup = call ? b.value(ir::CoreOp::TupleMake, parts, {}, {n->result(first)->type()}) : nullptr;
      if (!tup) {
        diags_.error(coreCode(CoreDiag::AutodiffError), n->loc(),
                     "grad: cannot call the gradient graph: " + b.error());
        ok = false;
        n = next;
        continue;
      }
      n->result(first)->replaceAllUsesWith(tup);
      if (eff) n->result(0)->replaceAllUsesWith(n->operand(0));
      g.erase(n);
      n = next;
    }
  };
  for (ir::Graph* g : todo) walk(*g);
  return ok;
}

}  // namespace xacc::camel::sema
