// Canonicalization: small local rewrite rules applied to a fixpoint. Each rule
// states the algebra it performs. Integer-only rules stay off floats where IEEE
// semantics differ (x + 0.0 is not x for x = -0.0; x * 0.0 is not 0 for inf).
// Rules never delete or reorder effects; dead leftovers are DCE's job.
#include "xacc/ir/Builder.h"
#include "xacc/passes/PassManager.h"

namespace xacc::passes {

namespace {

using ir::Attr;
using ir::CoreOp;
using ir::Node;
using ir::Value;

const Attr* constOf(Value* v) {
  Node* d = v ? v->definingNode() : nullptr;
  if (!d || !d->op().is(CoreOp::Const)) return nullptr;
  return d->attr("value");
}
bool isIntConst(Value* v, int64_t k) {
  const Attr* a = constOf(v);
  return a && a->kind() == Attr::Kind::Int && v->type().isInt() && a->getInt() == k;
}
bool isFloatConst(Value* v, double k) {
  const Attr* a = constOf(v);
  return a && a->kind() == Attr::Kind::Float && a->getFloat() == k;
}
bool isBoolConst(Value* v, bool k) {
  const Attr* a = constOf(v);
  return a && a->kind() == Attr::Kind::Bool && a->getBool() == k;
}
bool isInt(Value* v) { return v->type().isInt(); }
bool isIntOrBool(Value* v) { return v->type().isInt() || v->type().kind() == ir::TypeKind::Bool; }
Node* defOf(Value* v, CoreOp op) {
  Node* d = v->definingNode();
  return d && d->op().is(op) ? d : nullptr;
}

class Rewriter {
public:
  explicit Rewriter(ir::Graph& g) : g_(g) {}
  int64_t changes = 0;

  /// Replaces the single result of `n` with `v`.
  bool replace(Node* n, Value* v) {
    if (v->type() != n->result(0)->type()) return false;
    n->result(0)->replaceAllUsesWith(v);
    g_.erase(n);
    ++changes;
    return true;
  }
  bool replaceWithInt(Node* n, int64_t k) {
    ir::Builder b(g_, n);
    b.setLoc(n->loc());
    return replace(n, b.constInt(k, n->result(0)->type()));
  }
  bool replaceWithBool(Node* n, bool k) {
    ir::Builder b(g_, n);
    b.setLoc(n->loc());
    return replace(n, b.constBool(k));
  }

