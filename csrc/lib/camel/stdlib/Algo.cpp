// Module `algo` (spec 15.5): ascending sorts of int, float or string arrays.
// `sort`, `insert_sort`, `quick_sort` and `merge_sort` sort their `var` operand
// in place and return it (effectful); the `…sorted` forms return sorted copies
// (pure); `merge_sorted_arrays` merges two ascending arrays. Each name runs the
// algorithm it names: insertion sort, quicksort (median of three, recursing
// into the smaller side so depth stays logarithmic) and a stable bottom-up
// merge sort. Floats order with NaN last, so the order is total.
#include <algorithm>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

using Items = std::vector<Datum>;

void insertionSort(Items& xs, size_t lo, size_t hi) {
  for (size_t i = lo + 1; i < hi; ++i) {
    Datum v = std::move(xs[i]);
    size_t j = i;
    for (; j > lo && lessThan(v, xs[j - 1]); --j) xs[j] = std::move(xs[j - 1]);
    xs[j] = std::move(v);
  }
}

void quickSort(Items& xs, size_t lo, size_t hi) {
  while (hi - lo > 16) {
    size_t mid = lo + (hi - lo) / 2;
    // Median of three as pivot value.
    if (lessThan(xs[mid], xs[lo])) std::swap(xs[mid], xs[lo]);
    if (lessThan(xs[hi - 1], xs[lo])) std::swap(xs[hi - 1], xs[lo]);
    if (lessThan(xs[hi - 1], xs[mid])) std::swap(xs[hi - 1], xs[mid]);
    Datum pivot = xs[mid];
    // Hoare partition of [lo, hi).
    size_t i = lo, j = hi - 1;
    while (true) {
      while (lessThan(xs[i], pivot)) ++i;
      while (lessThan(pivot, xs[j])) --j;
      if (i >= j) break;
      std::swap(xs[i], xs[j]);
      ++i;
      --j;
    }
    size_t split = j + 1;  // [lo, split) <= pivot <= [split, hi)
    if (split - lo < hi - split) {
      quickSort(xs, lo, split);
      lo = split;
    } else {
      quickSort(xs, split, hi);
      hi = split;
    }
  }
  insertionSort(xs, lo, hi);
}

void mergeSort(Items& xs) {
  Items buf(xs.size());
  for (size_t width = 1; width < xs.size(); width *= 2) {
    for (size_t lo = 0; lo < xs.size(); lo += 2 * width) {
      size_t mid = std::min(lo + width, xs.size()), hi = std::min(lo + 2 * width, xs.size());
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) buf[k++] = lessThan(xs[j], xs[i]) ? xs[j++] : xs[i++];
      while (i < mid) buf[k++] = xs[i++];
      while (j < hi) buf[k++] = xs[j++];
    }
    xs.swap(buf);
  }
}

using Algorithm = void (*)(Items&);

void runStd(Items& xs) { std::sort(xs.begin(), xs.end(), lessThan); }
void runInsertion(Items& xs) { insertionSort(xs, 0, xs.size()); }
void runQuick(Items& xs) { quickSort(xs, 0, xs.size()); }

bool sortableList(const Types& a, size_t i, std::string& err) {
  if (!want(listLike(a[i]), a, i, "the array", "an int[], float[] or string[]", err)) return false;
  return want(orderedLike(elemOf(a[i])), a, i, "the array", "an int[], float[] or string[]", err);
}

Type sameList(Type t) { return t.isAny() ? Type::list(Type::any()) : t; }

void defineSort(const std::string& name, Algorithm algo, bool inPlace, const std::string& summary) {
  std::string gir = "algo::" + name;
  Def d;
  d.module = "algo";
  d.name = name;
  d.gir = gir;
  d.params = 1;
  if (inPlace) d.varOperands = {0};
  d.signature = inPlace ? "(var xs: T[]): T[]" : "(xs: T[]): T[]";
  d.effectful = inPlace;
  d.summary = summary;
  d.infer = [](const Types& a, Types& r, std::string& err) {
    if (!sortableList(a, 0, err)) return false;
    r = {sameList(a[0])};
    return true;
  };
  d.fn = [gir, algo, inPlace](Interpreter& I, const Node& n, Datums& a, Datums& r) {
    Items* xs;
    if (!getList(I, n, gir, a[0], xs) || !checkOrdered(I, n, gir, *xs)) return false;
    if (inPlace) {
      algo(*xs);
      r.push_back(a[0]);
    } else {
      Items copy(*xs);
      algo(copy);
      r.push_back(Datum::list(std::move(copy)));
    }
    return true;
  };
  define(std::move(d));
}

}  // namespace

void registerAlgo() {
  defineSort("sort", runStd, true, "sorts xs ascending in place; returns xs");
  defineSort("sorted", runStd, false, "sorted copy of xs");
  defineSort("insert_sort", runInsertion, true, "insertion sort in place; returns xs");
  defineSort("quick_sort", runQuick, true, "quicksort in place; returns xs");
  defineSort("merge_sort", mergeSort, true, "merge sort in place (stable); returns xs");
  defineSort("insert_sorted", runInsertion, false, "insertion-sorted copy");
  defineSort("quick_sorted", runQuick, false, "quicksorted copy");
  defineSort("merge_sorted", mergeSort, false, "merge-sorted copy (stable)");

  define({.module = "algo",
          .name = "merge_sorted_arrays",
          .gir = "algo::merge_sorted_arrays",
          .params = 2,
          .signature = "(a: T[], b: T[]): T[]",
          .summary = "merges two ascending arrays into a new ascending array",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!sortableList(a, 0, err) || !sortableList(a, 1, err)) return false;
                if (!ir::typeCompatible(a[0], a[1])) {
                  err = "element types differ: " + typeName(a[0]) + " and " + typeName(a[1]);
                  return false;
                }
                r = {a[0].isAny() ? sameList(a[1]) : a[0]};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const char* fn = "algo::merge_sorted_arrays";
                Items *x, *y;
                if (!getList(I, n, fn, a[0], x) || !getList(I, n, fn, a[1], y)) return false;
                Items all(*x);  // kinds are checked before any comparison
                all.insert(all.end(), y->begin(), y->end());
                if (!checkOrdered(I, n, fn, all)) return false;
                Items out;
                out.reserve(all.size());
                size_t i = 0, j = 0;
                while (i < x->size() && j < y->size())
                  out.push_back(lessThan((*y)[j], (*x)[i]) ? (*y)[j++] : (*x)[i++]);
                out.insert(out.end(), x->begin() + i, x->end());
                out.insert(out.end(), y->begin() + j, y->end());
                r.push_back(Datum::list(std::move(out)));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
