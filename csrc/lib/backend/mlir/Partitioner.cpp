// See Partitioner.h. Regions are convex by construction: a node joins the open
// region only in node (topological) order, and anything that reads the region
// and is not in it closes it, so no path leaves a region and re-enters it.
#include "Partitioner.h"

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace xacc::backend::mlir {
namespace {

/// Ops whose ATen result may alias their input. Lowered, they become copies,
/// so they are lowered only when the result is consumed inside kernels.
bool mayAlias(std::string_view op) {
  static const std::unordered_set<std::string_view> ops = {
      "aten.permute.default", "aten.transpose.int",  "aten.t.default",           "aten.unsqueeze.default",
      "aten.squeeze.dim",     "aten.squeeze.dims",   "aten.squeeze.default",     "aten.view.default",
      "aten.reshape.default", "aten._unsafe_view.default", "aten.expand.default", "aten.slice.Tensor",
      "aten.select.int",      "aten.alias.default",  "aten.contiguous.default"};
  return ops.count(op) > 0;
}

/// Which nodes get lowered. A view-like node is lowered only when every use of
/// its result is a lowered node: a view returned from the graph, mutated in
/// place, or handed to a fallback op must stay an ATen view (eager aliasing,
/// and no copy in front of an op such as matmul that takes strides anyway).
/// Decided in reverse node order, so users are decided before producers.
std::unordered_map<const ir::Node*, std::string> decideLowering(const ir::Graph& g, bool lower) {
  std::unordered_map<const ir::Node*, std::string> notLowered;  // node -> reason
  std::vector<const ir::Node*> nodes;
  for (const ir::Node* n : g) nodes.push_back(n);
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const ir::Node* n = *it;
    std::string reason = "lowering disabled";
    if (!lower || !canLowerNode(*n, reason)) {
      notLowered[n] = reason;
      continue;
    }
    if (!mayAlias(n->opName())) continue;
    for (size_t i = 0; i < n->numResults(); ++i)
      for (const ir::Use& u : n->result(i)->uses())
        if (u.user == nullptr || notLowered.count(u.user)) {
          notLowered[n] = "view whose result leaves the kernels (kept as an ATen view)";
          break;
        }
  }
  return notLowered;
}

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

std::string regionKey(int index, const Region& r) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the op names
  for (const ir::Node* n : r.nodes) {
    for (char c : n->opName()) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    h = (h ^ ',') * 1099511628211ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(h ^ (h >> 32)));
  return "r" + std::to_string(index) + ":" + buf;
}

Partition partitionGraph(const ir::Graph& g, bool lower, const std::vector<std::string>& atenRegions) {
  Partition p;
  PlanStep open;
  open.isRegion = true;
  std::unordered_set<const ir::Node*> inOpen;
  auto notLowered = decideLowering(g, lower);
  auto close = [&] {
    if (open.region.nodes.empty()) return;
    finishRegion(g, open.region);
    if (!open.region.outputs.empty()) p.steps.push_back(std::move(open));
    open = PlanStep{};
    open.isRegion = true;
    inOpen.clear();
  };
  for (const ir::Node* n : g) {
    auto nl = notLowered.find(n);
    if (nl == notLowered.end()) {
      open.region.nodes.push_back(n);
      inOpen.insert(n);
      continue;
    }
    const std::string& reason = nl->second;
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
  int index = 0;
  for (auto& s : p.steps)
    if (s.isRegion) s.key = regionKey(index++, s.region);
  if (atenRegions.empty()) return p;
  std::vector<PlanStep> steps;
  for (auto& s : p.steps) {
    if (!s.isRegion || std::find(atenRegions.begin(), atenRegions.end(), s.key) == atenRegions.end()) {
      steps.push_back(std::move(s));
      continue;
    }
    p.reasons.push_back("region " + s.key + " (" + std::to_string(s.region.nodes.size()) +
                        " nodes): left to ATen by the profile");
    p.leftToAten.push_back(s.key);
    for (const ir::Node* n : s.region.nodes) {
      PlanStep f;
      f.node = n;
      steps.push_back(std::move(f));
    }
  }
  p.steps = std::move(steps);
  return p;
}

}  // namespace xacc::backend::mlir
