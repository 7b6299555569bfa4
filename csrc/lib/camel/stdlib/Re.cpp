// Module `re` (spec 15.10): `test(pattern, text)` is true when the ECMAScript
// regular expression matches anywhere in text. Patterns run on the linear-time
// matcher of Regex.h (compiled patterns cached per thread); only patterns with
// backreferences, which no automaton can match, use std::regex, and then only
// on texts short enough for its per-character recursion (kMaxBackrefText).
// An invalid pattern, or a text too long for a backreference, is a located E3008.
#include <memory>
#include <regex>
#include <unordered_map>

#include "Regex.h"
#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

constexpr size_t kCacheSize = 64;
constexpr size_t kMaxBackrefText = 2000;

struct Compiled {
  regex::Program program;
  std::unique_ptr<std::regex> backtracking;  ///< only for patterns with backreferences
};

/// The compiled `pattern`, or null with `err` set.
const Compiled* compiled(const std::string& pattern, std::string& err) {
  thread_local std::unordered_map<std::string, Compiled> cache;
  auto it = cache.find(pattern);
  if (it != cache.end()) return &it->second;
  Compiled c;
  if (!regex::compile(pattern, c.program, err)) return nullptr;
  if (c.program.hasBackreference) {
    // std::regex reports bad patterns by throwing; this is the library boundary.
    try {
      c.backtracking = std::make_unique<std::regex>(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      err = e.what();
      return nullptr;
    }
  }
  if (cache.size() >= kCacheSize) cache.clear();
  return &cache.emplace(pattern, std::move(c)).first->second;
}

}  // namespace

void registerRe() {
  define({.module = "re",
          .name = "test",
          .gir = "re::test",
          .params = 2,
          .signature = "(pattern: string, text: string): bool",
          .summary = "whether the ECMAScript pattern matches anywhere in text",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the pattern", "a string", err) ||
                    !want(strLike(a[1]), a, 1, "the text", "a string", err))
                  return false;
                r = {Type::boolean()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string *pattern, *text;
                if (!getStr(I, n, "re::test", a[0], pattern) ||
                    !getStr(I, n, "re::test", a[1], text))
                  return false;
                std::string err;
                const Compiled* c = compiled(*pattern, err);
                if (!c) return fail(I, n, RuntimeDiag::RegexError, {*pattern, err});
                if (!c->backtracking) {
                  r.push_back(Datum::boolean(regex::search(c->program, *text)));
                  return true;
                }
                if (text->size() > kMaxBackrefText)
                  return fail(I, n, RuntimeDiag::RegexError,
                              {*pattern, "backreferences are only supported on texts of at most " +
                                             std::to_string(kMaxBackrefText) + " bytes"});
                bool found;
                try {
                  found = std::regex_search(*text, *c->backtracking);
                } catch (const std::regex_error& e) {
                  return fail(I, n, RuntimeDiag::RegexError, {*pattern, e.what()});
                }
                r.push_back(Datum::boolean(found));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
