// The GIR verifier: operand counts, attributes, types (each op's type rule
// against the declared result types), definition before use within a graph,
// region signatures, callee signatures, and effect-token rules (see Note
// [Effect tokens] in Graph.h). Reports located diagnostics (E02xx).
#pragma once

#include "xacc/ir/Graph.h"
#include "xacc/ir/Parser.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::ir {

/// Returns true when `m` is well formed. `locs` (from the parser) makes
/// diagnostics point into the .gir text.
bool verifyModule(const Module& m, support::DiagnosticEngine& diag,
                  const TextLocations* locs = nullptr);
bool verifyGraph(const Graph& g, support::DiagnosticEngine& diag,
                 const TextLocations* locs = nullptr);

}  // namespace xacc::ir
