// Multi-stage graph reduction for `camel run` (docs/camel-reducers.md):
//
//   camel main.cml -> opt.cml -> std::onnx     (`->` quoted or a token of its own)
//   camel main.cml --passes opt.cml,std::onnx
//
// A reducer takes the program graph and returns a graph. User reducers are
// Camel modules whose `macro func main(g: string): string` receives the program
// as GIR text (Note [Graphs as Camel values] in stdlib/Gir.cpp); built-in
// reducers are named `std::...`:
//   std::opt          the standard pass pipeline (passes::kStandardPipeline)
//   std::<pass>       one GIR pass (std::inline, std::dce, std::const-fold, ...)
//   std::gir          prints the graph as GIR text to stdout
//   std::dot          prints the graph as Graphviz DOT to stdout
//   std::onnx[=FILE]  writes the tensor part of the entry graph as an ONNX model
//                     (OnnxExport.h; default FILE: <program stem>.onnx)
//   std::run          executes the program (aliases std::default, std::nvm, std::seq,
//                     std::par) and returns the empty graph
// Reducers run in order; a reducer that returns the empty graph has executed
// everything, and each reducer after it is reported as pointless (a warning at
// its position on the command line or in cmlconfig.json) and skipped. When no
// reducer executed the program, the built-in scheduler runs the result.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "xacc/camel/Compiler.h"
#include "xacc/ir/Graph.h"
#include "xacc/runtime/Runtime.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::camel::tool {

struct Reducer {
  std::string name;  ///< "std::onnx" or a path to a .cml file
  std::string arg;   ///< built-ins: the text after '=' (std::onnx=FILE)
  bool builtin = false;
  support::SourceLoc loc;  ///< where it was written (command line or cmlconfig.json)
};

/// Takes `FILE -> r1 -> r2 ...` out of `argv` (tokens `->`, `->r`, `a->b`, ...),
/// leaving FILE in place, and parses the reducers (located in a `<command line>`
/// buffer of `sm`). Returns false with `error` set on a malformed chain.
bool extractReducerChain(std::vector<std::string>& argv, support::SourceManager& sm,
                         std::vector<Reducer>& out, std::string& error);

/// Parses reducer names (`--passes a,b` or cmlconfig.json's pipeline); each gets `loc`.
/// Unknown `std::` names are reported into `diags`.
bool parseReducer(const std::string& text, support::SourceLoc loc, const std::string& baseDir,
                  Reducer& out, support::DiagnosticEngine& diags);

/// True when a `--passes` list names reducers (std::..., *.cml) rather than GIR passes.
bool passesNameReducers(const std::string& passes);

struct PipelineOptions {
  std::string programFile;           ///< for std::onnx's default file name
  camel::CompileOptions compile;     ///< for compiling user reducers
  runtime::RuntimeOptions runtime;   ///< for std::run
};

/// The program as it moves through the pipeline.
struct PipelineState {
  std::unique_ptr<ir::Module> module;  ///< null once a reducer executed everything
  std::string entry;                   ///< the entry graph's name
  bool executed = false;
  int status = 0;  ///< exit status of the execution, when executed
};

/// Runs the reducers in order. Returns false after reporting diagnostics.
bool runReducers(const std::vector<Reducer>& reducers, PipelineState& state, const PipelineOptions& opts,
                 support::DiagnosticEngine& diags);

/// The module as GIR text with the entry graph first (what user reducers get).
std::string programText(const ir::Module& m, const std::string& entry);

}  // namespace xacc::camel::tool