  /// Tries every rule on `n`; true if `n` was rewritten (and possibly erased).
  bool rewrite(Node* n) {
    if (n->op().coreId < 0) return false;
    CoreOp op = CoreOp(n->op().coreId);
    auto x = [&]() { return n->operand(0); };
    auto y = [&]() { return n->operand(1); };
    switch (op) {
      case CoreOp::Add:
        // c + x -> x + c: constants go right so the rules below see one shape.
        if (constOf(x()) && !constOf(y()) && isInt(x())) return swapOperands(n);
        if (isIntConst(y(), 0)) return replace(n, x());  // x + 0 -> x
        return false;
      case CoreOp::Mul:
        if (constOf(x()) && !constOf(y()) && (isInt(x()) || x()->type().isFloat())) return swapOperands(n);
        if (isIntConst(y(), 1) || isFloatConst(y(), 1.0)) return replace(n, x());  // x * 1 -> x
        if (isIntConst(y(), 0)) return replaceWithInt(n, 0);                     // x * 0 -> 0
        return false;
      case CoreOp::Sub:
        if (isIntConst(y(), 0)) return replace(n, x());                // x - 0 -> x
        if (isInt(x()) && x() == y()) return replaceWithInt(n, 0);     // x - x -> 0
        return false;
      case CoreOp::Div: case CoreOp::FloorDiv:
        if (isIntConst(y(), 1)) return replace(n, x());  // x / 1 -> x
        return false;
      case CoreOp::Neg:
        if (Node* inner = defOf(x(), CoreOp::Neg)) return replace(n, inner->operand(0));  // -(-x) -> x
        return false;
      case CoreOp::Not:
        if (Node* inner = defOf(x(), CoreOp::Not)) return replace(n, inner->operand(0));  // !!x -> x
        return false;
      case CoreOp::And:
        if (isBoolConst(y(), true)) return replace(n, x());        // x && true -> x
        if (isBoolConst(y(), false)) return replace(n, y());       // x && false -> false
        if (x() == y()) return replace(n, x());                    // x && x -> x
        if (constOf(x())) return swapOperands(n);                  // true && x -> x && true
        return false;
      case CoreOp::Or:
        if (isBoolConst(y(), false)) return replace(n, x());       // x || false -> x
        if (isBoolConst(y(), true)) return replace(n, y());        // x || true -> true
        if (x() == y()) return replace(n, x());                    // x || x -> x
        if (constOf(x())) return swapOperands(n);                  // false || x -> x || false
        return false;
      case CoreOp::BitAnd: case CoreOp::BitOr: case CoreOp::Min: case CoreOp::Max:
        if (isIntOrBool(x()) && x() == y()) return replace(n, x());  // x & x -> x, min(x, x) -> x
        return false;
      case CoreOp::BitXor:
        if (isInt(x()) && x() == y()) return replaceWithInt(n, 0);  // x ^ x -> 0
        return false;
      case CoreOp::Eq: case CoreOp::Le: case CoreOp::Ge:
        // x == x -> true (not for floats: nan != nan)
        if (isIntOrBool(x()) && x() == y()) return replaceWithBool(n, true);
        return false;
      case CoreOp::Ne: case CoreOp::Lt: case CoreOp::Gt:
        if (isIntOrBool(x()) && x() == y()) return replaceWithBool(n, false);  // x != x -> false
        return false;
      case CoreOp::Select:
        if (isBoolConst(x(), true)) return replace(n, n->operand(1));   // true ? a : b -> a
        if (isBoolConst(x(), false)) return replace(n, n->operand(2));  // false ? a : b -> b
        if (n->operand(1) == n->operand(2)) return replace(n, n->operand(1));  // c ? a : a -> a
        return false;
      case CoreOp::Cast:
        if (x()->type() == n->result(0)->type()) return replace(n, x());  // cast<T>(x: T) -> x
        return false;
      case CoreOp::TupleGet:
        // tuple.make(a, b)[1] -> b
        if (Node* mk = defOf(x(), CoreOp::TupleMake)) {
          int64_t i = n->attrs().getInt("index", -1);
          if (i >= 0 && size_t(i) < mk->numOperands()) return replace(n, mk->operand(size_t(i)));
        }
        return false;
      case CoreOp::StructGet:
        // struct.make(...).f -> the operand for f
        if (Node* mk = defOf(x(), CoreOp::StructMake)) {
          int i = mk->result(0)->type().fieldIndex(n->attrs().getStr("field"));
          if (i >= 0 && size_t(i) < mk->numOperands()) return replace(n, mk->operand(size_t(i)));
        }
        return false;
      case CoreOp::Join:
        // join(t) -> t; join(a, a, b) -> join(a, b)
        if (n->numOperands() == 1) return replace(n, x());
        for (size_t i = 1; i < n->numOperands(); ++i)
          for (size_t j = 0; j < i; ++j)
            if (n->operand(i) == n->operand(j)) {
              n->eraseOperand(i);
              ++changes;
              return true;
            }
        return false;
      case CoreOp::If:
        return foldConstantIf(n);
      default:
        return false;
    }
  }

private:
  bool swapOperands(Node* n) {
    Value* a = n->operand(0);
    Value* b = n->operand(1);
    n->setOperand(0, b);
    n->setOperand(1, a);
    ++changes;
    return true;
  }

  // ctrl.if(true, args) { ^then ... } -> the ^then body spliced in place, its
  // parameters bound to args. Effects inside keep their token threading because
  // tokens enter and leave through parameters and results.
  bool foldConstantIf(Node* n) {
    const Attr* c = constOf(n->operand(0));
    if (!c || c->kind() != Attr::Kind::Bool) return false;
    std::unique_ptr<ir::Graph> arm = n->region(c->getBool() ? 0 : 1)->clone();
    for (size_t i = 0; i < arm->numParams(); ++i)
      arm->param(i)->replaceAllUsesWith(n->operand(i + 1));
    std::vector<Value*> results = arm->results();
    while (Node* inner = arm->front()) arm->transferTo(inner, g_, n);
    for (size_t i = 0; i < n->numResults(); ++i) n->result(i)->replaceAllUsesWith(results[i]);
    arm->setResults({});
    g_.erase(n);
    ++changes;
    return true;
  }

  ir::Graph& g_;
};

class CanonicalizePass : public Pass {
public:
  std::string_view name() const override { return "canonicalize"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    int64_t total = 0;
    for (auto& g : m.graphs())
      forEachGraph(*g, [&](ir::Graph& graph) {
        // Sweep until nothing changes; every rule shrinks the graph or moves a
        // constant right, so this terminates. The cap is a safety net.
        for (int round = 0; round < 32; ++round) {
          Rewriter rw(graph);
          for (Node* n = graph.front(); n;) {
            Node* next = n->next();
            rw.rewrite(n);
            n = next;
          }
          total += rw.changes;
          if (!rw.changes) break;
        }
      });
    ctx.stats["canonicalize.rewrites"] += total;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createCanonicalizePass() { return std::make_unique<CanonicalizePass>(); }

}  // namespace xacc::passes
