// Module `algo` (spec 15.5): ascending sorts of int, float or string arrays.
// `sort`, `insert_sort`, `quick_sort` and `merge_sort` sort their `var` operand
// in place and return it (effectful); the `…sorted` forms return sorted copies
// (pure); `merge_sorted_arrays` merges two ascending arrays. Each name runs the
// algorithm it names: insertion sort, quicksort (median of three, recursing
// into the smaller side so depth stays logarithmic) and a stable bottom-up
// merge sort. Floats order with NaN last, so the order is total.
#include <algorithm>
#include <cmath>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

using Items = std::vector<Datum>;

// The algorithms are templates over the element storage: the boxed datums of
// a mixed array, or the int64_t / double buffer of a compact one (Note
// [Compact arrays]); `Less` is the element order (lessThan for datums).

struct IntLess {
  bool operator()(int64_t a, int64_t b) const { return a < b; }
};
struct FloatLess {  // NaN sorts last, as lessThan
  bool operator()(double a, double b) const {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  }
};
struct DatumLess {
  bool operator()(const Datum& a, const Datum& b) const { return lessThan(a, b); }
};

template <class T, class Less>
void insertionSort(std::vector<T>& xs, size_t lo, size_t hi, Less less) {
  for (size_t i = lo + 1; i < hi; ++i) {
    T v = std::move(xs[i]);
    size_t j = i;
    for (; j > lo && less(v, xs[j - 1]); --j) xs[j] = std::move(xs[j - 1]);
    xs[j] = std::move(v);
  }
}

template <class T, class Less>
void quickSort(std::vector<T>& xs, size_t lo, size_t hi, Less less) {
  while (hi - lo > 16) {
    size_t mid = lo + (hi - lo) / 2;
    // Median of three as pivot value.
    if (less(xs[mid], xs[lo])) std::swap(xs[mid], xs[lo]);
    if (less(xs[hi - 1], xs[lo])) std::swap(xs[hi - 1], xs[lo]);
    if (less(xs[hi - 1], xs[mid])) std::swap(xs[hi - 1], xs[mid]);
    T pivot = xs[mid];
    // Hoare partition of [lo, hi).
    size_t i = lo, j = hi - 1;
    while (true) {
      while (less(xs[i], pivot)) ++i;
      while (less(pivot, xs[j])) --j;
      if (i >= j) break;
      std::swap(xs[i], xs[j]);
      ++i;
      --j;
    }
    size_t split = j + 1;  // [lo, split) <= pivot <= [split, hi)
    if (split - lo < hi - split) {
      quickSort(xs, lo, split, less);
      lo = split;
    } else {
      quickSort(xs, split, hi, less);
      hi = split;
    }
  }
  insertionSort(xs, lo, hi, less);
}

/// Stable bottom-up merge sort with a buffer of half the array: of each pair
/// of runs, the shorter one (at most half the array) is moved to the buffer
/// and merged with the other back into place, front to back when it is the
/// left run, back to front when it is the right one (the write position never
/// passes the unread part of the run that stayed in place).
template <class T, class Less>
void mergeSort(std::vector<T>& xs, Less less) {
  size_t n = xs.size();
  std::vector<T> buf(n / 2);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo + width < n; lo += 2 * width) {
      size_t mid = lo + width, hi = std::min(lo + 2 * width, n);
      if (!less(xs[mid], xs[mid - 1])) continue;  // already in order
      if (mid - lo <= hi - mid) {
        std::move(xs.begin() + lo, xs.begin() + mid, buf.begin());
        size_t i = 0, iend = mid - lo, j = mid, k = lo;
        while (i < iend && j < hi)
          xs[k++] = less(xs[j], buf[i]) ? std::move(xs[j++]) : std::move(buf[i++]);
        while (i < iend) xs[k++] = std::move(buf[i++]);
      } else {
        std::move(xs.begin() + mid, xs.begin() + hi, buf.begin());
        size_t i = mid, j = hi - mid, k = hi;  // i, j: ends of the unmerged parts
        while (i > lo && j > 0)
          xs[--k] = less(buf[j - 1], xs[i - 1]) ? std::move(xs[--i]) : std::move(buf[--j]);
        while (j > 0) xs[--k] = std::move(buf[--j]);
      }
    }
  }
}

