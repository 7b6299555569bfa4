// Module `statistics` (spec 15.6): arithmetic mean and sample standard
// deviation (divisor n - 1) of an int[] or float[]; both give floats. The
// deviation is computed in two passes (mean first) for accuracy.
#include <cmath>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

bool numbers(Interpreter& I, const Node& n, std::string_view fn, const Datum& d,
             std::vector<double>& out) {
  ir::ListObject* xs;
  if (!getArray(I, n, fn, d, xs)) return false;
  out.clear();
  switch (xs->form()) {  // Note [Compact arrays]
    case ir::ListObject::Rep::Float: out = xs->reals; return true;
    case ir::ListObject::Rep::Int:
      out.assign(xs->ints.begin(), xs->ints.end());
      return true;
    case ir::ListObject::Rep::Boxed: break;
  }
  out.reserve(xs->items.size());
  for (const Datum& x : xs->items) {
    double v;
    if (!getNum(I, n, fn, x, v)) return false;
    out.push_back(v);
  }
  return true;
}

double meanOf(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

InferRule numberArray() {
  return [](const Types& a, Types& r, std::string& err) {
    if (!want(listLike(a[0]) && numLike(elemOf(a[0])), a, 0, "the argument", "an int[] or float[]",
              err))
      return false;
    r = {Type::f64()};
    return true;
  };
}

}  // namespace

void registerStatistics() {
  define({.module = "statistics",
          .name = "mean",
          .gir = "statistics::mean",
          .params = 1,
          .signature = "(xs: number[]): float",
          .summary = "arithmetic mean",
          .infer = numberArray(),
          .fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
            std::vector<double> v;
            if (!numbers(I, n, "statistics::mean", a[0], v)) return false;
            if (v.empty()) return fail(I, n, RuntimeDiag::EmptyArray, {"statistics::mean"});
            r.push_back(Datum::real(meanOf(v)));
            return true;
          }});
  define({.module = "statistics",
          .name = "stdev",
          .gir = "statistics::stdev",
          .params = 1,
          .signature = "(xs: number[]): float",
          .summary = "sample standard deviation (divisor n - 1)",
          .infer = numberArray(),
          .fn = [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
            std::vector<double> v;
            if (!numbers(I, n, "statistics::stdev", a[0], v)) return false;
            if (v.size() < 2)
              return fail(I, n, RuntimeDiag::InvalidArgument,
                          {"statistics::stdev",
                           "needs at least two elements, got " + std::to_string(v.size())});
            double m = meanOf(v), ss = 0;
            for (double x : v) ss += (x - m) * (x - m);
            r.push_back(Datum::real(std::sqrt(ss / double(v.size() - 1))));
            return true;
          }});
}

}  // namespace xacc::camel::stdlib
