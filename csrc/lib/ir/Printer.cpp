// The GIR text printer. The grammar is documented in Parser.h; every construct
// printed here is read back by the parser into an identical graph.
#include "xacc/ir/Printer.h"

#include <unordered_map>
#include <unordered_set>

namespace xacc::ir {

namespace {

bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

bool allDigits(const std::string& s) {
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return !s.empty();
}

/// Graph symbols keep `::` and `$` (qualified and generated names); the
/// parser accepts both after '@'.
std::string symbolName(const std::string& s) {
  std::string out;
  for (char c : s) out += (isIdentChar(c) || c == ':' || c == '$') ? c : '_';
  return out.empty() ? "anon" : out;
}

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) out += isIdentChar(c) ? c : '_';
  if (!out.empty() && out[0] >= '0' && out[0] <= '9') out = "v" + out;
  return out;
}

class Printer {
public:
  Printer(std::string& out, const PrintOptions& opts) : out_(out), opts_(opts) {}

  void graph(const Graph& g, const std::string& header, int indent) {
    Scope scope;
    scopes_.push_back(&scope);
    pad(indent);
    out_ += header;
    out_ += '(';
    for (size_t i = 0; i < g.numParams(); ++i) {
      if (i) out_ += ", ";
      out_ += name(g.param(i));
      out_ += ": ";
      out_ += g.param(i)->type().str();
    }
    out_ += ") -> ";
    typeList(g.resultTypes(), true);
    out_ += " {\n";
    for (Node* n : g) node(*n, indent + 2);
    if (g.hasReturn()) {
      pad(indent + 2);
      out_ += "return";
      for (size_t i = 0; i < g.results().size(); ++i) {
        out_ += i ? ", " : " ";
        out_ += ref(g.results()[i]);
      }
      out_ += '\n';
    }
    pad(indent);
    out_ += "}\n";
    scopes_.pop_back();
  }

  void node(const Node& n, int indent) {
    pad(indent);
    for (size_t i = 0; i < n.numResults(); ++i) {
      if (i) out_ += ", ";
      out_ += name(n.result(i));
    }
    if (n.numResults()) out_ += " = ";
    out_ += n.opName();
    out_ += '(';
    for (size_t i = 0; i < n.numOperands(); ++i) {
      if (i) out_ += ", ";
      out_ += ref(n.operand(i));
    }
    out_ += ')';
    if (!n.attrs().empty()) {
      out_ += " {";
      bool first = true;
      for (auto& [k, v] : n.attrs().items()) {
        if (!first) out_ += ", ";
        first = false;
        out_ += k;
        out_ += " = ";
        out_ += v.str();
      }
      out_ += '}';
    }
    out_ += " : ";
    std::vector<Type> types;
    types.reserve(n.numResults());
    for (size_t i = 0; i < n.numResults(); ++i) types.push_back(n.result(i)->type());
    typeList(types, false);
    if (opts_.locations && n.loc().valid()) {
      out_ += " loc(\"";
      out_ += support::jsonEscape(*n.loc().file);
      out_ += "\":" + std::to_string(n.loc().line) + ":" + std::to_string(n.loc().col) + ")";
    }
    if (n.numRegions()) {
      out_ += " {\n";
      for (auto& r : n.regions()) graph(*r, "^" + sanitize(r->label().empty() ? "r" : r->label()), indent + 2);
      pad(indent);
      out_ += '}';
    }
    out_ += '\n';
  }

private:
  struct Scope {
    std::unordered_map<const Value*, std::string> names;
    std::unordered_set<std::string> taken;
    unsigned counter = 0;
  };

  void pad(int n) { out_.append(size_t(n), ' '); }

  void typeList(const std::vector<Type>& ts, bool isSignature) {
    if (ts.size() == 1) {
      out_ += ts[0].str();
      return;
    }
    out_ += '(';
    for (size_t i = 0; i < ts.size(); ++i) {
      if (i) out_ += ", ";
      out_ += ts[i].str();
    }
    out_ += ')';
  }

  const std::string& name(const Value* v) {
    Scope& s = *scopes_.back();
    std::string n;
    if (!v->name().empty() && !allDigits(v->name())) {
      std::string base = sanitize(v->name());
      n = base;
      for (unsigned k = 1; s.taken.count(n); ++k) n = base + "_" + std::to_string(k);
    } else {
      do {
        n = std::to_string(s.counter++);
      } while (s.taken.count(n));
    }
    s.taken.insert(n);
    auto& slot = s.names[v];
    slot = "%" + n;
    return slot;
  }

  std::string ref(const Value* v) {
    if (!v) return "%<null>";
    Scope& s = *scopes_.back();
    auto it = s.names.find(v);
    if (it != s.names.end()) return it->second;
    return "%<undefined>";  // only reachable for invalid graphs; the verifier reports them
  }

  std::string& out_;
  const PrintOptions& opts_;
  std::vector<Scope*> scopes_;
};

}  // namespace

std::string printGraph(const Graph& g, const PrintOptions& opts) {
  std::string out;
  Printer p(out, opts);
  p.graph(g, "graph @" + symbolName(g.name()), 0);
  return out;
}

std::string printModule(const Module& m, const PrintOptions& opts) {
  std::string out;
  bool first = true;
  for (auto& g : m.graphs()) {
    if (!first) out += '\n';
    first = false;
    Printer p(out, opts);
    p.graph(*g, "graph @" + symbolName(g->name()), 0);
  }
  return out;
}

std::string printNodeShort(const Node& n) {
  std::string s = n.opName() + "(";
  for (size_t i = 0; i < n.numOperands(); ++i)
    s += (i ? ", " : "") + (n.operand(i) ? n.operand(i)->type().str() : std::string("<null>"));
  s += ")";
  if (!n.attrs().empty()) {
    s += " {";
    bool first = true;
    for (auto& [k, v] : n.attrs().items()) {
      s += (first ? "" : ", ") + k + " = " + v.str();
      first = false;
    }
    s += "}";
  }
  return s;
}

}  // namespace xacc::ir
