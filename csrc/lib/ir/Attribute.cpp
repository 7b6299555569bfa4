// Attribute values, their text form and hashing.
#include "xacc/ir/Attribute.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

#include "xacc/support/Diagnostic.h"

namespace xacc::ir {

std::string formatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

bool Attr::operator==(const Attr& o) const {
  if (kind() != o.kind()) return false;
  switch (kind()) {
    case Kind::Array: return getArray() == o.getArray();
    case Kind::Float: {
      // Bitwise so that nan == nan and -0.0 != 0.0 (CSE must not merge those).
      double a = getFloat(), b = o.getFloat();
      return std::memcmp(&a, &b, sizeof a) == 0;
    }
    default: return v_ == o.v_;
  }
}

size_t Attr::hash() const {
  size_t h = std::hash<size_t>()(size_t(kind())) * 0x9e3779b97f4a7c15ULL;
  switch (kind()) {
    case Kind::None: return h;
    case Kind::Int: return h ^ std::hash<int64_t>()(getInt());
    case Kind::Float: {
      double d = getFloat();
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return h ^ std::hash<uint64_t>()(bits);
    }
    case Kind::Bool: return h ^ size_t(getBool());
    case Kind::Str: return h ^ std::hash<std::string>()(getStr());
    case Kind::Type: return h ^ std::hash<Type>()(getType());
    case Kind::Symbol: return h ^ std::hash<std::string>()(getSymbol());
    case Kind::Array:
      for (const Attr& a : getArray()) h = h * 31 + a.hash();
      return h;
  }
  return h;
}

std::string Attr::str() const {
  switch (kind()) {
    case Kind::None: return "none";
    case Kind::Int: return std::to_string(getInt());
    case Kind::Float: return formatDouble(getFloat());
    case Kind::Bool: return getBool() ? "true" : "false";
    case Kind::Str: return "\"" + support::jsonEscape(getStr()) + "\"";
    case Kind::Type: return "type(" + getType().str() + ")";
    case Kind::Symbol: return "@" + getSymbol();
    case Kind::Array: {
      std::string s = "[";
      const Array& a = getArray();
      for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i].str();
      return s + "]";
    }
  }
  return "none";
}

void AttrDict::set(std::string_view name, Attr value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  if (it != items_.end() && it->first == name) {
    it->second = std::move(value);
    return;
  }
  items_.insert(it, {std::string(name), std::move(value)});
}

const Attr* AttrDict::get(std::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  if (it != items_.end() && it->first == name) return &it->second;
  return nullptr;
}

bool AttrDict::erase(std::string_view name) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& p, std::string_view n) { return p.first < n; });
  if (it == items_.end() || it->first != name) return false;
  items_.erase(it);
  return true;
}

size_t AttrDict::hash() const {
  size_t h = 0;
  for (auto& [n, a] : items_) h = h * 1000003 ^ (std::hash<std::string>()(n) + a.hash());
  return h;
}

int64_t AttrDict::getInt(std::string_view name, int64_t dflt) const {
  const Attr* a = get(name);
  return a && a->kind() == Attr::Kind::Int ? a->getInt() : dflt;
}
bool AttrDict::getBool(std::string_view name, bool dflt) const {
  const Attr* a = get(name);
  return a && a->kind() == Attr::Kind::Bool ? a->getBool() : dflt;
}
std::string AttrDict::getStr(std::string_view name, std::string dflt) const {
  const Attr* a = get(name);
  return a && a->kind() == Attr::Kind::Str ? a->getStr() : dflt;
}

}  // namespace xacc::ir
