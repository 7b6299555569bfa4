// Module `json` (spec 15.9) on nlohmann-json: `encode` writes numbers, booleans,
// strings, null, arrays and tuples (as arrays) and structs (as objects, keys in
// sorted order like the reference), compact or indented; `decode` parses into
// `any`: integers become int (beyond int64 float), objects structs with their
// keys sorted, arrays arrays. Functions and module objects cannot be encoded.
// Nesting deeper than kMaxDepth is an error rather than a stack overflow (an
// array may even contain itself).
#include <nlohmann/json.hpp>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

using Json = nlohmann::json;
constexpr int kMaxDepth = 2000;

bool toJson(const Datum& d, Json& out, int depth, std::string& err) {
  if (depth > kMaxDepth) {
    err = "value nested deeper than " + std::to_string(kMaxDepth) + " levels";
    return false;
  }
  switch (d.kind()) {
    case DKind::Null: out = nullptr; return true;
    case DKind::Int: out = d.asInt(); return true;
    case DKind::Float: out = d.asFloat(); return true;  // NaN and infinities become null
    case DKind::Bool: out = d.asBool(); return true;
    case DKind::Str: out = d.asStr(); return true;
    case DKind::List:
    case DKind::Tuple: {
      out = Json::array();
      ir::ListView items(d);
      for (const Datum& x : *items) {
        Json item;
        if (!toJson(x, item, depth + 1, err)) return false;
        out.push_back(std::move(item));
      }
      return true;
    }
    case DKind::Struct: {
      out = Json::object();
      for (size_t i = 0; i < d.structNames().size(); ++i) {
        Json field;
        if (!toJson(d.structFields()[i], field, depth + 1, err)) return false;
        out[d.structNames()[i]] = std::move(field);
      }
      return true;
    }
    default: err = std::string("cannot encode a ") + kindName(d); return false;
  }
}

bool fromJson(const Json& j, Datum& out, int depth, std::string& err) {
  if (depth > kMaxDepth) {
    err = "document nested deeper than " + std::to_string(kMaxDepth) + " levels";
    return false;
  }
  switch (j.type()) {
    case Json::value_t::null: out = Datum(); return true;
    case Json::value_t::boolean: out = Datum::boolean(j.get<bool>()); return true;
    case Json::value_t::number_integer: out = Datum::integer(j.get<int64_t>()); return true;
    case Json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      out = u <= uint64_t(INT64_MAX) ? Datum::integer(int64_t(u)) : Datum::real(double(u));
      return true;
    }
    case Json::value_t::number_float: out = Datum::real(j.get<double>()); return true;
    case Json::value_t::string: out = Datum::string(j.get<std::string>()); return true;
    case Json::value_t::array: {
      std::vector<Datum> items;
      items.reserve(j.size());
      for (const Json& x : j) {
        Datum item;
        if (!fromJson(x, item, depth + 1, err)) return false;
        items.push_back(std::move(item));
      }
      out = Datum::list(std::move(items));
      return true;
    }
    case Json::value_t::object: {
      std::vector<std::string> names;
      std::vector<Datum> fields;
      for (auto it = j.begin(); it != j.end(); ++it) {
        Datum f;
        if (!fromJson(it.value(), f, depth + 1, err)) return false;
        names.push_back(it.key());
        fields.push_back(std::move(f));
      }
      out = Datum::structure(std::move(names), std::move(fields));
      return true;
    }
    default: err = "unsupported JSON value"; return false;
  }
}

}  // namespace

void registerJson() {
  define({.module = "json",
          .name = "encode",
          .gir = "json::encode",
          .params = 1,
          .signature = "(v: any): string",
          .summary = "JSON text of v: compact, or indented by `indent` spaces",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (a.size() == 2 && !want(intLike(a[1]), a, 1, "the indent", "an int", err))
                  return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                int64_t indent = -1;
                if (a.size() == 2) {
                  if (!getInt(I, n, "json::encode", a[1], indent)) return false;
                  if (indent < 0 || indent > 64)
                    return fail(I, n, RuntimeDiag::InvalidArgument,
                                {"json::encode",
                                 "indent must be in [0, 64], got " + std::to_string(indent)});
                }
                Json j;
                std::string err;
                if (!toJson(a[0], j, 0, err))
                  return fail(I, n, RuntimeDiag::JsonError, {"json::encode", err});
                r.push_back(
                    Datum::string(j.dump(int(indent), ' ', false, Json::error_handler_t::replace)));
                return true;
              },
          .moreForms = {{0, 2, "(v: any, indent: int): string"}}});

  define({.module = "json",
          .name = "decode",
          .gir = "json::decode",
          .params = 1,
          .signature = "(text: string): any",
          .summary = "parses JSON; cast the result (`decode(t) as int[]`)",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the text", "a string", err)) return false;
                r = {Type::any()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* text;
                if (!getStr(I, n, "json::decode", a[0], text)) return false;
                // nlohmann reports syntax errors by throwing; this is that library's boundary.
                Json j;
                try {
                  j = Json::parse(*text);
                } catch (const Json::exception& e) {
                  return fail(I, n, RuntimeDiag::JsonError, {"json::decode", e.what()});
                }
                Datum out;
                std::string err;
                if (!fromJson(j, out, 0, err))
                  return fail(I, n, RuntimeDiag::JsonError, {"json::decode", err});
                r.push_back(std::move(out));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
