// Helpers shared by the ir_*_test.cpp GoogleTest files: parsing GIR text into a
// module with its own SourceManager, checking the use-list invariant (every
// operand and graph result has exactly one matching Use, and every Use points
// back at it), and collecting nodes by op name.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "xacc/ir/Graph.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"

namespace xacc::ir::testing {

/// Parses `text`; fails the test (and returns null) on a parse error.
inline std::unique_ptr<Module> parse(std::string_view text, support::DiagnosticEngine& diag) {
  auto m = parseModule(text, "test.gir", diag);
  EXPECT_TRUE(m) << diag.renderAllText();
  return m;
}

/// Codes of the errors reported so far ("E0201", ...).
inline std::vector<std::string> codes(const support::DiagnosticEngine& diag) {
  std::vector<std::string> out;
  for (const auto& d : diag.diagnostics()) out.push_back(d.code);
  return out;
}

inline void collectValues(const Graph& g, std::vector<const Value*>& out) {
  for (size_t i = 0; i < g.numParams(); ++i) out.push_back(g.param(i));
  for (Node* n : g)
    for (size_t i = 0; i < n->numResults(); ++i) out.push_back(n->result(i));
}

/// Checks the use lists of `g` and its regions against operands and results.
inline void expectUsesConsistent(const Graph& g) {
  std::map<std::pair<const Value*, std::pair<const Node*, uint32_t>>, int> expected;
  for (Node* n : g) {
    EXPECT_EQ(n->parent(), &g);
    for (size_t i = 0; i < n->numOperands(); ++i)
      if (n->operand(i)) ++expected[{n->operand(i), {n, uint32_t(i)}}];
    for (auto& r : n->regions()) {
      EXPECT_EQ(r->parentNode(), n);
      expectUsesConsistent(*r);
    }
  }
  for (size_t i = 0; i < g.results().size(); ++i)
    if (g.results()[i]) ++expected[{g.results()[i], {nullptr, uint32_t(i)}}];
  std::vector<const Value*> values;
  collectValues(g, values);
  std::map<std::pair<const Value*, std::pair<const Node*, uint32_t>>, int> actual;
  for (const Value* v : values)
    for (const Use& u : v->uses()) ++actual[{v, {u.user, u.index}}];
  // Operands must be values of this graph (regions are isolated from above).
  for (auto& [key, count] : expected) {
    bool local = false;
    for (const Value* v : values) local |= v == key.first;
    EXPECT_TRUE(local) << "an operand or result of graph '" << g.name()
                       << "' is a value of another graph";
  }
  EXPECT_EQ(expected, actual) << "use lists disagree with operands in graph '" << g.name() << "'";
}

/// The nodes of `g` (not regions) whose op is `name`.
inline std::vector<Node*> nodesNamed(const Graph& g, std::string_view name) {
  std::vector<Node*> out;
  for (Node* n : g)
    if (n->opName() == name) out.push_back(n);
  return out;
}

}  // namespace xacc::ir::testing
