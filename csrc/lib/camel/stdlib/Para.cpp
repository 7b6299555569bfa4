// Module `para` (spec 15.15): folds and walks whose order is unspecified.
// unordered_foreach runs its function on chunks of the input concurrently
// under the parallel scheduler when the function may run concurrently (else in
// element order). unordered_reduce folds a large input as fixed blocks of
// kBlock elements, each folded from its first element (the first from the
// initial value), then combines the block results in order with f (f is
// associative, spec 15.15); blocks run concurrently under the parallel
// scheduler. The blocks depend only on the input length, never on the
// scheduler or thread count, so every scheduler gives the same result (floats
// included). Inputs that are short, or whose elements and initial value are
// not all of one kind (f cannot combine two partial results), fold in order.
#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

constexpr size_t kBlock = 256;

ir::InterpFn unorderedReduce() {
  return [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    const char* name = "para::unordered_reduce";
    ir::ListObject* xs;
    if (!getArray(I, n, name, a[2], xs)) return false;
    std::vector<Datum> items = xs->snapshot();
    bool blocks = items.size() >= 2 * kBlock;
    for (const Datum& x : items) blocks &= x.kind() == a[1].kind();
    if (!blocks) return foldFn(name)(I, n, a, r);
    size_t nb = (items.size() + kBlock - 1) / kBlock;
    std::vector<Datum> partial(nb);
    if (!I.forEachChunk(a[0], nb, [&](Interpreter& W, size_t b, size_t e) {
          for (size_t k = b; k < e; ++k) {
            size_t lo = k * kBlock, hi = std::min(items.size(), lo + kBlock);
            Datum acc = k == 0 ? a[1] : std::move(items[lo++]);
            for (size_t i = lo; i < hi; ++i) {
              Datum next;
              if (!callFn(W, n, name, a[0], std::move(acc), std::move(items[i]), next)) return false;
              acc = std::move(next);
            }
            partial[k] = std::move(acc);
          }
          return true;
        }))
      return false;
    Datum acc = std::move(partial[0]);
    for (size_t k = 1; k < nb; ++k) {
      Datum next;
      if (!callFn(I, n, name, a[0], std::move(acc), std::move(partial[k]), next)) return false;
      acc = std::move(next);
    }
    r.push_back(std::move(acc));
    return true;
  };
}

}  // namespace

void registerPara() {
  define({.module = "para",
          .name = "unordered_reduce",
          .gir = "para::unordered_reduce",
          .withParams = 2,
          .params = 1,
          .signature = "<f: (acc: U, item: T) => U, initial: U>(xs: T[]): U",
          .summary = "fold in unspecified order (f should be associative and commutative)",
          .infer = foldRule("para::unordered_reduce"),
          .fn = unorderedReduce()});
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
