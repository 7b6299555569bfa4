// Node attributes: compile-time constants attached to nodes (a constant's value,
// a struct field name, a callee symbol, an ATen scalar argument). An AttrDict is
// kept sorted by name so printing, hashing and comparison are canonical.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "xacc/ir/Type.h"

namespace xacc::ir {

/// A reference to a graph by name (`@main`).
struct SymbolRef {
  std::string name;
  bool operator==(const SymbolRef& o) const { return name == o.name; }
};

class Attr {
public:
  enum class Kind : uint8_t { None, Int, Float, Bool, Str, Type, Symbol, Array };
  using Array = std::vector<Attr>;

  Attr() = default;
  static Attr none() { return Attr(); }
  static Attr integer(int64_t v) { Attr a; a.v_ = v; return a; }
  static Attr real(double v) { Attr a; a.v_ = v; return a; }
  static Attr boolean(bool v) { Attr a; a.v_ = v; return a; }
  static Attr string(std::string v) { Attr a; a.v_ = std::move(v); return a; }
  static Attr type(Type t) { Attr a; a.v_ = t; return a; }
  static Attr symbol(std::string name) { Attr a; a.v_ = SymbolRef{std::move(name)}; return a; }
  static Attr array(Array items) {
    Attr a;
    a.v_ = std::make_shared<const Array>(std::move(items));
    return a;
  }

  Kind kind() const { return Kind(v_.index()); }
  bool isNone() const { return kind() == Kind::None; }
  int64_t getInt() const { return std::get<int64_t>(v_); }
  double getFloat() const { return std::get<double>(v_); }
  bool getBool() const { return std::get<bool>(v_); }
  const std::string& getStr() const { return std::get<std::string>(v_); }
  Type getType() const { return std::get<Type>(v_); }
  const std::string& getSymbol() const { return std::get<SymbolRef>(v_).name; }
  const Array& getArray() const { return *std::get<std::shared_ptr<const Array>>(v_); }

  bool operator==(const Attr& o) const;
  bool operator!=(const Attr& o) const { return !(*this == o); }
  size_t hash() const;
  /// Text form; parses back to an equal Attr.
  std::string str() const;

private:
  std::variant<std::monostate, int64_t, double, bool, std::string, Type, SymbolRef,
               std::shared_ptr<const Array>>
      v_;
};

/// Sorted (name, value) pairs.
class AttrDict {
public:
  void set(std::string_view name, Attr value);
  const Attr* get(std::string_view name) const;
  bool has(std::string_view name) const { return get(name) != nullptr; }
  bool erase(std::string_view name);
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<std::pair<std::string, Attr>>& items() const { return items_; }
  bool operator==(const AttrDict& o) const { return items_ == o.items_; }
  size_t hash() const;

  int64_t getInt(std::string_view name, int64_t dflt) const;
  bool getBool(std::string_view name, bool dflt) const;
  std::string getStr(std::string_view name, std::string dflt = {}) const;

private:
  std::vector<std::pair<std::string, Attr>> items_;
};

/// Formats a double so that it parses back to the same bits and is never
/// mistaken for an integer ("1.0", "1e+300", "inf", "-inf", "nan").
std::string formatDouble(double v);

}  // namespace xacc::ir
