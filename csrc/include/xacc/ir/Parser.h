// Parsing GIR text.
//
//   module    ::= graph*
//   graph     ::= 'graph' '@'NAME signature body
//   signature ::= '(' [param (',' param)*] ')' '->' types
//   param     ::= '%'NAME ':' type
//   types     ::= type | '(' [type (',' type)*] ')'
//   body      ::= '{' node* ['return' [value (',' value)*]] '}'
//   node      ::= [value (',' value)* '='] OPNAME '(' [value (',' value)*] ')'
//                 [attr-dict] ':' types [loc] ['{' region* '}']
//   region    ::= '^'NAME signature body
//   attr-dict ::= '{' NAME '=' attr (',' NAME '=' attr)* '}'
//   attr      ::= INT | FLOAT | 'true' | 'false' | 'none' | STRING | '@'NAME
//               | 'type' '(' type ')' | '[' [attr (',' attr)*] ']'
//   loc       ::= 'loc' '(' STRING ':' INT ':' INT ')'
//
// Values are scoped per graph (regions are isolated); names must be defined
// before use. Errors are reported as `file:line:col: error[E01xx]` with a caret;
// the parser never crashes on malformed input.
#pragma once

#include <memory>
#include <string_view>
#include <unordered_map>

#include "xacc/ir/Graph.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::ir {

/// Text positions of parsed nodes and graphs, so later diagnostics (verifier,
/// passes) can point into the .gir file even when nodes carry source `loc`s.
struct TextLocations {
  std::unordered_map<const Node*, support::SourceLoc> nodes;
  std::unordered_map<const Graph*, support::SourceLoc> graphs;
  support::SourceLoc of(const Node& n) const {
    auto it = nodes.find(&n);
    return it == nodes.end() ? n.loc() : it->second;
  }
};

/// Parses `text` (registered in the diagnostics' SourceManager under `filename`).
/// Returns null after reporting an error.
std::unique_ptr<Module> parseModule(std::string_view text, std::string_view filename,
                                    support::DiagnosticEngine& diag,
                                    TextLocations* locs = nullptr);

/// Parses a single type ("tensor<f32, [2, ?], cpu>"); null type on failure.
Type parseType(std::string_view text, std::string* error = nullptr);

}  // namespace xacc::ir
