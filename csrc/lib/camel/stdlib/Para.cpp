// Module `para` (spec 15.15): folds and walks whose order is unspecified. This
// is the sequential implementation: both run in element order, which is one
// of the allowed orders; a parallel scheduler can later replace the bodies
// without changing the table rows or types.
#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

void registerPara() {
  define({.module = "para",
          .name = "unordered_reduce",
          .gir = "para::unordered_reduce",
          .withParams = 2,
          .params = 1,
          .signature = "<f: (acc: U, item: T) => U, initial: U>(xs: T[]): U",
          .summary = "fold in unspecified order (f should be associative and commutative)",
          .infer = foldRule("para::unordered_reduce"),
          .fn = foldFn("para::unordered_reduce")});
  define({.module = "para",
          .name = "unordered_foreach",
          .gir = "para::unordered_foreach",
          .withParams = 1,
          .params = 1,
          .signature = "<f: (item: T) => void>(xs: T[]): void",
          .effectful = true,
          .summary = "calls f on every element in unspecified order",
          .infer = eachRule("para::unordered_foreach"),
          .fn = eachFn("para::unordered_foreach")});
}

}  // namespace xacc::camel::stdlib
