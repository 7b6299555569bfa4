// Module `sys` (spec 15.11): environment variables and the working directory.
// Both read process state that differs between compile time and run time, so
// they are nondeterministic (never folded) and effectful.
#include <cstdlib>
#include <filesystem>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

void registerSys() {
  define({.module = "sys",
          .name = "get_env",
          .gir = "sys::get_env",
          .params = 1,
          .signature = "(name: string): string",
          .effectful = true,
          .deterministic = false,
          .summary = "value of an environment variable, or \"\" if unset",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the name", "a string", err)) return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* name;
                if (!getStr(I, n, "sys::get_env", a[0], name)) return false;
                const char* v = std::getenv(name->c_str());
                r.push_back(Datum::string(v ? v : ""));
                return true;
              }});
  define({.module = "sys",
          .name = "get_cwd",
          .gir = "sys::get_cwd",
          .params = 0,
          .signature = "(): string",
          .effectful = true,
          .deterministic = false,
          .summary = "the current working directory",
          .infer =
              [](const Types&, Types& r, std::string&) {
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums&, Datums& r) {
                std::error_code ec;
                auto cwd = std::filesystem::current_path(ec);
                if (ec)
                  return fail(I, n, RuntimeDiag::IoError, {"sys::get_cwd", ".", ec.message()});
                r.push_back(Datum::string(cwd.string()));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
