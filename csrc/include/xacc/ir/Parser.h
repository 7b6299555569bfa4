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
#include <vector>

#include "xacc/ir/Graph.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::ir {

/// Text positions of parsed nodes and graphs, so later diagnostics (verifier,
/// passes) can point into the .gir file even when nodes carry source `loc`s.
/// Recording a node is an append; the lookup table behind of() is built (and
/// extended) on demand, so parsing a big file pays nothing per node for it.
class TextLocations {
public:
  std::unordered_map<const Graph*, support::SourceLoc> graphs;

  /// Records (or replaces) the position of node `n`.
  void setNode(const Node* n, support::SourceLoc loc) { entries_.push_back({n, loc}); }
  /// The recorded position of `n`, else its source loc().
  support::SourceLoc of(const Node& n) const;
  size_t numNodes() const { return entries_.size(); }

private:
  struct Entry {
    const Node* node;
    support::SourceLoc loc;
  };
  void index() const;
  std::vector<Entry> entries_;
  /// Open addressing over entries_: 1 + position, 0 = empty; at most half full.
  mutable std::vector<uint32_t> table_;
  mutable size_t indexed_ = 0;
};

/// Parses `text` (registered in the diagnostics' SourceManager under `filename`).
/// Returns null after reporting an error.
std::unique_ptr<Module> parseModule(std::string_view text, std::string_view filename,
                                    support::DiagnosticEngine& diag,
                                    TextLocations* locs = nullptr);

/// Parses a single type ("tensor<f32, [2, ?], cpu>"); null type on failure.
Type parseType(std::string_view text, std::string* error = nullptr);

}  // namespace xacc::ir
