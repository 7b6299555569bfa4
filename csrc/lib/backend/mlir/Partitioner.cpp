// See Partitioner.h. Regions are convex by construction: a node joins the open
// region only in node (topological) order, and anything that reads the region
// and is not in it closes it, so no path leaves a region and re-enters it.
#include "Partitioner.h"

#include <unordered_set>

namespace xacc::backend::mlir {
namespace {

/// Fills the region's inputs (values read from outside, first-use order) and
/// outputs (results used after the region or returned by the graph).
void finishRegion(const ir::Graph& g, Region& r) {
  std::unordered_set<const ir::Node*> inside(r.nodes.begin(), r.nodes.end());
  std::unordered_set<const ir::Value*> seen;
  for (const ir::Node* n : r.nodes)
    for (ir::Value* v : n->operands())
      if ((v->isParam() || !inside.count(v->definingNode())) && seen.insert(v).second) r.inputs.push_back(v);
  for (const ir::Node* n : r.nodes)
    for (size_t i = 0; i < n->numResults(); ++i) {
      ir::Value* v = n->result(i);
      bool needed = false;
      for (const ir::Use& u : v->uses()) needed |= u.user == nullptr || !inside.count(u.user);
      if (needed) r.outputs.push_back(v);
    }
}

}  // namespace

Partition partitionGraph(const ir::Graph& g, bool lower) {
  Partition p;
  PlanStep open;
  open.isRegion = true;
  std::unordered_set<const ir::Node*> inOpen;
  auto close = [&] {
    if (open.region.nodes.empty()) return;
    finishRegion(g, open.region);
    if (!open.region.outputs.empty()) p.steps.push_back(std::move(open));
    open = PlanStep{};
    open.isRegion = true;
    inOpen.clear();
  };
  for (const ir::Node* n : g) {
    std::string reason = "lowering disabled";
    if (lower && canLowerNode(*n, reason)) {
      open.region.nodes.push_back(n);
      inOpen.insert(n);
      continue;
    }
    if (n->opName().rfind("aten.", 0) == 0) p.reasons.push_back(n->opName() + ": " + reason);
    bool readsOpen = false;
    for (ir::Value* v : n->operands()) readsOpen |= !v->isParam() && inOpen.count(v->definingNode()) > 0;
    // Effectful nodes keep their place relative to everything else.
    if (readsOpen || n->hasEffects()) close();
    PlanStep s;
    s.node = n;
    p.steps.push_back(std::move(s));
  }
  close();
  return p;
}

}  // namespace xacc::backend::mlir
