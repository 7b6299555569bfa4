// The GIR verifier. It checks each graph independently (regions are isolated),
// so verification is linear in the number of nodes.
#include "xacc/ir/Verifier.h"
#include "xacc/support/CoreDiags.h"

#include <unordered_set>

#include "xacc/ir/Printer.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::ir {

namespace {

/// The values of `graph` defined so far in a walk, by dense id (Value::id()):
/// asking reads only the value itself, which the check of its type reads anyway.
struct Defined {
  const Graph* graph;
  std::vector<bool> bits;
  explicit Defined(const Graph& g) : graph(&g), bits(g.valueIdBound(), false) {
    for (size_t i = 0; i < g.numParams(); ++i) bits[g.param(i)->id()] = true;
  }
  bool has(const Value* v) const { return v->ownerGraph() == graph && bits[v->id()]; }
  void add(const Node& n) {
    for (size_t i = 0; i < n.numResults(); ++i) bits[n.result(i)->id()] = true;
  }
};

class Verifier {
public:
  Verifier(support::DiagnosticEngine& diag, const TextLocations* locs, const Module* module)
      : diag_(diag), locs_(locs), module_(module) {}

  bool graph(const Graph& g) {
    // "Defined before use" without a hash set: see Defined.
    Defined defined(g);
    bool ok = true;
    std::vector<Type> operandTypes, inferred, declared;
    for (Node* n : g) {
      ok &= node(*n, defined, operandTypes, inferred, declared);
      defined.add(*n);
    }
    if (g.results().size() != g.resultTypes().size()) {
      graphError(g, coreCode(CoreDiag::GraphResultMismatch),
                 "graph returns " + std::to_string(g.results().size()) + " values but declares " +
                     std::to_string(g.resultTypes().size()));
      return false;
    }
    for (size_t i = 0; i < g.results().size(); ++i) {
      const Value* v = g.results()[i];
      if (!v || !defined.has(v)) {
        graphError(g, coreCode(CoreDiag::UseBeforeDefinition),
                   "graph '" + g.name() + "' returns a value not defined in it");
        ok = false;
        continue;
      }
      if (!typeCompatible(g.resultTypes()[i], v->type())) {
        graphError(g, coreCode(CoreDiag::GraphResultMismatch),
                   "result " + std::to_string(i) + " has type " + v->type().str() +
                       " but the graph declares " + g.resultTypes()[i].str());
        ok = false;
      }
    }
    return ok;
  }

private:
  support::SourceLoc locOf(const Node& n) const { return locs_ ? locs_->of(n) : n.loc(); }

  void graphError(const Graph& g, const char* code, std::string msg) {
    support::SourceLoc loc;
    if (locs_) {
      auto it = locs_->graphs.find(&g);
      if (it != locs_->graphs.end()) loc = it->second;
    }
    diag_.error(code, loc, std::move(msg));
  }

  bool error(const Node& n, const char* code, std::string msg) {
    auto& d = diag_.error(code, locOf(n), "'" + n.opName() + "': " + msg);
    if (locs_ && n.loc().valid()) {
      d.notes.push_back({support::Severity::Note, "", n.loc(), "from this source location", {}, {}});
    }
    return false;
  }

