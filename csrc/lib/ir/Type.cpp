// Interning of GIR types. The canonical text is computed once per distinct type
// and used as the interning key; storage lives for the life of the process.
#include "xacc/ir/Type.h"

#include <cassert>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace xacc::ir {

struct TypeStorage {
  TypeKind kind;
  uint8_t bits = 0;
  std::vector<Type> elems;           // list elem (1), tuple elems, struct fields, func params
  std::vector<std::string> names;    // struct field names
  std::vector<Type> results;         // func results
  DType dtype = DType::F32;
  bool ranked = true;
  std::vector<Dim> dims;
  std::string device;
  std::string text;
};

namespace {

struct Uniquer {
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<TypeStorage>> table;
};

Uniquer& uniquer() {
  static Uniquer* u = new Uniquer();  // leaked on purpose: types outlive static dtors
  return *u;
}

std::string dimText(const Dim& d) {
  if (!d.sym.empty()) return d.sym;
  if (d.size < 0) return "?";
  return std::to_string(d.size);
}

void computeText(TypeStorage& s) {
  std::string& t = s.text;
  switch (s.kind) {
    case TypeKind::Int: t = "i" + std::to_string(s.bits); break;
    case TypeKind::Float: t = "f" + std::to_string(s.bits); break;
    case TypeKind::Bool: t = "bool"; break;
    case TypeKind::Str: t = "str"; break;
    case TypeKind::Null: t = "null"; break;
    case TypeKind::Any: t = "any"; break;
    case TypeKind::PyObj: t = s.elems.empty() ? "pyobj" : "pyobj<" + s.elems[0].str() + ">"; break;
    case TypeKind::Token: t = "!token"; break;
    case TypeKind::List: t = "list<" + s.elems[0].str() + ">"; break;
    case TypeKind::Tuple:
      t = "tuple<";
      for (size_t i = 0; i < s.elems.size(); ++i) t += (i ? ", " : "") + s.elems[i].str();
      t += ">";
      break;
    case TypeKind::Struct:
      t = "struct<{";
      for (size_t i = 0; i < s.elems.size(); ++i)
        t += (i ? ", " : "") + s.names[i] + ": " + s.elems[i].str();
      t += "}>";
      break;
    case TypeKind::Func:
      t = "func<(";
      for (size_t i = 0; i < s.elems.size(); ++i) t += (i ? ", " : "") + s.elems[i].str();
      t += ") -> ";
      if (s.results.size() == 1) {
        t += s.results[0].str();
      } else {
        t += "(";
        for (size_t i = 0; i < s.results.size(); ++i) t += (i ? ", " : "") + s.results[i].str();
        t += ")";
      }
      t += ">";
      break;
    case TypeKind::Tensor:
      t = std::string("tensor<") + dtypeName(s.dtype) + ", ";
      if (!s.ranked) {
        t += "*";
      } else {
        t += "[";
        for (size_t i = 0; i < s.dims.size(); ++i) t += (i ? ", " : "") + dimText(s.dims[i]);
        t += "]";
      }
      t += ", " + s.device + ">";
      break;
  }
}

Type intern(TypeStorage s) {
  computeText(s);
  Uniquer& u = uniquer();
  std::lock_guard<std::mutex> lock(u.mu);
  auto it = u.table.find(s.text);
  if (it != u.table.end()) return Type(it->second.get());
  auto owned = std::make_unique<TypeStorage>(std::move(s));
  const TypeStorage* p = owned.get();
  u.table.emplace(p->text, std::move(owned));
  return Type(p);
}

Type simple(TypeKind k, uint8_t bits = 0) {
  TypeStorage s;
  s.kind = k;
  s.bits = bits;
  return intern(std::move(s));
}

}  // namespace

const char* dtypeName(DType d) {
  switch (d) {
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::I8: return "i8";
    case DType::I16: return "i16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "u8";
    case DType::Bool: return "bool";
    case DType::C64: return "c64";
    case DType::C128: return "c128";
  }
  return "f32";
}

bool parseDType(std::string_view n, DType& out) {
  static const std::pair<const char*, DType> table[] = {
      {"f16", DType::F16}, {"bf16", DType::BF16}, {"f32", DType::F32}, {"f64", DType::F64},
      {"i8", DType::I8},   {"i16", DType::I16},   {"i32", DType::I32}, {"i64", DType::I64},
      {"u8", DType::U8},   {"bool", DType::Bool}, {"c64", DType::C64}, {"c128", DType::C128}};
  for (auto& [name, d] : table)
    if (n == name) {
      out = d;
      return true;
    }
  return false;
}

bool isFloatingDType(DType d) {
  return d == DType::F16 || d == DType::BF16 || d == DType::F32 || d == DType::F64;
}

