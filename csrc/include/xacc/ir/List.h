// Camel arrays (DKind::List) and their compact forms; see Note [Compact arrays].
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "xacc/ir/Datum.h"

namespace xacc::ir {

// Note [Compact arrays]
// ~~~~~~~~~~~~~~~~~~~~~
// An array whose elements are all ints (or all floats) stores them unboxed, as
// one buffer of int64_t (double): 8 bytes an element instead of a 16-byte
// Datum. The form is a representation choice only, never visible: element i
// reads back as Datum::integer(ints[i]) (Datum::real(reals[i])), which is the
// datum that was stored, so printing, equality, the Python boundary and every
// builtin see the same values whatever the form.
//
//  * Datum::list compacts: a non-empty array built from datums that are all
//    Int (all Float) takes the unboxed form. Builtins that produce large
//    arrays (range, slice, concat, map, sorts, merges) build the unboxed
//    buffer directly, never a boxed temporary.
//  * Arrays are shared mutable objects (spec 7.1), so there is no
//    copy-on-write: `set` and `push` of an Int into an Int array (a Float into
//    a Float array) store in place; any other element, or a caller that needs
//    the boxed vector (`Datum::listItems`, the generic paths), converts the
//    object to the boxed form once, under `boxMu`. An empty boxed array takes
//    the unboxed form of the first int or float pushed onto it, so arrays
//    built by `append` are compact too.
//  * Converting to boxed frees the unboxed buffer only when the caller holds
//    the sole reference; otherwise another thread of the parallel scheduler
//    may be reading it through `get`, and the (now stale, never written)
//    buffer stays until the object dies.
//  * Read-only callers that must see datums use ListView, which copies an
//    unboxed array's elements out without changing its form.
struct ListObject : SeqObject {
  enum class Rep : uint8_t { Boxed, Int, Float };
  std::atomic<Rep> rep{Rep::Boxed};
  std::vector<int64_t> ints;   ///< Rep::Int
  std::vector<double> reals;   ///< Rep::Float
  std::mutex boxMu;

  Rep form() const { return rep.load(std::memory_order_acquire); }
  size_t size() const;
  /// Element i (i < size()).
  Datum get(size_t i) const;
  /// Stores v at i (i < size()).
  void set(size_t i, Datum v);
  void push(Datum v);
  /// Removes and returns the last element (size() > 0).
  Datum pop();
  /// The elements as datums, converting the object to the boxed form.
  std::vector<Datum>& boxed();
  /// A copy of the elements as datums; the form is unchanged.
  std::vector<Datum> snapshot() const;
  /// Boxed → unboxed when every element is an Int, or every one a Float.
  void compact();
};

/// The array object of a DKind::List datum.
inline ListObject* listObj(const Datum& d) { return static_cast<ListObject*>(d.object()); }
/// New unboxed arrays.
Datum intList(std::vector<int64_t> xs);
Datum floatList(std::vector<double> xs);
/// New array of elements [lo, hi) of `d` (lo <= hi <= size), in d's form.
Datum listSlice(const Datum& d, size_t lo, size_t hi);
/// New array: the elements of `a` then those of `b` (unboxed when both are of one form).
Datum listConcat(const Datum& a, const Datum& b);

/// The elements a higher-order builtin walks, in the array's form: a copy
/// when its callback may mutate the array (the walk is then over a
/// snapshot), else the live array itself (no callback can change it).
class ListElems {
public:
  ListElems(const Datum& d, bool copy);
  ListElems(const ListElems&) = delete;
  ListElems& operator=(const ListElems&) = delete;
  ListObject::Rep rep() const { return rep_; }
  size_t size() const { return n_; }
  Datum at(size_t i) const {
    return rep_ == ListObject::Rep::Int     ? Datum::integer(ints_[i])
           : rep_ == ListObject::Rep::Float ? Datum::real(reals_[i])
                                            : items_[i];
  }
  /// Element i, moved out when this is a boxed copy.
  Datum take(size_t i) {
    if (rep_ == ListObject::Rep::Boxed && !ownItems_.empty()) return std::move(ownItems_[i]);
    return at(i);
  }
  /// New array of the elements whose `keep` flag is set, in this form.
  Datum select(const std::vector<char>& keep);

private:
  ListObject::Rep rep_;
  size_t n_ = 0;
  const int64_t* ints_ = nullptr;
  const double* reals_ = nullptr;
  const Datum* items_ = nullptr;
  std::vector<int64_t> ownInts_;
  std::vector<double> ownReals_;
  std::vector<Datum> ownItems_;
};

/// Builds an array of n elements filled by index, possibly from several
/// threads at once (distinct indices). With an Int (Float) hint the elements
/// go to an unboxed buffer; an element of another kind is kept aside, and
/// finish() then gives the boxed form. The result is the same array either way.
class ListBuilder {
public:
  ListBuilder(size_t n, DKind hint);
  void put(size_t i, Datum v);
  Datum finish();

private:
  ListObject::Rep rep_ = ListObject::Rep::Boxed;
  std::vector<int64_t> ints_;
  std::vector<double> reals_;
  std::vector<Datum> items_;
  std::mutex oddMu_;
  std::vector<std::pair<size_t, Datum>> odd_;
};

/// Read-only datum access to an array without changing its form: the boxed
/// vector itself, or a copy of an unboxed array's elements. A tuple gives its
/// items, so one view serves code that walks either.
class ListView {
public:
  explicit ListView(const Datum& d);
  const std::vector<Datum>& operator*() const { return *p_; }
  const std::vector<Datum>* operator->() const { return p_; }

private:
  std::vector<Datum> copy_;
  const std::vector<Datum>* p_;
};

}  // namespace xacc::ir
