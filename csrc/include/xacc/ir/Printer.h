// Printing GIR as text (the form the parser reads back) and as Graphviz DOT.
//
//   graph @f(%a: i64, %t: !token) -> (i64, !token) {
//     %0 = arith.add(%a, %a) : i64 loc("f.cml":3:5)
//     %1 = io.print(%t, %0) {end = "\n"} : !token
//     return %0, %1
//   }
//
// Printing is deterministic: values keep their names when they have one (made
// unique per graph scope), the rest are numbered in definition order.
#pragma once

#include <ostream>
#include <string>

#include "xacc/ir/Graph.h"

namespace xacc::ir {

struct PrintOptions {
  bool locations = true;  ///< print `loc(...)` suffixes
};

std::string printModule(const Module& m, const PrintOptions& opts = {});
std::string printGraph(const Graph& g, const PrintOptions& opts = {});
/// One node on one line (regions elided), for diagnostics and logs.
std::string printNodeShort(const Node& n);

/// Graphviz DOT: one cluster per graph, nodes labelled with op and type, edges
/// for data (solid) and effect tokens (dashed).
std::string printDot(const Module& m);

}  // namespace xacc::ir
