// The GIR text printer. The grammar is documented in Parser.h; every construct
// printed here is read back by the parser into an identical graph.
#include "xacc/ir/Printer.h"

#include <charconv>
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
    scope.graph = &g;
    scope.code.assign(g.valueIdBound(), kNone);
    scopes_.push_back(&scope);
    pad(indent);
    out_ += header;
    out_ += '(';
    for (size_t i = 0; i < g.numParams(); ++i) {
      if (i) out_ += ", ";
      define(g.param(i));
      out_ += ": ";
      out_ += g.param(i)->type().str();
    }
    out_ += ") -> ";
    const std::vector<Type>& rts = g.resultTypes();
    typeList(rts.size(), [&](size_t i) { return rts[i]; });
    out_ += " {\n";
    for (Node* n : g) node(*n, indent + 2);
    if (g.hasReturn()) {
      pad(indent + 2);
      out_ += "return";
      for (size_t i = 0; i < g.results().size(); ++i) {
        out_ += i ? ", " : " ";
        ref(g.results()[i]);
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
      define(n.result(i));
    }
    if (n.numResults()) out_ += " = ";
    out_ += n.opName();
    out_ += '(';
    for (size_t i = 0; i < n.numOperands(); ++i) {
      if (i) out_ += ", ";
      ref(n.operand(i));
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
    typeList(n.numResults(), [&](size_t i) { return n.result(i)->type(); });
    if (opts_.locations && n.loc().valid()) {
      out_ += " loc(\"";
      out_ += support::jsonEscape(*n.loc().file);
      out_ += "\":";
      number(n.loc().line);
      out_ += ':';
      number(n.loc().col);
      out_ += ')';
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
  // A value's printed name, by its dense id (Value::id()) in the scope's graph:
  // kNone (not defined yet), a number n (printed %n), or kNamed | i for
  // names[i]. Numbers and sanitized names never collide: a sanitized name never
  // consists of digits only (see sanitize), so only names need a `taken` set.
  static constexpr uint32_t kNone = 0xffffffffu;
  static constexpr uint32_t kNamed = 0x80000000u;
  struct Scope {
    const Graph* graph = nullptr;
    std::vector<uint32_t> code;
    std::vector<std::string> names;  ///< "%name"
    std::unordered_set<std::string> taken;
    uint32_t counter = 0;
  };

  void pad(int n) { out_.append(size_t(n), ' '); }

  void number(uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
  }

  template <class TypeAt>
  void typeList(size_t count, TypeAt typeAt) {
    if (count == 1) {
      out_ += typeAt(0).str();
      return;
    }
    out_ += '(';
    for (size_t i = 0; i < count; ++i) {
      if (i) out_ += ", ";
      out_ += typeAt(i).str();
    }
    out_ += ')';
  }

  /// Names `v` (a parameter or result of the scope's graph) and prints the name.
  void define(const Value* v) {
    Scope& s = *scopes_.back();
    uint32_t code;
    if (!v->name().empty() && !allDigits(v->name())) {
      std::string base = sanitize(v->name());
      std::string n = base;
      for (unsigned k = 1; s.taken.count(n); ++k) n = base + "_" + std::to_string(k);
      s.taken.insert(n);
      code = kNamed | uint32_t(s.names.size());
      s.names.push_back("%" + n);
    } else {
      code = s.counter++;
    }
    if (v->id() < s.code.size()) s.code[v->id()] = code;
    put(code);
  }

  void put(uint32_t code) {
    const Scope& s = *scopes_.back();
    if (code & kNamed) {
      out_ += s.names[code & ~kNamed];
    } else {
      out_ += '%';
      number(code);
    }
  }

  void ref(const Value* v) {
    if (!v) {
      out_ += "%<null>";
      return;
    }
    const Scope& s = *scopes_.back();
    uint32_t code = v->ownerGraph() == s.graph && v->id() < s.code.size() ? s.code[v->id()] : kNone;
    // Undefined here: only reachable for invalid graphs; the verifier reports them.
    if (code == kNone) out_ += "%<undefined>";
    else put(code);
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
