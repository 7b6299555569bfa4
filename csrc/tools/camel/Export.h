// `camel inspect --dot|--mlir` and `camel run --export DIR`: the Camel side of
// the export tools (docs/export.md). The MLIR view comes from the `xacc-mlir`
// tool (found next to `camel` or on PATH), so `camel` itself links neither MLIR
// nor libtorch; SVGs come from graphviz's `dot` when it is installed.
#pragma once

#include <string>
#include <vector>

#include "xacc/ir/Graph.h"

namespace xacc::camel::tool {

/// For each graph of `m`: xacc-mlir's partition plan (as `//` comments) and the
/// MLIR of the regions it lowers. False with `error` when xacc-mlir is missing.
bool mlirOfModule(const ir::Module& m, const std::string& argv0, std::string& out, std::string& error);

struct CamelExport {
  std::string dir;
  std::string sourceFile;
  std::string argv0;
  const ir::Module* module = nullptr;  ///< after the pass pipeline
  std::string passes;
  double parseSeconds = 0, semaSeconds = 0, lowerSeconds = 0, passSeconds = 0, runSeconds = 0;
  int exitStatus = 0;
};

/// Writes DIR/{program.gir, program.dot, program.svg, program.mlir, <source>,
/// times.json, index.html}. False with `error` when DIR cannot be written.
bool exportProgram(const CamelExport& e, std::vector<std::string>& notes, std::string& error);

}  // namespace xacc::camel::tool
