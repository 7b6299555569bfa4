// Graphviz export: one cluster per graph (regions nested as sub-clusters), data
// edges solid, effect-token edges dashed, parameters and returns as ellipses.
#include <unordered_map>

#include "xacc/ir/Printer.h"

namespace xacc::ir {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

class DotWriter {
public:
  std::string out;

  void graph(const Graph& g, const std::string& title) {
    std::string cid = "cluster_" + std::to_string(counter_++);
    out += "subgraph " + cid + " {\n  label=\"" + esc(title) + "\";\n  style=rounded;\n";
    for (size_t i = 0; i < g.numParams(); ++i) {
      std::string id = fresh();
      ids_[g.param(i)] = id;
      out += "  " + id + " [shape=ellipse, label=\"%" +
             esc(g.param(i)->name().empty() ? std::to_string(i) : g.param(i)->name()) + " : " +
             esc(g.param(i)->type().str()) + "\"];\n";
    }
    for (Node* n : g) {
      std::string id = fresh();
      std::string label = n->opName();
      for (auto& [k, v] : n->attrs().items()) label += "\n" + k + " = " + v.str();
      for (size_t i = 0; i < n->numResults(); ++i) label += "\n: " + n->result(i)->type().str();
      out += "  " + id + " [shape=box, label=\"" + esc(label) + "\"" +
             (n->hasEffects() ? ", style=filled, fillcolor=\"#fde2c8\"" : "") + "];\n";
      for (size_t i = 0; i < n->numOperands(); ++i) edge(n->operand(i), id);
      for (size_t i = 0; i < n->numResults(); ++i) ids_[n->result(i)] = id;
      for (auto& r : n->regions()) graph(*r, "^" + r->label());
    }
    if (g.hasReturn()) {
      std::string id = fresh();
      out += "  " + id + " [shape=ellipse, label=\"return\"];\n";
      for (Value* v : g.results()) edge(v, id);
    }
    out += "}\n";
  }

private:
  std::string fresh() { return "n" + std::to_string(nodes_++); }
  void edge(const Value* v, const std::string& to) {
    auto it = ids_.find(v);
    if (it == ids_.end()) return;
    out += "  " + it->second + " -> " + to + (v->type().isToken() ? " [style=dashed]" : "") + ";\n";
  }
  std::unordered_map<const Value*, std::string> ids_;
  unsigned counter_ = 0, nodes_ = 0;
};

}  // namespace

std::string printDot(const Module& m) {
  DotWriter w;
  w.out = "digraph gir {\n  compound=true;\n  node [fontname=\"monospace\", fontsize=10];\n";
  for (auto& g : m.graphs()) w.graph(*g, "@" + g->name());
  w.out += "}\n";
  return w.out;
}

}  // namespace xacc::ir
