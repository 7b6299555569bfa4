// Constant folding through the reference interpreter: a pure node whose
// operands are all known constants is evaluated with its own interpreter rule,
// so folding and execution can never disagree. Known immutable values propagate
// through nodes whose results have no attribute form (a tuple of constants
// feeding tuple.get), but only values with an attribute form replace nodes.
// Lists never count as known: they are mutable objects.
// Values above the size cap are not folded (code size). A node whose
// evaluation fails (division by zero) is left for run time to report.
#include <unordered_map>

#include "xacc/ir/Builder.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/List.h"
#include "xacc/passes/PassManager.h"

namespace xacc::passes {

namespace {

constexpr size_t kMaxFoldedElements = 4096;

size_t datumSize(const ir::Datum& d) {
  switch (d.kind()) {
    case ir::DKind::Str: return d.asStr().size();
    case ir::DKind::List: {
      const ir::ListObject* o = ir::listObj(d);
      if (o->form() != ir::ListObject::Rep::Boxed) return 2 * o->size();  // unboxed numbers
      size_t n = o->items.size();
      for (const auto& e : o->items) n += datumSize(e);
      return n;
    }
    case ir::DKind::Tuple: {
      size_t n = d.tupleItems().size();
      for (const auto& e : d.tupleItems()) n += datumSize(e);
      return n;
    }
    case ir::DKind::Struct: return d.structFields().size();
    default: return 1;
  }
}

bool foldable(const ir::Node* n) {
  return n->isPure() && n->numRegions() == 0 && !n->op().has(ir::kCallLike) &&
         !n->op().has(ir::kConstantLike) && n->op().interp;
}

class ConstFoldPass : public Pass {
public:
  std::string_view name() const override { return "const-fold"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    int64_t folded = 0;
    support::DiagnosticEngine scratch(&ctx.diag.sourceManager());
    ir::Interpreter interp(scratch, &m);
    interp.setOutput([](std::string_view) {});  // pure nodes never print; be safe anyway
    for (auto& g : m.graphs())
      forEachGraph(*g, [&](ir::Graph& graph) {
        std::unordered_map<const ir::Value*, ir::Datum> known;
        std::vector<ir::Datum> args, results;
        for (ir::Node* n = graph.front(); n;) {
          ir::Node* next = n->next();
          if (n->op().has(ir::kConstantLike) && n->isPure()) {
            ir::Datum d;
            if (ir::attrToDatum(*n->attr("value"), n->result(0)->type(), d))
              known.emplace(n->result(0), std::move(d));
          } else if (foldable(n)) {
            args.clear();
            bool all = true;
            for (ir::Value* v : n->operands()) {
              auto it = known.find(v);
              if (it == known.end()) {
                all = false;
                break;
              }
              args.push_back(it->second);
            }
            results.clear();
            if (all && n->op().interp(interp, *n, args, results) &&
                results.size() == n->numResults()) {
              bool small = true;
              for (auto& r : results) small &= datumSize(r) <= kMaxFoldedElements;
              if (small) replaceWithConstants(graph, n, results, known, folded);
            }
            scratch.clear();
          }
          n = next;
        }
      });
    ctx.stats["const-fold.nodes-folded"] += folded;
    return true;
  }

private:
  static void replaceWithConstants(ir::Graph& graph, ir::Node* n, std::vector<ir::Datum>& results,
                                   std::unordered_map<const ir::Value*, ir::Datum>& known,
                                   int64_t& folded) {
    bool replacedAll = true;
    ir::Builder b(graph, n);
    b.setLoc(n->loc());
    for (size_t i = 0; i < results.size(); ++i) {
      ir::Attr a;
      ir::Value* r = n->result(i);
      if (ir::datumToAttr(results[i], a) && r->type().kind() != ir::TypeKind::Any) {
        ir::Value* c = b.constant(a, r->type());
        if (c) {
          r->replaceAllUsesWith(c);
          known.emplace(c, results[i]);
          continue;
        }
      }
      replacedAll = false;
      // Lists are mutable identities: a later effect (an in-place builtin) may
      // change the object, so their contents are never treated as known.
      if (results[i].kind() != ir::DKind::List) known.emplace(r, results[i]);
    }
    if (replacedAll) {
      graph.erase(n);
      ++folded;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> createConstFoldPass() { return std::make_unique<ConstFoldPass>(); }

}  // namespace xacc::passes
