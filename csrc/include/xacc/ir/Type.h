// GIR types. Every type is interned: two Types are equal iff their storage
// pointers are equal, so comparisons and hashing are pointer operations. The
// canonical text of a type (what the printer writes) is its interning key.
//
//   i32 i64 f32 f64 bool str null any pyobj !token
//   list<T>  tuple<T, ...>  struct<{name: T, ...}>  func<(T, ...) -> R>
//   tensor<f32, [2, ?, s0], cpu>   tensor<f32, *, cpu>  (unranked)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace xacc::ir {

enum class TypeKind : uint8_t {
  Int, Float, Bool, Str, Null, Any, PyObj, Token, List, Tuple, Struct, Func, Tensor
};

/// Element types of tensors, named as in the text form.
enum class DType : uint8_t { F16, BF16, F32, F64, I8, I16, I32, I64, U8, Bool, C64, C128 };
const char* dtypeName(DType d);
bool parseDType(std::string_view name, DType& out);
bool isFloatingDType(DType d);

/// One tensor dimension: a static size, an anonymous dynamic size (`?`) or a
/// named symbolic size (`s0`). Named symbols equal each other by name.
struct Dim {
  static constexpr int64_t kDynamic = -1;
  int64_t size = kDynamic;
  std::string sym;  ///< non-empty for a named symbolic dim

  static Dim fixed(int64_t n) { return Dim{n, {}}; }
  static Dim dynamic() { return Dim{kDynamic, {}}; }
  static Dim symbol(std::string s) { return Dim{kDynamic, std::move(s)}; }
  bool isStatic() const { return size >= 0; }
  bool operator==(const Dim& o) const { return size == o.size && sym == o.sym; }
};

struct TypeStorage;

class Type {
public:
  Type() = default;
  explicit Type(const TypeStorage* s) : s_(s) {}

  // Singletons.
  static Type i64();
  static Type i32();
  static Type f64();
  static Type f32();
  static Type boolean();
  static Type string();
  static Type null();
  static Type any();
  static Type pyobj();
  /// A Python object that converts to `target` (Camel `PyObject<T>`): `pyobj<T>`.
  static Type pyobj(Type target);
  static Type token();
  // Composites (interned on creation).
  static Type list(Type elem);
  static Type tuple(const std::vector<Type>& elems);
  static Type structure(const std::vector<std::pair<std::string, Type>>& fields);
  static Type func(const std::vector<Type>& params, const std::vector<Type>& results);
  static Type tensor(DType dtype, const std::vector<Dim>& dims, std::string device = "cpu");
  static Type unrankedTensor(DType dtype, std::string device = "cpu");

  TypeKind kind() const;
  bool isNull() const { return s_ == nullptr; }
  explicit operator bool() const { return s_ != nullptr; }
  bool isInt() const { return s_ && kind() == TypeKind::Int; }
  bool isFloat() const { return s_ && kind() == TypeKind::Float; }
  bool isNumeric() const { return isInt() || isFloat(); }
  bool isToken() const { return s_ && kind() == TypeKind::Token; }
  bool isTensor() const { return s_ && kind() == TypeKind::Tensor; }
  bool isAny() const { return s_ && kind() == TypeKind::Any; }

  unsigned bitWidth() const;                 ///< Int/Float
  Type elementType() const;                  ///< List; PyObj: the target type (null when plain)
  const std::vector<Type>& elements() const; ///< Tuple elems, Struct field types, Func params
  const std::vector<std::string>& fieldNames() const;  ///< Struct
  const std::vector<Type>& funcResults() const;        ///< Func
  int fieldIndex(std::string_view name) const;         ///< Struct, -1 if absent
  // Tensor.
  DType dtype() const;
  bool ranked() const;
  const std::vector<Dim>& dims() const;
  const std::string& device() const;
  /// Total element count when every dim is static, otherwise -1.
  int64_t staticNumel() const;

  /// Canonical text; identical to what the printer writes.
  const std::string& str() const;

  bool operator==(Type o) const { return s_ == o.s_; }
  bool operator!=(Type o) const { return s_ != o.s_; }
  const TypeStorage* storage() const { return s_; }

private:
  const TypeStorage* s_ = nullptr;
};

/// True when a value of type `actual` may flow where `expected` is declared:
/// equal types, `any` on either side, or tensors whose dtype and device agree
/// and whose dims agree wherever both are static.
bool typeCompatible(Type expected, Type actual);

}  // namespace xacc::ir

template <>
struct std::hash<xacc::ir::Type> {
  size_t operator()(xacc::ir::Type t) const noexcept {
    return std::hash<const void*>()(t.storage());
  }
};
