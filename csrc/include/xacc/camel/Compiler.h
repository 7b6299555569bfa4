// The Camel compiler pipeline after parsing: semantic analysis (modules and
// imports, name resolution, the type system of spec section 6) and lowering to
// one ir::Module per program as docs/camel-lowering.md describes. Failures are
// reported into the DiagnosticEngine (codes E2xxx, see CamelDiags.def); nothing
// throws, and the compiler recovers from an error to report several.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "xacc/ir/Graph.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::camel {

struct CompileOptions {
  /// Extra module search directories (`-I`), after the importing file's directory.
  std::vector<std::string> includeDirs;
  /// The main module's directory (set by compileProgram; searched after the importing file's).
  std::string mainDir;
  /// The standard library directory (`-L`, else CAMEL_STD_LIB, else next to the binary).
  std::string stdlibDir;
  /// Require a runnable `main` (camel run); `camel check` only analyses.
  bool requireMain = true;
  /// Lower to GIR (sema alone when false).
  bool lower = true;
};

/// A function the main module exports (`export func`), as a host (the Python
/// bindings) calls it: graph `graph` takes the effect token first when
/// `takesToken`, then the with-arguments, then the ordinary arguments; its
/// results are the token (when taken), the value, then one final value per
/// `var` parameter. Overloads are separate entries with the same `name`.
struct ExportedFunction {
  std::string name;
  std::string graph;  ///< empty for a decorated function (a value, not a graph)
  bool takesToken = false;
  std::vector<std::string> withParams, params;  ///< parameter names
  std::vector<ir::Type> withTypes, paramTypes;
  ir::Type result;
};

/// A compiled program.
struct CompiledProgram {
  std::unique_ptr<ir::Module> module;
  std::string mainGraph;       ///< e.g. "hello::main"; empty when there is none
  bool mainTakesToken = false; ///< main's graph threads an effect token (first param/result)
  ir::Type mainResult;         ///< main's value type (i64, bool, ...)
  bool mainIsMacro = false;    ///< main is declared `macro func` (graph reducers)
  std::vector<ExportedFunction> exports;  ///< the main module's exported functions
  double parseSeconds = 0, semaSeconds = 0, lowerSeconds = 0;
};

/// Parses, analyses and lowers the program whose main module is `path`.
/// Returns false after reporting diagnostics.
bool compileProgram(const std::string& path, const CompileOptions& opts,
                    support::DiagnosticEngine& diags, CompiledProgram& out);

/// Camel spelling of a GIR type as used in diagnostics: int, float, string,
/// bool, void, any, T[], (A, B), { a: T }, (A) => R (effect tokens omitted).
std::string camelTypeName(ir::Type t);

}  // namespace xacc::camel
