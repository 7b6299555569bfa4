// Global built-ins of spec 14.1 and 14.2: the conversions int/i64/i32/float/
// f64/f32/string, print/println (plain and with a format), input, sleep and
// exit, plus the `io` module's re-exports. Output goes through
// Interpreter::write so runtimes and tests capture it; input reads standard
// input unbuffered (one byte at a time) so that it interleaves correctly with
// os::get_char and friends.
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

std::string_view trimmed(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

/// Decimal integer with optional sign and surrounding whitespace.
bool parseInt(std::string_view text, int64_t& out) {
  std::string_view s = trimmed(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 10);
  return ec == std::errc() && p == s.data() + s.size();
}

/// Decimal or exponent real (also inf/nan) with optional sign and whitespace.
bool parseFloat(std::string_view text, double& out) {
  std::string_view s = trimmed(text);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

/// Converts to a 64-bit int per spec 14.1; `bits` = 32 narrows (ints wrap like
/// a C++ cast; floats and strings out of range are errors).
bool toInt(Interpreter& I, const Node& n, const std::string& fn, const Datum& x, unsigned bits,
           int64_t& out) {
  const char* target = bits == 32 ? "i32" : "int";
  double lo = bits == 32 ? -2147483648.0 : -9223372036854775808.0;
  double hi = bits == 32 ? 2147483648.0 : 9223372036854775808.0;
  switch (x.kind()) {
    case DKind::Int: out = x.asInt(); break;
    case DKind::Float: {
      double t = std::trunc(x.asFloat());
      if (!(t >= lo && t < hi))
        return fail(I, n, RuntimeDiag::InvalidConversion,
                    {fn, "float " + camelRepr(x), std::string(target) + " (out of range)"});
      out = int64_t(t);
      return true;
    }
    case DKind::Str:
      if (!parseInt(x.asStr(), out) || (bits == 32 && (out < INT32_MIN || out > INT32_MAX)))
        return fail(I, n, RuntimeDiag::InvalidConversion,
                    {fn, "string " + quoted(x.asStr()), target});
      return true;
    default: return kindFail(I, n, fn, "a number or string", x);
  }
  if (bits == 32) out = int64_t(int32_t(uint32_t(uint64_t(out))));
  return true;
}

bool toFloat(Interpreter& I, const Node& n, const std::string& fn, const Datum& x, double& out) {
  switch (x.kind()) {
    case DKind::Int: out = double(x.asInt()); return true;
    case DKind::Float: out = x.asFloat(); return true;
    case DKind::Str:
      if (!parseFloat(x.asStr(), out))
        return fail(I, n, RuntimeDiag::InvalidConversion,
                    {fn, "string " + quoted(x.asStr()), "float"});
      return true;
    default: return kindFail(I, n, fn, "a number or string", x);
  }
}

InferRule convertible(Type result) {
  return [result](const Types& a, Types& r, std::string& err) {
    if (!want(numLike(a[0]) || strLike(a[0]), a, 0, "the argument", "a number or string", err))
      return false;
    r = {result};
    return true;
  };
}

void defineIntConversion(const std::string& name, unsigned bits) {
  Type t = bits == 32 ? Type::i32() : Type::i64();
  define({.name = name,
          .gir = name,
          .params = 1,
          .signature =
              "(x: i32 | int | f32 | float | string): " + std::string(bits == 32 ? "i32" : "int"),
          .summary = "integer conversion: floats truncate toward zero, strings parse as decimal",
          .infer = convertible(t),
          .fn = [name, bits](Interpreter& I, const Node& n, Datums& a, Datums& r) {
            int64_t v;
            if (!toInt(I, n, name, a[0], bits, v)) return false;
            r.push_back(Datum::integer(v));
            return true;
          }});
}

void defineFloatConversion(const std::string& name, unsigned bits) {
  Type t = bits == 32 ? Type::f32() : Type::f64();
  define({.name = name,
          .gir = name,
          .params = 1,
          .signature =
              "(x: i32 | int | f32 | float | string): " + std::string(bits == 32 ? "f32" : "float"),
          .summary = "float conversion; strings are parsed",
          .infer = convertible(t),
          .fn = [name, bits](Interpreter& I, const Node& n, Datums& a, Datums& r) {
            double v;
            if (!toFloat(I, n, name, a[0], v)) return false;
            r.push_back(Datum::real(bits == 32 ? double(float(v)) : v));
            return true;
          }});
}

std::string joinedRepr(const Datums& a, size_t from) {
  std::string s;
  for (size_t i = from; i < a.size(); ++i) {
    if (i > from) s += ' ';
    s += camelRepr(a[i]);
  }
  return s;
}

void definePrint(const std::string& name, bool newline) {
  define({.name = name,
          .gir = name,
          .params = kVariadic,
          .signature = "(args: any…): T0",
          .effectful = true,
          .summary =
              newline
                  ? "prints the arguments separated by spaces, then a newline; returns the first"
                  : "prints the arguments separated by spaces; returns the first",
          .infer =
              [](const Types& a, Types& r, std::string&) {
                r = {a.empty() ? Type::null() : a[0]};
                return true;
              },
          .fn =
              [newline](Interpreter& I, const Node&, Datums& a, Datums& r) {
                std::string s = joinedRepr(a, 0);
                if (newline) s += '\n';
                I.write(s);
                r.push_back(a.empty() ? Datum() : a[0]);
                return true;
              }});
  define({.name = name,
          .gir = name + ".fmt",
          .withParams = 1,
          .params = kVariadic,
          .signature = "<fmt: string>(args: any…): string",
          .effectful = true,
          .summary = newline ? "prints format<args…>(fmt) and a newline; returns the text"
                             : "prints format<args…>(fmt); returns the text",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (a.empty()) {
                  err = "takes a format string as with-argument";
                  return false;
                }
                if (!want(strLike(a[0]), a, 0, "the format", "a string", err)) return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [newline](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* f;
                if (!getStr(I, n, "print", a[0], f)) return false;
                std::string out, error;
                Datums rest(a.begin() + 1, a.end());
                if (!camelFormat(*f, rest, out, error))
                  return fail(I, n, RuntimeDiag::FormatError, {error, *f});
                I.write(newline ? out + "\n" : out);
                r.push_back(Datum::string(std::move(out)));
                return true;
              }});
}

}  // namespace

void registerCore() {
  defineIntConversion("int", 64);
  defineIntConversion("i64", 64);
  defineIntConversion("i32", 32);
  defineFloatConversion("float", 64);
  defineFloatConversion("f64", 64);
  defineFloatConversion("f32", 32);
  define({.name = "string",
          .gir = "string",
          .params = 1,
          .signature = "(x: number | string): string",
          .summary = "decimal text; floats fixed with six decimals",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(numLike(a[0]) || strLike(a[0]), a, 0, "the argument",
                          "a number or string", err))
                  return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                DKind k = a[0].kind();
                if (k != DKind::Int && k != DKind::Float && k != DKind::Str)
                  return kindFail(I, n, "string", "a number or string", a[0]);
                r.push_back(k == DKind::Str ? a[0] : Datum::string(camelToString(a[0])));
                return true;
              }});

  definePrint("print", false);
  definePrint("println", true);

  define({.name = "input",
          .gir = "input",
          .params = 1,
          .signature = "(prompt: string): string",
          .effectful = true,
          .deterministic = false,
          .summary = "prints the prompt and reads one line of standard input (without the newline)",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the prompt", "a string", err)) return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* prompt;
                if (!getStr(I, n, "input", a[0], prompt)) return false;
                if (!prompt->empty()) I.write(*prompt);
                std::fflush(stdout);
                std::string line;
                char c;
                while (::read(0, &c, 1) == 1 && c != '\n') line += c;
                if (!line.empty() && line.back() == '\r') line.pop_back();
                r.push_back(Datum::string(std::move(line)));
                return true;
              }});

  define({.name = "sleep",
          .gir = "sleep",
          .params = 1,
          .signature = "(ms: int): void",
          .effectful = true,
          .summary = "suspends for `ms` milliseconds",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(intLike(a[0]), a, 0, "the duration", "an int (milliseconds)", err))
                  return false;
                r = {Type::null()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                int64_t ms;
                if (!getInt(I, n, "sleep", a[0], ms)) return false;
                if (ms < 0)
                  return fail(I, n, RuntimeDiag::InvalidArgument,
                              {"sleep", "negative duration " + std::to_string(ms) + " ms"});
                std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                r.push_back(Datum());
                return true;
              }});

  define({.name = "exit",
          .gir = "exit",
          .params = 1,
          .signature = "(code: int): void",
          .effectful = true,
          .summary = "ends the program with status `code` (see Note [exit()])",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(intLike(a[0]), a, 0, "the status", "an int", err)) return false;
                r = {Type::null()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums&) {
                int64_t code;
                if (!getInt(I, n, "exit", a[0], code)) return false;
                ExitRequest::request(int(code));
                return fail(I, n, RuntimeDiag::ExitRequested, {std::to_string(code)});
              }});

  // `io` exists for symmetry (spec 15.16).
  alias("io", "print", "print");
  alias("io", "print", "print.fmt");
  alias("io", "println", "println");
  alias("io", "println", "println.fmt");
  alias("io", "input", "input");
}

}  // namespace xacc::camel::stdlib
