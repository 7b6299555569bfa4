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
};

struct Partition {
  std::vector<PlanStep> steps;
  /// "aten.foo.default: no lowering rule" for each node that falls back.
  std::vector<std::string> reasons;
};

/// Groups lowerable nodes greedily in node order. A node that cannot be lowered
/// and does not read the open region is scheduled before it (so it does not
/// split the region); one that reads it closes the region. `lower` false:
/// every node falls back.
Partition partitionGraph(const ir::Graph& g, bool lower);

}  // namespace xacc::backend::mlir
