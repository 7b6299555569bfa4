// conformDatum: host values to declared Camel types (see Interop.h).
#include "xacc/camel/Interop.h"

#include "xacc/camel/Compiler.h"
#include "stdlib/StdlibImpl.h"

namespace xacc::camel {

using ir::Datum;
using ir::DKind;
using ir::Type;
using ir::TypeKind;

static bool mismatch(const std::string& path, Type t, const Datum& d, std::string& error) {
  error = (path.empty() ? std::string() : path + ": ") + "expected " + camelTypeName(t) + ", got " +
          stdlib::kindName(d);
  return false;
}

static bool conform(Datum& d, Type t, const std::string& path, std::string& error) {
  if (!t) return true;
  switch (t.kind()) {
    case TypeKind::Any:
    case TypeKind::PyObj: return true;
    case TypeKind::Null:  // void: the value is dropped
      d = Datum();
      return true;
    case TypeKind::Int:
      return d.kind() == DKind::Int || mismatch(path, t, d, error);
    case TypeKind::Float:
      if (d.kind() == DKind::Int) d = Datum::real(double(d.asInt()));
      return d.kind() == DKind::Float || mismatch(path, t, d, error);
    case TypeKind::Bool: return d.kind() == DKind::Bool || mismatch(path, t, d, error);
    case TypeKind::Str: return d.kind() == DKind::Str || mismatch(path, t, d, error);
    case TypeKind::Tensor: return d.kind() == DKind::Tensor || mismatch(path, t, d, error);
    case TypeKind::Token: return d.kind() == DKind::Token || mismatch(path, t, d, error);
    case TypeKind::Func: return d.kind() == DKind::Func || mismatch(path, t, d, error);
    case TypeKind::List: {
      if (d.kind() == DKind::Tuple) d = Datum::list(d.tupleItems());  // Python tuple as an array
      if (d.kind() != DKind::List) return mismatch(path, t, d, error);
      // Conform a fresh list: the caller's list may be shared with host code.
      std::vector<Datum> items = ir::listObj(d)->snapshot();
      for (size_t i = 0; i < items.size(); ++i)
        if (!conform(items[i], t.elementType(), path + "[" + std::to_string(i) + "]", error))
          return false;
      d = Datum::list(std::move(items));
      return true;
    }
    case TypeKind::Tuple: {
      if (d.kind() == DKind::List) d = Datum::tuple(*ir::ListView(d));
      if (d.kind() != DKind::Tuple) return mismatch(path, t, d, error);
      const auto& want = t.elements();
      if (d.tupleItems().size() != want.size()) {
        error = (path.empty() ? std::string() : path + ": ") + "expected " + camelTypeName(t) +
                ", got a tuple of " + std::to_string(d.tupleItems().size()) + " elements";
        return false;
      }
      std::vector<Datum> items = d.tupleItems();
      for (size_t i = 0; i < items.size(); ++i)
        if (!conform(items[i], want[i], path + "[" + std::to_string(i) + "]", error)) return false;
      d = Datum::tuple(std::move(items));
      return true;
    }
    case TypeKind::Struct: {
      if (d.kind() != DKind::Struct) return mismatch(path, t, d, error);
      const auto& names = t.fieldNames();
      const auto& types = t.elements();
      std::vector<Datum> fields(names.size());
      for (size_t i = 0; i < names.size(); ++i) {
        const auto& have = d.structNames();
        size_t k = 0;
        while (k < have.size() && have[k] != names[i]) ++k;
        if (k == have.size()) {
          error = (path.empty() ? std::string() : path + ": ") + "missing field '" + names[i] +
                  "' of " + camelTypeName(t);
          return false;
        }
        fields[i] = d.structFields()[k];
        if (!conform(fields[i], types[i], path + "." + names[i], error)) return false;
      }
      if (d.structNames().size() != names.size()) {
        for (const std::string& n : d.structNames())
          if (t.fieldIndex(n) < 0) {
            error = (path.empty() ? std::string() : path + ": ") + "unexpected field '" + n +
                    "' for " + camelTypeName(t);
            return false;
          }
      }
      d = Datum::structure(names, std::move(fields));
      return true;
    }
  }
  return true;
}

bool conformDatum(Datum& d, Type t, std::string& error) { return conform(d, t, "", error); }

}  // namespace xacc::camel