Type Type::i64() { static Type t = simple(TypeKind::Int, 64); return t; }
Type Type::i32() { static Type t = simple(TypeKind::Int, 32); return t; }
Type Type::f64() { static Type t = simple(TypeKind::Float, 64); return t; }
Type Type::f32() { static Type t = simple(TypeKind::Float, 32); return t; }
Type Type::boolean() { static Type t = simple(TypeKind::Bool); return t; }
Type Type::string() { static Type t = simple(TypeKind::Str); return t; }
Type Type::null() { static Type t = simple(TypeKind::Null); return t; }
Type Type::any() { static Type t = simple(TypeKind::Any); return t; }
Type Type::pyobj() { static Type t = simple(TypeKind::PyObj); return t; }
Type Type::pyobj(Type target) {
  if (!target) return pyobj();
  TypeStorage s;
  s.kind = TypeKind::PyObj;
  s.elems = {target};
  return intern(std::move(s));
}
Type Type::token() { static Type t = simple(TypeKind::Token); return t; }

Type Type::list(Type elem) {
  TypeStorage s;
  s.kind = TypeKind::List;
  s.elems = {elem};
  return intern(std::move(s));
}

Type Type::tuple(const std::vector<Type>& elems) {
  TypeStorage s;
  s.kind = TypeKind::Tuple;
  s.elems = elems;
  return intern(std::move(s));
}

Type Type::structure(const std::vector<std::pair<std::string, Type>>& fields) {
  TypeStorage s;
  s.kind = TypeKind::Struct;
  for (auto& [n, t] : fields) {
    s.names.push_back(n);
    s.elems.push_back(t);
  }
  return intern(std::move(s));
}

Type Type::func(const std::vector<Type>& params, const std::vector<Type>& results) {
  TypeStorage s;
  s.kind = TypeKind::Func;
  s.elems = params;
  s.results = results;
  return intern(std::move(s));
}

Type Type::tensor(DType dtype, const std::vector<Dim>& dims, std::string device) {
  TypeStorage s;
  s.kind = TypeKind::Tensor;
  s.dtype = dtype;
  s.dims = dims;
  s.device = std::move(device);
  return intern(std::move(s));
}

Type Type::unrankedTensor(DType dtype, std::string device) {
  TypeStorage s;
  s.kind = TypeKind::Tensor;
  s.dtype = dtype;
  s.ranked = false;
  s.device = std::move(device);
  return intern(std::move(s));
}

TypeKind Type::kind() const { return s_->kind; }
unsigned Type::bitWidth() const { return s_->bits; }
Type Type::elementType() const { return s_->elems.empty() ? Type() : s_->elems[0]; }
const std::vector<Type>& Type::elements() const { return s_->elems; }
const std::vector<std::string>& Type::fieldNames() const { return s_->names; }
const std::vector<Type>& Type::funcResults() const { return s_->results; }
int Type::fieldIndex(std::string_view name) const {
  for (size_t i = 0; i < s_->names.size(); ++i)
    if (s_->names[i] == name) return int(i);
  return -1;
}
DType Type::dtype() const { return s_->dtype; }
bool Type::ranked() const { return s_->ranked; }
const std::vector<Dim>& Type::dims() const { return s_->dims; }
const std::string& Type::device() const { return s_->device; }
int64_t Type::staticNumel() const {
  if (!s_->ranked) return -1;
  int64_t n = 1;
  for (const Dim& d : s_->dims) {
    if (!d.isStatic()) return -1;
    n *= d.size;
  }
  return n;
}
const std::string& Type::str() const {
  static const std::string kNull = "<null-type>";
  return s_ ? s_->text : kNull;
}

bool typeCompatible(Type expected, Type actual) {
  if (expected == actual) return true;
  if (!expected || !actual) return false;
  if (expected.isAny() || actual.isAny()) return true;
  if (expected.kind() != actual.kind()) return false;
  switch (expected.kind()) {
    case TypeKind::Tensor: {
      if (expected.dtype() != actual.dtype() || expected.device() != actual.device()) return false;
      if (!expected.ranked() || !actual.ranked()) return true;
      if (expected.dims().size() != actual.dims().size()) return false;
      for (size_t i = 0; i < expected.dims().size(); ++i) {
        const Dim& a = expected.dims()[i];
        const Dim& b = actual.dims()[i];
        if (a.isStatic() && b.isStatic() && a.size != b.size) return false;
      }
      return true;
    }
    case TypeKind::List: return typeCompatible(expected.elementType(), actual.elementType());
    case TypeKind::Tuple:
    case TypeKind::Func: {
      if (expected.elements().size() != actual.elements().size()) return false;
      for (size_t i = 0; i < expected.elements().size(); ++i)
        if (!typeCompatible(expected.elements()[i], actual.elements()[i])) return false;
      if (expected.kind() == TypeKind::Func) {
        if (expected.funcResults().size() != actual.funcResults().size()) return false;
        for (size_t i = 0; i < expected.funcResults().size(); ++i)
          if (!typeCompatible(expected.funcResults()[i], actual.funcResults()[i])) return false;
      }
      return true;
    }
    case TypeKind::Struct: {
      if (expected.fieldNames() != actual.fieldNames()) return false;
      for (size_t i = 0; i < expected.elements().size(); ++i)
        if (!typeCompatible(expected.elements()[i], actual.elements()[i])) return false;
      return true;
    }
    case TypeKind::PyObj: return true;  // pyobj<T> only says what it converts to
    default: return false;
  }
}

}  // namespace xacc::ir
