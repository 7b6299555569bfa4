// Dead code elimination. A node is live iff one of its results is used; uses
// only point forward in the node list, so one backward sweep removes every dead
// node, effectful ones included: an effect whose token does not reach the
// graph's final token is not demanded (see Note [Effect tokens]).
#include "xacc/passes/PassManager.h"

namespace xacc::passes {

namespace {

class DCEPass : public Pass {
public:
  std::string_view name() const override { return "dce"; }
  bool run(ir::Module& m, PassContext& ctx) override {
    int64_t erased = 0;
    for (auto& g : m.graphs())
      forEachGraph(*g, [&](ir::Graph& graph) {
        ir::Node* n = graph.back();
        while (n) {
          ir::Node* prev = n->prev();
          if (n->allResultsUnused()) {
            graph.erase(n);
            ++erased;
          }
          n = prev;
        }
      });
    ctx.stats["dce.nodes-erased"] += erased;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createDCEPass() { return std::make_unique<DCEPass>(); }

}  // namespace xacc::passes
