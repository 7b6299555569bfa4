// cmlconfig.json, the project file of `camel run` (docs/camel-reducers.md):
//
//   {
//     "entry": "src/main.cml",                       // required
//     "pipeline": ["opt.cml", "std::onnx=model.onnx"], // reducers (Pipeline.h)
//     "passes": "inline,dce",                         // GIR passes when there is no pipeline
//     "include": ["lib"], "stdlib": "/path/to/stdlib",
//     "executors": { "runtime": { "scheduler": "par", "threads": 2, "backend": "xpu" },
//                    "aten": {} }                     // other keys: executors to load
//   }
//
// Paths are relative to the file's directory. `camel run` with no program file
// uses ./cmlconfig.json or the first one found in a parent directory; flags on
// the command line override what the file says. The file is read with
// nlohmann-json's SAX interface over a position-counting iterator, so every
// problem (bad JSON, a wrong type, an unknown key, a missing entry file) is an
// error located at `cmlconfig.json:line:col`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Pipeline.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::camel::tool {

struct CamelConfig {
  std::string path;   ///< as displayed in diagnostics
  std::string entry;  ///< the entry module, resolved against the file's directory
  bool hasPipeline = false;
  std::vector<Reducer> pipeline;
  std::optional<std::string> passes;
  std::vector<std::string> includeDirs;
  std::optional<std::string> stdlibDir;
  std::optional<std::string> scheduler;  ///< executors.runtime.scheduler
  std::optional<unsigned> threads;       ///< executors.runtime.threads
  std::optional<std::string> backend;    ///< executors.runtime.backend (--backend)
  std::vector<std::string> executors;    ///< the other keys of executors (--executors)
};

/// ./cmlconfig.json or the nearest one in a parent directory (a path relative
/// to the working directory where possible); empty when there is none.
std::string findConfig();

/// Reads and checks `path`. Returns false after reporting located errors.
bool loadConfig(const std::string& path, CamelConfig& out, support::DiagnosticEngine& diags);

}  // namespace xacc::camel::tool
