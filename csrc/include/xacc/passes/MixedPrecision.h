// Automatic mixed precision (the `amp` pass): which nodes of a graph may run in
// bfloat16, grouped into regions, and the rewrite that runs them so. The
// planning half is public so that the Python side (xacc._src.amp) can name the
// regions it measures and backs out; see docs/mixed-precision.md.
//
// Note [AMP regions]: a region is one compute anchor (matmul, linear, conv)
// plus the pointwise/layout nodes that lie on a path from it to another anchor
// ("between" two anchors: reachable forward from an anchor and backward from
// one through such nodes only). A between-node belongs to the region of its
// first operand that is itself in a region. Regions are computed once on the
// float32 graph; excluding (backing out) a region never changes another
// region's members or id, so a back-out decision is a set of ids.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "xacc/ir/Graph.h"

namespace xacc::passes {

/// How the precision policy treats an op (by its ATen base name).
enum class AmpClass : uint8_t {
  Compute,  ///< matmul/linear/conv: faster in bfloat16, anchors a region
  Follow,   ///< pointwise or layout op: runs in whatever precision its region has
  KeepF32,  ///< reductions, norms, softmax, losses, exp/log: float32 by policy
  Other,    ///< anything else (effects, regions, non-tensor ops): left as it is
};

AmpClass ampClassOf(std::string_view opName);
const char* ampClassName(AmpClass c);

struct AmpRegion {
  int id = 0;
  std::vector<ir::Node*> nodes;     ///< in graph order; nodes[0] is the anchor
  std::vector<ir::Value*> outputs;  ///< values used outside the region or returned
};

struct AmpPlan {
  std::vector<AmpRegion> regions;  ///< ids 0..n-1 in graph order of their anchors
  std::vector<ir::Node*> keptF32;  ///< KeepF32 nodes on float tensors (for the report)
};

/// Plans the regions of one graph (its top level; nested graphs are left alone).
AmpPlan planMixedPrecision(const ir::Graph& g);

struct AmpOptions {
  std::set<int> exclude;     ///< region ids kept in float32 (backed out)
  bool excludeAll = false;   ///< every region kept in float32
  bool probe = false;        ///< append each region's outputs (as float32) to the results
};

struct AmpStats {
  int64_t regions = 0, regionsLow = 0, nodesLow = 0, castsInserted = 0, castsFolded = 0;
};

/// Rewrites `g`: the nodes of non-excluded regions run in bfloat16, with casts
/// at region boundaries; graph results keep their types. Returns false (error
/// set) when an op's type rule rejects the bfloat16 operands.
bool applyMixedPrecision(ir::Graph& g, const AmpOptions& opts, AmpStats& stats, std::string& error);

}  // namespace xacc::passes