enum class Algorithm { Std, Insertion, Quick, Merge };

template <class T, class Less>
void runSort(Algorithm algo, std::vector<T>& xs, Less less) {
  switch (algo) {
    case Algorithm::Std: std::sort(xs.begin(), xs.end(), less); break;
    case Algorithm::Insertion: insertionSort(xs, 0, xs.size(), less); break;
    case Algorithm::Quick: quickSort(xs, 0, xs.size(), less); break;
    case Algorithm::Merge: mergeSort(xs, less); break;
  }
}

/// Sorts the elements of `o` in its form.
void sortList(Algorithm algo, ir::ListObject& o) {
  switch (o.form()) {
    case ir::ListObject::Rep::Int: runSort(algo, o.ints, IntLess()); break;
    case ir::ListObject::Rep::Float: runSort(algo, o.reals, FloatLess()); break;
    case ir::ListObject::Rep::Boxed: runSort(algo, o.items, DatumLess()); break;
  }
}

/// Merges two ascending runs.
template <class T, class Less>
std::vector<T> mergeRuns(const std::vector<T>& x, const std::vector<T>& y, Less less) {
  std::vector<T> out;
  out.reserve(x.size() + y.size());
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) out.push_back(less(y[j], x[i]) ? y[j++] : x[i++]);
  out.insert(out.end(), x.begin() + i, x.end());
  out.insert(out.end(), y.begin() + j, y.end());
  return out;
}

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
    ir::ListObject* xs;
    if (!getArray(I, n, gir, a[0], xs)) return false;
    if (xs->form() == ir::ListObject::Rep::Boxed && !checkOrdered(I, n, gir, xs->items))
      return false;
    if (inPlace) {
      sortList(algo, *xs);
      r.push_back(a[0]);
    } else {
      Datum copy = ir::listSlice(a[0], 0, xs->size());
      sortList(algo, *ir::listObj(copy));
      r.push_back(std::move(copy));
    }
    return true;
  };
  define(std::move(d));
}

}  // namespace

void registerAlgo() {
  defineSort("sort", Algorithm::Std, true, "sorts xs ascending in place; returns xs");
  defineSort("sorted", Algorithm::Std, false, "sorted copy of xs");
  defineSort("insert_sort", Algorithm::Insertion, true, "insertion sort in place; returns xs");
  defineSort("quick_sort", Algorithm::Quick, true, "quicksort in place; returns xs");
  defineSort("merge_sort", Algorithm::Merge, true, "merge sort in place (stable); returns xs");
  defineSort("insert_sorted", Algorithm::Insertion, false, "insertion-sorted copy");
  defineSort("quick_sorted", Algorithm::Quick, false, "quicksorted copy");
  defineSort("merge_sorted", Algorithm::Merge, false, "merge-sorted copy (stable)");

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
                ir::ListObject *xo, *yo;
                if (!getArray(I, n, fn, a[0], xo) || !getArray(I, n, fn, a[1], yo)) return false;
                using Rep = ir::ListObject::Rep;
                Rep rx = xo->form(), ry = yo->form();
                if (rx == ry && rx == Rep::Int) {
                  r.push_back(ir::intList(mergeRuns(xo->ints, yo->ints, IntLess())));
                  return true;
                }
                if (rx == ry && rx == Rep::Float) {
                  r.push_back(ir::floatList(mergeRuns(xo->reals, yo->reals, FloatLess())));
                  return true;
                }
                ir::ListView x(a[0]), y(a[1]);
                Items all(*x);  // kinds are checked before any comparison
                all.insert(all.end(), y->begin(), y->end());
                if (!checkOrdered(I, n, fn, all)) return false;
                r.push_back(Datum::list(mergeRuns(*x, *y, DatumLess())));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
