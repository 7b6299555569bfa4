// How Camel values print (spec 7.3), `string(x)` (14.1), `format` (14.3) and
// structural equality (7.2). Every builtin that renders or compares values goes
// through these four functions, so print, println, join, format and string()
// cannot disagree.
#include <algorithm>
#include <cstdio>
#include <set>

#include <fmt/args.h>
#include <fmt/format.h>

#include "StdlibImpl.h"

namespace xacc::camel {

using ir::Datum;
using ir::DKind;

namespace {

/// C++ ostream default for doubles: `%g` with 6 significant digits.
std::string ostreamDouble(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// Arrays on the path from the value being printed: an array that (through
/// other values) contains itself prints as `[...]` instead of recursing forever.
/// Only arrays can close a cycle (tuples and structs are immutable), so only
/// they are tracked; very deep nesting is cut off the same way.
struct ReprState {
  std::vector<const ir::Object*> lists;
  size_t depth = 0;
};
constexpr size_t kMaxDepth = 5000;

void repr(const Datum& d, ReprState& st, std::string& s);

// Set by executors while they load (single-threaded front end); read at run time.
ObjectRepr gObjectReprs[2];
const ObjectRepr* objectRepr(DKind k) {
  const ObjectRepr& r = gObjectReprs[k == DKind::Tensor ? 0 : 1];
  return r ? &r : nullptr;
}

void appendSeq(const std::vector<Datum>& items, char open, char close, ReprState& st,
               std::string& s) {
  s += open;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    repr(items[i], st, s);
  }
  s += close;
}

void repr(const Datum& d, ReprState& st, std::string& s) {
  switch (d.kind()) {
    case DKind::Null: s += "null"; return;
    case DKind::Int: s += std::to_string(d.asInt()); return;
    case DKind::Float: s += ostreamDouble(d.asFloat()); return;
    case DKind::Bool: s += d.asBool() ? "true" : "false"; return;
    case DKind::Str: s += d.asStr(); return;  // unquoted at every level (spec 7.3)
    case DKind::Func: s += "<function>"; return;
    case DKind::Token: s += "<token>"; return;
    case DKind::Tensor:
    case DKind::PyObj:
      if (const ObjectRepr* hook = objectRepr(d.kind())) {
        s += (*hook)(d);
        return;
      }
      s += static_cast<const ir::OpaqueObject*>(d.object())->repr();
      return;
    default: break;
  }
  bool isList = d.kind() == DKind::List;
  if (st.depth >= kMaxDepth ||
      (isList && std::find(st.lists.begin(), st.lists.end(), d.object()) != st.lists.end())) {
    s += isList ? "[...]" : d.kind() == DKind::Tuple ? "(...)" : "{...}";
    return;
  }
  ++st.depth;
  if (isList) st.lists.push_back(d.object());
  if (isList) {
    appendSeq(*ir::ListView(d), '[', ']', st, s);
  } else if (d.kind() == DKind::Tuple) {
    appendSeq(d.tupleItems(), '(', ')', st, s);
  } else {
    const auto& names = d.structNames();
    if (names.empty()) {
      s += "{}";
    } else {
      s += "{ ";
      for (size_t i = 0; i < names.size(); ++i) {
        if (i) s += ", ";
        s += names[i];
        s += ": ";
        repr(d.structFields()[i], st, s);
      }
      s += " }";
    }
  }
  if (isList) st.lists.pop_back();
  --st.depth;
}

/// Pairs of arrays already being compared. Structural equality of values that
/// may be cyclic is a bisimulation: a pair met again is assumed equal (any real
/// difference is found elsewhere), so every pair of arrays is compared once and
/// self-referencing arrays terminate. Arrays are the only possible cycle points.
using SeenPairs = std::set<std::pair<const ir::Object*, const ir::Object*>>;

bool equals(const Datum& a, const Datum& b, SeenPairs& seen, size_t depth);

}  // namespace

std::string camelRepr(const Datum& d, bool topLevel) {
  ReprState st;
  std::string s;
  repr(d, st, s);
  return s;
}

std::string camelToString(const Datum& d) {
  if (d.kind() == DKind::Float) return fmt::format("{:f}", d.asFloat());
  return camelRepr(d);
}

bool camelFormat(std::string_view fmtText, const std::vector<Datum>& args, std::string& out,
                 std::string& error) {
  fmt::dynamic_format_arg_store<fmt::format_context> store;
  for (const Datum& a : args) {
    if (a.kind() == DKind::Int)
      store.push_back(a.asInt());
    else if (a.kind() == DKind::Float)
      store.push_back(a.asFloat());
    else
      store.push_back(camelRepr(a));
  }
  // fmt reports malformed formats and specs that do not fit an argument by
  // throwing; this is the library boundary where that becomes a diagnostic.
  try {
    out = fmt::vformat(fmt::string_view(fmtText.data(), fmtText.size()), store);
    return true;
  } catch (const fmt::format_error& e) {
    error = e.what();
  } catch (const std::exception& e) {
    error = e.what();
  }
  return false;
}

namespace {

bool equals(const Datum& a, const Datum& b, SeenPairs& seen, size_t depth) {
  if (a.isHeap() && a.object() == b.object()) return true;
  if (depth > kMaxDepth) return false;  // only absurdly deep values get here
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case DKind::Null:
    case DKind::Token: return true;
    case DKind::Int: return a.asInt() == b.asInt();
    case DKind::Float: return a.asFloat() == b.asFloat();
    case DKind::Bool: return a.asBool() == b.asBool();
    case DKind::Str: return a.asStr() == b.asStr();
    case DKind::List:
    case DKind::Tuple: {
      if (a.kind() == DKind::List && !seen.insert({a.object(), b.object()}).second) return true;
      if (a.kind() == DKind::List) {  // Note [Compact arrays]
        const ir::ListObject *p = ir::listObj(a), *q = ir::listObj(b);
        using Rep = ir::ListObject::Rep;
        if (p->form() == Rep::Int && q->form() == Rep::Int) return p->ints == q->ints;
        if (p->form() == Rep::Float && q->form() == Rep::Float) return p->reals == q->reals;
      }
      ir::ListView vx(a), vy(b);
      const auto &x = *vx, &y = *vy;
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i], seen, depth + 1)) return false;
      return true;
    }
    case DKind::Struct: {
      // Struct types are structural: equal field sets, whatever the order.
      const auto& na = a.structNames();
      const auto& nb = b.structNames();
      if (na.size() != nb.size()) return false;
      for (size_t i = 0; i < na.size(); ++i) {
        size_t j = i < nb.size() && nb[i] == na[i] ? i : nb.size();
        if (j == nb.size())
          for (j = 0; j < nb.size() && nb[j] != na[i]; ++j) {
          }
        if (j == nb.size() || !equals(a.structFields()[i], b.structFields()[j], seen, depth + 1))
          return false;
      }
      return true;
    }
    default: return a.object() == b.object();
  }
}

}  // namespace

bool camelEquals(const Datum& a, const Datum& b) {
  SeenPairs seen;
  return equals(a, b, seen, 0);
}

void setObjectRepr(DKind kind, ObjectRepr repr) {
  if (kind == DKind::Tensor || kind == DKind::PyObj)
    gObjectReprs[kind == DKind::Tensor ? 0 : 1] = std::move(repr);
}

}  // namespace xacc::camel
