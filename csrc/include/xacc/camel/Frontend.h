// Entry points of the Camel front end used by tools and bindings: load a
// source file into the SourceManager, lex and parse it. Semantic analysis and
// lowering to GIR build on parseFile (Compiler.h: compileProgram). Failures
// are reported into the DiagnosticEngine; nothing throws.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "xacc/camel/AST.h"
#include "xacc/camel/Parser.h"
#include "xacc/camel/Token.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::camel {

/// Standard modules written in Camel and compiled in (`perf`): the source of
/// module `name`, or null. loadSourceFile reads "<builtin>/<name>.cml" from here.
const char* builtinModuleSource(std::string_view name);
inline constexpr std::string_view kBuiltinSourcePrefix = "<builtin>/";

/// Reads `path` into the engine's SourceManager. Returns the interned file
/// name, or null after reporting E1000 (missing, unreadable, a directory).
const std::string* loadSourceFile(const std::string& path, support::DiagnosticEngine& diags);

/// The result of running the front end on one file.
struct ParsedFile {
  const std::string* file = nullptr;
  std::vector<Token> tokens;
  Module* module = nullptr;  ///< null when the file could not be read
};

/// Loads, lexes and parses `path`; nodes are allocated in `ctx`.
ParsedFile parseFile(const std::string& path, ASTContext& ctx, support::DiagnosticEngine& diags,
                     const ParseOptions& opts = {});

/// Every `.cml` file under `dir` (recursively), sorted by path.
std::vector<std::string> findCamelFiles(const std::string& dir);

}  // namespace xacc::camel
