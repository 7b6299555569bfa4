// Values crossing between Camel and a host language (Python through
// camel_lang, Python functions called through `python://` functors and
// py_unwrap): a host value arrives as a datum of the host's natural kind (a
// Python int is an int datum, a dict a struct datum with the dict's key
// order) and must become a value of the Camel type the program declared.
// conformDatum does that conversion and check in one walk: int -> float where
// a float is expected, list/tuple elements and struct fields recursively,
// struct fields reordered to the declared type's order (lowering addresses
// fields by position), `any` and PyObject accept everything. A mismatch is
// reported with the path inside the value ("[2].name: expected int, got
// string"), never a crash.
#pragma once

#include <string>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Type.h"

namespace xacc::camel {

/// Converts `d` in place to a value of Camel type `t`. Returns false with
/// `error` set ("<path>: expected <type>, got <kind>") when it cannot.
bool conformDatum(ir::Datum& d, ir::Type t, std::string& error);

}  // namespace xacc::camel
