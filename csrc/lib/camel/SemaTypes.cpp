// The Camel type system on top of GIR types (spec section 6): Camel types map
// one to one onto ir::Type (int -> i64, float -> f64, string -> str, void ->
// null, T[] -> list<T>, tuples, structs); function values are token-threading
// closures (see funcValueType). This file holds assignability, the Camel
// spelling of types for diagnostics, and name suggestions.
#include <algorithm>
#include <mutex>

#include "SemaImpl.h"

namespace xacc::camel {

using ir::Type;
using ir::TypeKind;

std::string camelTypeName(Type t) {
  if (!t) return "<error>";
  switch (t.kind()) {
    case TypeKind::Int: return t.bitWidth() == 32 ? "i32" : "int";
    case TypeKind::Float: return t.bitWidth() == 32 ? "f32" : "float";
    case TypeKind::Bool: return "bool";
    case TypeKind::Str: return "string";
    case TypeKind::Null: return "void";
    case TypeKind::Any: return "any";
    case TypeKind::PyObj:
      return t.elementType() ? "PyObject<" + camelTypeName(t.elementType()) + ">" : "PyObject";
    case TypeKind::Token: return "!token";
    case TypeKind::Tensor: return t.dtype() == ir::DType::Bool ? "Tensor<bool>" : "Tensor";
    case TypeKind::List: {
      Type e = t.elementType();
      std::string s = camelTypeName(e);
      if (e.kind() == TypeKind::Func) s = "(" + s + ")";
      return s + "[]";
    }
    case TypeKind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < t.elements().size(); ++i)
        s += (i ? ", " : "") + camelTypeName(t.elements()[i]);
      if (t.elements().size() == 1) s += ",";
      return s + ")";
    }
    case TypeKind::Struct: {
      if (t.elements().empty()) return "{}";
      std::string s = "{ ";
      for (size_t i = 0; i < t.elements().size(); ++i)
        s += (i ? ", " : "") + t.fieldNames()[i] + ": " + camelTypeName(t.elements()[i]);
      return s + " }";
    }
    case TypeKind::Func: {
      std::vector<Type> params;
      Type result;
      size_t vars = 0;
      if (!sema::splitFuncValueType(t, params, result, vars)) return t.str();
      return sema::typeListName(params) + " => " + camelTypeName(result);
    }
  }
  return t.str();
}

namespace sema {

bool sameType(Type a, Type b) {
  if (a == b) return true;
  if (!a || !b || a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case TypeKind::List: return sameType(a.elementType(), b.elementType());
    case TypeKind::Tuple:
      if (a.elements().size() != b.elements().size()) return false;
      for (size_t i = 0; i < a.elements().size(); ++i)
        if (!sameType(a.elements()[i], b.elements()[i])) return false;
      return true;
    case TypeKind::Struct: {
      if (a.elements().size() != b.elements().size()) return false;
      for (size_t i = 0; i < a.elements().size(); ++i) {
        int j = b.fieldIndex(a.fieldNames()[i]);
        if (j < 0 || !sameType(a.elements()[i], b.elements()[size_t(j)])) return false;
      }
      return true;
    }
    // Camel's `Tensor` does not carry a shape: tensors of one dtype and
    // device are one type (shape mismatches are found by ATen).
    case TypeKind::Tensor: return a.dtype() == b.dtype() && a.device() == b.device();
    default: return false;
  }
}

bool assignable(Type expected, Type actual) {
  if (!expected || !actual) return true;  // an earlier error
  if (expected.isAny() || expected.kind() == TypeKind::Null) return true;
  // Every PyObject<T> is a PyObject.
  if (expected == Type::pyobj() && actual.kind() == TypeKind::PyObj) return true;
  return sameType(expected, actual);
}

namespace {
std::mutex varFlagsMu;
std::unordered_map<Type, std::vector<bool>>& varFlagsTable() {
  static std::unordered_map<Type, std::vector<bool>> table;
  return table;
}
}  // namespace

std::vector<bool> varParamFlags(Type fn) {
  std::lock_guard<std::mutex> lock(varFlagsMu);
  auto it = varFlagsTable().find(fn);
  return it == varFlagsTable().end() ? std::vector<bool>{} : it->second;
}

Type funcValueType(const std::vector<Type>& withs, const std::vector<Type>& params,
                   const std::vector<bool>& varParams, Type result) {
  std::vector<Type> ps{Type::token()};
  ps.insert(ps.end(), withs.begin(), withs.end());
  ps.insert(ps.end(), params.begin(), params.end());
  std::vector<Type> rs{Type::token(), result ? result : Type::null()};
  bool anyVar = false;
  for (size_t i = 0; i < varParams.size() && i < params.size(); ++i)
    if (varParams[i]) {
      rs.push_back(params[i]);
      anyVar = true;
    }
  Type t = Type::func(ps, rs);
  if (anyVar) {
    // Which parameters are `var` is not part of the GIR type; remember it
    // (with-parameters are never `var`).
    std::vector<bool> flags(withs.size(), false);
    flags.insert(flags.end(), varParams.begin(), varParams.end());
    std::lock_guard<std::mutex> lock(varFlagsMu);
    varFlagsTable().emplace(t, flags);
  }
  return t;
}

bool splitFuncValueType(Type t, std::vector<Type>& params, Type& result, size_t& varResults) {
  if (!t || t.kind() != TypeKind::Func) return false;
  const auto& ps = t.elements();
  const auto& rs = t.funcResults();
  size_t p0 = !ps.empty() && ps[0].isToken() ? 1 : 0;
  size_t r0 = !rs.empty() && rs[0].isToken() ? 1 : 0;
  params.assign(ps.begin() + long(p0), ps.end());
  result = rs.size() > r0 ? rs[r0] : Type::null();
  varResults = rs.size() > r0 + 1 ? rs.size() - r0 - 1 : 0;
  return true;
}

std::string typeListName(const std::vector<Type>& ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + camelTypeName(ts[i]);
  return s + ")";
}

size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closestName(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t bestD = std::max<size_t>(1, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    if (c == name || c.empty()) continue;
    size_t d = editDistance(name, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best;
}

std::vector<const StdlibEntry*> builtinOverloads(const Binding& b) {
  std::vector<const StdlibEntry*> out = stdlibOverloads(b.module, b.name);
  if (b.withGlobal)
    for (const StdlibEntry* e : stdlibOverloads("", b.name)) out.push_back(e);
  return out;
}

}  // namespace sema
}  // namespace xacc::camel