  bool node(const Node& n, const Defined& defined,
            std::vector<Type>& operandTypes, std::vector<Type>& inferred,
            std::vector<Type>& declared) {
    const OpInfo& op = n.op();
    int nops = int(n.numOperands());
    if (nops < op.minOperands || (op.maxOperands >= 0 && nops > op.maxOperands)) {
      std::string want = op.maxOperands == op.minOperands
                             ? std::to_string(op.minOperands)
                             : op.maxOperands < 0 ? "at least " + std::to_string(op.minOperands)
                                                  : std::to_string(op.minOperands) + " to " +
                                                        std::to_string(op.maxOperands);
      return error(n, coreCode(CoreDiag::ArityMismatch),
                   "expects " + want + " operands, got " + std::to_string(nops));
    }
    if (op.numResults >= 0 && int(n.numResults()) != op.numResults)
      return error(n, coreCode(CoreDiag::ArityMismatch),
                   "produces " + std::to_string(op.numResults) + " results, " +
                       std::to_string(n.numResults()) + " declared");
    if (int(n.numRegions()) != op.numRegions)
      return error(n, coreCode(CoreDiag::RegionCountMismatch),
                   "expects " + std::to_string(op.numRegions) + " regions, got " +
                       std::to_string(n.numRegions()));
    operandTypes.clear();
    for (size_t i = 0; i < n.numOperands(); ++i) {
      const Value* v = n.operand(i);
      if (!v || !defined.has(v))
        return error(n, coreCode(CoreDiag::UseBeforeDefinition),
                     "operand " + std::to_string(i) + " is not defined before use");
      operandTypes.push_back(v->type());
    }
    for (const std::string& a : op.requiredAttrs)
      if (!n.attrs().has(a))
        return error(n, coreCode(CoreDiag::MissingAttribute), "missing attribute '" + a + "'");
    // Effects: see Note [Effect tokens].
    if (op.has(kEffect)) {
      if (n.numOperands() == 0 || !operandTypes[0].isToken())
        return error(n, coreCode(CoreDiag::EffectTokenMisuse),
                     "an effectful op takes an !token as its first operand");
      if (n.numResults() == 0 || !n.result(0)->type().isToken())
        return error(n, coreCode(CoreDiag::EffectTokenMisuse),
                     "an effectful op yields an !token as its first result");
    } else if (!op.has(kCallLike) && !op.has(kHasRegions) && !op.is(CoreOp::Join) &&
               !op.is(CoreOp::Apply)) {
      for (size_t i = 0; i < operandTypes.size(); ++i)
        if (operandTypes[i].isToken())
          return error(n, coreCode(CoreDiag::EffectTokenMisuse),
                       "a pure op cannot consume an !token (operand " + std::to_string(i) + ")");
    }
    declared.clear();
    for (size_t i = 0; i < n.numResults(); ++i) declared.push_back(n.result(i)->type());
    if (op.infer) {
      inferred.clear();
      std::string err;
      InferInput in{operandTypes, n.attrs(), &n.regions(), &declared};
      if (!op.infer(in, inferred, err))
        return error(n, coreCode(CoreDiag::TypeMismatch), err);
      if (!inferred.empty()) {
        if (inferred.size() != declared.size())
          return error(n, coreCode(CoreDiag::TypeMismatch),
                       "produces " + std::to_string(inferred.size()) + " results, " +
                           std::to_string(declared.size()) + " declared");
        for (size_t i = 0; i < inferred.size(); ++i)
          if (inferred[i] && !typeCompatible(declared[i], inferred[i]))
            return error(n, coreCode(CoreDiag::TypeMismatch),
                         "result " + std::to_string(i) + " is declared " + declared[i].str() +
                             " but the op produces " + inferred[i].str());
      }
    }
    if (op.has(kCallLike) && !callee(n, operandTypes, declared)) return false;
    if (op.is(CoreOp::If) && !ifRegions(n, operandTypes, declared)) return false;
    if (op.is(CoreOp::Loop) && !loopRegions(n, operandTypes, declared)) return false;
    bool ok = true;
    for (auto& r : n.regions()) ok &= graph(*r);
    return ok;
  }

