// Runtime helpers that Camel operators need and that are not core ops, added
// to ir::BuiltinRegistry by the front end: `camel.identical` implements `===`
// and `!==` (spec 7.2: the raw value for scalars, object identity for strings,
// arrays, structs, tuples and functions).
#include <mutex>

#include "LowerImpl.h"
#include "xacc/ir/Builtins.h"

namespace xacc::camel::sema {

void registerFrontendBuiltins() {
  static std::once_flag once;
  std::call_once(once, [] {
    ir::Builtin b;
    b.name = "camel.identical";
    b.summary = "a === b: identity of heap values, equality of scalars";
    b.infer = [](const std::vector<ir::Type>& args, std::vector<ir::Type>& results, std::string& err) {
      if (args.size() != 2) {
        err = "takes 2 arguments";
        return false;
      }
      results = {ir::Type::boolean()};
      return true;
    };
    b.fn = [](ir::Interpreter&, const ir::Node&, std::vector<ir::Datum>& a,
              std::vector<ir::Datum>& r) {
      bool same = a[0].kind() == a[1].kind() &&
                  (a[0].isHeap() ? a[0].object() == a[1].object() : a[0].equals(a[1]));
      r.push_back(ir::Datum::boolean(same));
      return true;
    };
    ir::BuiltinRegistry::get().add(std::move(b));
  });
}

}  // namespace xacc::camel::sema
