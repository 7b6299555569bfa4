// Module `time` (spec 15.1): wall-clock seconds since the Unix epoch, and
// formatting/parsing of timestamps with C strftime/strptime codes in UTC.
// `now` is nondeterministic; strftime/strptime are pure functions of their
// arguments (they never consult the local time zone).
#include <time.h>

#include <chrono>
#include <cmath>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

void registerTime() {
  define({.module = "time",
          .name = "now",
          .gir = "time::now",
          .params = 0,
          .signature = "(): float",
          .effectful = true,
          .deterministic = false,
          .summary = "wall-clock seconds since the Unix epoch (sub-second precision)",
          .infer =
              [](const Types&, Types& r, std::string&) {
                r = {Type::f64()};
                return true;
              },
          .fn =
              [](Interpreter&, const Node&, Datums&, Datums& r) {
                auto t = std::chrono::system_clock::now().time_since_epoch();
                r.push_back(Datum::real(std::chrono::duration<double>(t).count()));
                return true;
              }});

  define({.module = "time",
          .name = "strftime",
          .gir = "time::strftime",
          .params = 2,
          .signature = "(t: float, fmt: string): string",
          .summary = "formats timestamp t (UTC) with C strftime codes",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(floatLike(a[0]), a, 0, "the timestamp", "a float", err) ||
                    !want(strLike(a[1]), a, 1, "the format", "a string", err))
                  return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                double t;
                const std::string* f;
                if (!getFloat(I, n, "time::strftime", a[0], t) ||
                    !getStr(I, n, "time::strftime", a[1], f))
                  return false;
                double secs = std::floor(t);
                struct tm tm {};
                time_t tt = time_t(secs);
                if (!std::isfinite(t) || double(tt) != secs || !gmtime_r(&tt, &tm))
                  return fail(
                      I, n, RuntimeDiag::InvalidArgument,
                      {"time::strftime", "timestamp " + camelRepr(a[0]) + " is out of range"});
                std::string out;
                // strftime returns 0 both for "too small" and for an empty result.
                for (size_t cap = 256; cap <= (size_t(1) << 20) && !f->empty(); cap *= 4) {
                  out.resize(cap);
                  size_t len = ::strftime(out.data(), cap, f->c_str(), &tm);
                  if (len > 0) {
                    out.resize(len);
                    break;
                  }
                  out.clear();
                }
                r.push_back(Datum::string(std::move(out)));
                return true;
              }});

  define({.module = "time",
          .name = "strptime",
          .gir = "time::strptime",
          .params = 2,
          .signature = "(fmt: string, text: string): float",
          .summary = "parses text (UTC) with C strptime codes into a timestamp",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the format", "a string", err) ||
                    !want(strLike(a[1]), a, 1, "the text", "a string", err))
                  return false;
                r = {Type::f64()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string *f, *text;
                if (!getStr(I, n, "time::strptime", a[0], f) ||
                    !getStr(I, n, "time::strptime", a[1], text))
                  return false;
                struct tm tm {};
                tm.tm_mday = 1;  // a format without a day means the first
                const char* end = ::strptime(text->c_str(), f->c_str(), &tm);
                while (end && (*end == ' ' || *end == '\t' || *end == '\n')) ++end;
                if (!end || *end != '\0' || end != text->c_str() + text->size())
                  return fail(I, n, RuntimeDiag::TimeParseError, {*text, *f});
                r.push_back(Datum::real(double(timegm(&tm))));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
