// Inlining: a func.call to a graph of the module is replaced by a copy of the
// callee's body, its parameters bound to the call's operands. Recursive graphs
// (those that can reach themselves through calls) and calls marked `noinline`
// are left alone; callees above a size threshold too. Calls inside regions are
// inlined into the region. Effects stay threaded: tokens enter and leave the
// callee through its parameters and results.
#include <unordered_map>
#include <unordered_set>

#include "xacc/passes/PassManager.h"

namespace xacc::passes {

namespace {

constexpr size_t kMaxInlineNodes = 10000;

void collectCallees(const ir::Graph& g, std::unordered_set<std::string>& out) {
  for (ir::Node* n : g) {
    if (n->op().has(ir::kCallLike))
      if (const ir::Attr* c = n->attr("callee"); c && c->kind() == ir::Attr::Kind::Symbol)
        out.insert(c->getSymbol());
    for (auto& r : n->regions()) collectCallees(*r, out);
  }
}

class InlinePass : public Pass {
public:
  std::string_view name() const override { return "inline"; }

  bool run(ir::Module& m, PassContext& ctx) override {
    computeRecursive(m);
    int64_t inlined = 0;
    // Spliced bodies may contain further calls: repeat until nothing changes
    // (bounded, since only non-recursive callees are inlined).
    for (int round = 0; round < 64; ++round) {
      int64_t before = inlined;
      for (auto& g : m.graphs())
        forEachGraph(*g, [&](ir::Graph& graph) { inlined += inlineIn(m, graph); });
      if (inlined == before) break;
    }
    ctx.stats["inline.calls-inlined"] += inlined;
    return true;
  }

private:
  // A graph is recursive when it can reach itself in the call graph (func.ref
  // counts as a potential call).
  void computeRecursive(const ir::Module& m) {
    std::unordered_map<std::string, std::unordered_set<std::string>> edges;
    for (auto& g : m.graphs()) collectCallees(*g, edges[g->name()]);
    recursive_.clear();
    for (auto& g : m.graphs()) {
      std::vector<std::string> stack(edges[g->name()].begin(), edges[g->name()].end());
      std::unordered_set<std::string> seen;
      while (!stack.empty()) {
        std::string s = stack.back();
        stack.pop_back();
        if (s == g->name()) {
          recursive_.insert(s);
          break;
        }
        if (!seen.insert(s).second) continue;
        auto it = edges.find(s);
        if (it != edges.end()) stack.insert(stack.end(), it->second.begin(), it->second.end());
      }
    }
  }

  int64_t inlineIn(ir::Module& m, ir::Graph& graph) {
    int64_t count = 0;
    for (ir::Node* n = graph.front(); n;) {
      ir::Node* next = n->next();
      if (n->op().is(ir::CoreOp::Call) && !n->attrs().getBool("noinline", false)) {
        const ir::Attr* c = n->attr("callee");
        const ir::Graph* callee = c ? m.lookup(c->getSymbol()) : nullptr;
        if (callee && callee != &graph && !recursive_.count(callee->name()) &&
            callee->numParams() == n->numOperands() &&
            callee->results().size() == n->numResults() &&
            callee->totalNodes() <= kMaxInlineNodes) {
          std::unique_ptr<ir::Graph> body = callee->clone();
          for (size_t i = 0; i < body->numParams(); ++i)
            body->param(i)->replaceAllUsesWith(n->operand(i));
          std::vector<ir::Value*> results = body->results();
          while (ir::Node* inner = body->front()) {
            // Keep the caller's location when the callee's nodes have none.
            if (!inner->loc().valid()) inner->setLoc(n->loc());
            body->transferTo(inner, graph, n);
          }
          for (size_t i = 0; i < n->numResults(); ++i) n->result(i)->replaceAllUsesWith(results[i]);
          body->setResults({});
          graph.erase(n);
          ++count;
        }
      }
      n = next;
    }
    return count;
  }

  std::unordered_set<std::string> recursive_;
};

}  // namespace

std::unique_ptr<Pass> createInlinePass() { return std::make_unique<InlinePass>(); }

}  // namespace xacc::passes