  bool signatureMatches(const Node& n, const Graph& g, const std::vector<Type>& args,
                        const std::vector<Type>& results, const std::string& what) {
    if (g.numParams() != args.size())
      return error(n, coreCode(CoreDiag::SignatureMismatch),
                   what + " takes " + std::to_string(g.numParams()) + " parameters, given " +
                       std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      if (!typeCompatible(g.param(i)->type(), args[i]))
        return error(n, coreCode(CoreDiag::SignatureMismatch),
                     what + " parameter " + std::to_string(i) + " is " + g.param(i)->type().str() +
                         ", given " + args[i].str());
    if (g.resultTypes().size() != results.size())
      return error(n, coreCode(CoreDiag::SignatureMismatch),
                   what + " returns " + std::to_string(g.resultTypes().size()) +
                       " values, node declares " + std::to_string(results.size()));
    for (size_t i = 0; i < results.size(); ++i)
      if (!typeCompatible(results[i], g.resultTypes()[i]))
        return error(n, coreCode(CoreDiag::SignatureMismatch),
                     what + " result " + std::to_string(i) + " is " + g.resultTypes()[i].str() +
                         ", node declares " + results[i].str());
    return true;
  }

  bool callee(const Node& n, const std::vector<Type>& operands, const std::vector<Type>& results) {
    const Attr* c = n.attr("callee");
    if (!c || c->kind() != Attr::Kind::Symbol)
      return error(n, coreCode(CoreDiag::MissingAttribute), "missing symbol attribute 'callee'");
    if (!module_) return true;  // a lone graph: the callee is resolved later
    const Graph* g = module_->lookup(c->getSymbol());
    if (!g)
      return error(n, coreCode(CoreDiag::UnknownCallee), "unknown callee @" + c->getSymbol());
    if (n.op().is(CoreOp::Call) || n.op().is(CoreOp::Once))
      return signatureMatches(n, *g, operands, results, "@" + g->name());
    // func.ref: operands are captured leading parameters; the result is a function
    // of the remaining ones.
    if (operands.size() > g->numParams())
      return error(n, coreCode(CoreDiag::SignatureMismatch),
                   "captures more values than @" + g->name() + " has parameters");
    for (size_t i = 0; i < operands.size(); ++i)
      if (!typeCompatible(g->param(i)->type(), operands[i]))
        return error(n, coreCode(CoreDiag::SignatureMismatch),
                     "captured value " + std::to_string(i) + " is " + operands[i].str() + ", @" +
                         g->name() + " expects " + g->param(i)->type().str());
    std::vector<Type> rest;
    for (size_t i = operands.size(); i < g->numParams(); ++i) rest.push_back(g->param(i)->type());
    Type expect = Type::func(rest, g->resultTypes());
    if (results.size() != 1 || !typeCompatible(results[0], expect))
      return error(n, coreCode(CoreDiag::SignatureMismatch), "result must be " + expect.str());
    return true;
  }

  bool ifRegions(const Node& n, const std::vector<Type>& operands, const std::vector<Type>& results) {
    if (!operands[0].isAny() && operands[0].kind() != TypeKind::Bool)
      return error(n, coreCode(CoreDiag::TypeMismatch),
                   "condition must be bool, got " + operands[0].str());
    std::vector<Type> args(operands.begin() + 1, operands.end());
    return signatureMatches(n, *n.region(0), args, results, "region ^" + n.region(0)->label()) &&
           signatureMatches(n, *n.region(1), args, results, "region ^" + n.region(1)->label());
  }

  bool loopRegions(const Node& n, const std::vector<Type>& operands, const std::vector<Type>& results) {
    if (results.size() != operands.size())
      return error(n, coreCode(CoreDiag::SignatureMismatch),
                   "a loop yields one value per carried operand");
    for (size_t i = 0; i < operands.size(); ++i)
      if (!typeCompatible(results[i], operands[i]))
        return error(n, coreCode(CoreDiag::SignatureMismatch),
                     "carried value " + std::to_string(i) + " changes type");
    return signatureMatches(n, *n.region(0), operands, {Type::boolean()},
                            "region ^" + n.region(0)->label()) &&
           signatureMatches(n, *n.region(1), operands, results, "region ^" + n.region(1)->label());
  }

  support::DiagnosticEngine& diag_;
  const TextLocations* locs_;
  const Module* module_;
};

}  // namespace

bool verifyGraph(const Graph& g, support::DiagnosticEngine& diag, const TextLocations* locs) {
  Verifier v(diag, locs, g.module());
  return v.graph(g);
}

bool verifyModule(const Module& m, support::DiagnosticEngine& diag, const TextLocations* locs) {
  Verifier v(diag, locs, &m);
  bool ok = true;
  for (auto& g : m.graphs()) ok &= v.graph(*g);
  return ok;
}

}  // namespace xacc::ir
