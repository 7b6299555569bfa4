// Module `math` (spec 15.3): abs (int -> int, float -> float), sqrt (int or
// float -> float), exp/round/ceil/floor on floats, and bin/oct/hex base
// conversions written like Python's (`0b101`, `0o17`, `0xFF`; a negative number
// gets a leading `-`; hex digits are upper case as in the reference).
#include <cmath>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

void defineFloatFn(const std::string& name, double (*f)(double), const std::string& summary,
                   bool acceptInt) {
  std::string gir = "math::" + name;
  define({.module = "math",
          .name = name,
          .gir = gir,
          .params = 1,
          .signature = acceptInt ? "(x: int | float): float" : "(x: float): float",
          .summary = summary,
          .infer =
              [acceptInt](const Types& a, Types& r, std::string& err) {
                if (!want(acceptInt ? numLike(a[0]) : floatLike(a[0]), a, 0, "the argument",
                          acceptInt ? "an int or a float" : "a float", err))
                  return false;
                r = {Type::f64()};
                return true;
              },
          .fn =
              [f, gir, acceptInt](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                double x;
                if (!(acceptInt ? getNum(I, n, gir, a[0], x) : getFloat(I, n, gir, a[0], x)))
                  return false;
                r.push_back(Datum::real(f(x)));
                return true;
              }});
}

void defineBase(const std::string& name, int base, const char* prefix) {
  std::string gir = "math::" + name;
  define({.module = "math",
          .name = name,
          .gir = gir,
          .params = 1,
          .signature = "(n: int): string",
          .summary = std::string("base-") + std::to_string(base) + " text with prefix " + prefix,
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(intLike(a[0]), a, 0, "the argument", "an int", err)) return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [gir, base, prefix](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                int64_t v;
                if (!getInt(I, n, gir, a[0], v)) return false;
                uint64_t m = v < 0 ? uint64_t(0) - uint64_t(v) : uint64_t(v);
                std::string digits;
                do {
                  digits.insert(digits.begin(), "0123456789ABCDEF"[m % unsigned(base)]);
                  m /= unsigned(base);
                } while (m);
                r.push_back(Datum::string((v < 0 ? "-" : "") + std::string(prefix) + digits));
                return true;
              }});
}

}  // namespace

void registerMath() {
  define({.module = "math",
          .name = "abs",
          .gir = "math::abs",
          .params = 1,
          .signature = "(x: int | float): int | float",
          .summary = "absolute value (int -> int, float -> float)",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(numLike(a[0]), a, 0, "the argument", "an int or a float", err))
                  return false;
                r = {a[0]};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                if (a[0].kind() == DKind::Float) {
                  r.push_back(Datum::real(std::fabs(a[0].asFloat())));
                  return true;
                }
                int64_t v;
                if (!getInt(I, n, "math::abs", a[0], v)) return false;
                if (v == INT64_MIN)
                  return fail(I, n, RuntimeDiag::InvalidArgument,
                              {"math::abs", "the absolute value of " + std::to_string(v) +
                                                " does not fit in int"});
                r.push_back(Datum::integer(v < 0 ? -v : v));
                return true;
              }});
  defineFloatFn(
      "sqrt", [](double x) { return std::sqrt(x); }, "square root", true);
  defineFloatFn(
      "exp", [](double x) { return std::exp(x); }, "e to the power x", false);
  defineFloatFn(
      "round", [](double x) { return std::round(x); },
      "nearest integral value (halves away from zero)", false);
  defineFloatFn(
      "ceil", [](double x) { return std::ceil(x); }, "smallest integral value not below x", false);
  defineFloatFn(
      "floor", [](double x) { return std::floor(x); }, "largest integral value not above x", false);
  defineBase("bin", 2, "0b");
  defineBase("oct", 8, "0o");
  defineBase("hex", 16, "0x");
}

}  // namespace xacc::camel::stdlib
