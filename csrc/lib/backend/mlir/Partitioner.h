// Partitioning a GIR graph into regions the backend lowers and single nodes
// that run through their interpreter rule (the ATen path). No MLIR here.
#pragma once

#include <string>
#include <vector>

#include "Lowering.h"

namespace xacc::backend::mlir {

/// One step of an executable plan: a region, or one fallback node.
struct PlanStep {
  bool isRegion = false;
  Region region;                    ///< isRegion
  const ir::Node* node = nullptr;   ///< !isRegion
  /// isRegion: regionKey() of the region, stable for the same graph.
  std::string key;
};

struct Partition {
  std::vector<PlanStep> steps;
  /// "aten.foo.default: no lowering rule" for each node that falls back.
  std::vector<std::string> reasons;
  /// Keys of the regions left to ATen because `atenRegions` named them.
  std::vector<std::string> leftToAten;
};

/// Groups lowerable nodes greedily in node order. A node that cannot be lowered
/// and does not read the open region is scheduled before it (so it does not
/// split the region); one that reads it closes the region. `lower` false:
/// every node falls back. Regions whose key is in `atenRegions` (a profile
/// measured their kernel slower than ATen; docs/pgo.md) are replaced by their
/// nodes as fallback steps, in node order.
Partition partitionGraph(const ir::Graph& g, bool lower, const std::vector<std::string>& atenRegions = {});

/// "r<index>:<hash of the op names>": names the index-th region of a graph's
/// partition (before any is left to ATen) across processes.
std::string regionKey(int index, const Region& r);

}  // namespace xacc::backend::mlir
