// String built-ins of spec 14.3: format<args…>(fmt) on the fmt library's
// mini-language, join<sep>(parts), len (of a string or an array: one builtin,
// dispatching on the operand type) and the substring form of contains; and
// `str.at`, the builtin `s[i]` lowers to (spec 9.3: the one-byte string at i,
// an index outside [0, len) is a run-time error, as for arrays). It has no
// table row: Camel code reaches it only through indexing.
#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

void registerStrings() {
  define({.name = "format",
          .gir = "format",
          .withParams = kVariadic,
          .params = 1,
          .signature = "<args: any…>(fmt: string): string",
          .summary = "replaces {} placeholders of fmt with the with-arguments (fmt mini-language)",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (a.empty()) {
                  err = "takes the format string as its (last) ordinary argument";
                  return false;
                }
                if (!want(strLike(a.back()), a, a.size() - 1, "the format", "a string", err))
                  return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* f;
                if (!getStr(I, n, "format", a.back(), f)) return false;
                Datums args(a.begin(), a.end() - 1);
                std::string out, error;
                if (!camelFormat(*f, args, out, error))
                  return fail(I, n, RuntimeDiag::FormatError, {error, *f});
                r.push_back(Datum::string(std::move(out)));
                return true;
              }});

  define({.name = "join",
          .gir = "join",
          .withParams = 1,
          .params = 1,
          .signature = "<sep: string>(parts: T[]): string",
          .summary = "concatenates the printed elements with sep between them",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the separator", "a string", err) ||
                    !want(listLike(a[1]), a, 1, "the parts", "an array", err))
                  return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* sep;
                std::vector<Datum>* parts;
                if (!getStr(I, n, "join", a[0], sep) || !getList(I, n, "join", a[1], parts))
                  return false;
                std::string s;
                for (size_t i = 0; i < parts->size(); ++i) {
                  if (i) s += *sep;
                  s += camelRepr((*parts)[i]);
                }
                r.push_back(Datum::string(std::move(s)));
                return true;
              }});

  define({.name = "len",
          .gir = "len",
          .params = 1,
          .signature = "(s: string | xs: T[]): int",
          .summary = "byte length of a string, element count of an array",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]) || listLike(a[0]), a, 0, "the argument",
                          "a string or an array", err))
                  return false;
                r = {Type::i64()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                if (a[0].kind() == DKind::Str)
                  r.push_back(Datum::integer(int64_t(a[0].asStr().size())));
                else if (a[0].kind() == DKind::List)
                  r.push_back(Datum::integer(int64_t(ir::listObj(a[0])->size())));
                else
                  return kindFail(I, n, "len", "a string or an array", a[0]);
                return true;
              }});

  define({.name = "contains",
          .gir = "contains",
          .params = 2,
          .signature = "(s: string, sub: string): bool",
          .summary = "substring test",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (listLike(a[1]) && !a[1].isAny()) {
                  err = "the substring form takes two strings; membership in an array is "
                        "contains<item>(xs) (builtin contains.array)";
                  return false;
                }
                if (!want(strLike(a[0]), a, 0, "the string", "a string", err) ||
                    !want(strLike(a[1]), a, 1, "the substring", "a string", err))
                  return false;
                r = {Type::boolean()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string *s, *sub;
                if (!getStr(I, n, "contains", a[0], s) || !getStr(I, n, "contains", a[1], sub))
                  return false;
                r.push_back(Datum::boolean(s->find(*sub) != std::string::npos));
                return true;
              }});

  ir::Builtin at;
  at.name = kStrAtBuiltin;
  at.summary = "s[i]: the one-byte string at byte i";
  at.infer = [](const Types& a, Types& r, std::string& err) {
    if (a.size() != 2) {
      err = "takes 2 arguments";
      return false;
    }
    if (!want(strLike(a[0]), a, 0, "the indexed value", "a string", err) ||
        !want(intLike(a[1]), a, 1, "the index", "an int", err))
      return false;
    r = {Type::string()};
    return true;
  };
  at.fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    const std::string* s;
    int64_t i;
    if (!getStr(I, n, "string index", a[0], s) || !getInt(I, n, "string index", a[1], i)) return false;
    if (i < 0 || uint64_t(i) >= s->size())
      return fail(I, n, RuntimeDiag::StringIndexOutOfRange, {std::to_string(i), std::to_string(s->size())});
    r.push_back(Datum::string(std::string(1, (*s)[size_t(i)])));
    return true;
  };
  ir::BuiltinRegistry::get().add(std::move(at));
}

}  // namespace xacc::camel::stdlib
