// Camel arrays: the boxed and unboxed forms (Note [Compact arrays] in List.h).
#include "xacc/ir/List.h"

namespace xacc::ir {

Datum intList(std::vector<int64_t> xs) {
  Datum d = Datum::list({});
  ListObject* o = listObj(d);
  o->ints = std::move(xs);
  o->rep.store(ListObject::Rep::Int, std::memory_order_release);
  return d;
}

Datum floatList(std::vector<double> xs) {
  Datum d = Datum::list({});
  ListObject* o = listObj(d);
  o->reals = std::move(xs);
  o->rep.store(ListObject::Rep::Float, std::memory_order_release);
  return d;
}

Datum listSlice(const Datum& d, size_t lo, size_t hi) {
  const ListObject* o = listObj(d);
  switch (o->form()) {
    case ListObject::Rep::Int:
      return intList(std::vector<int64_t>(o->ints.begin() + lo, o->ints.begin() + hi));
    case ListObject::Rep::Float:
      return floatList(std::vector<double>(o->reals.begin() + lo, o->reals.begin() + hi));
    case ListObject::Rep::Boxed: break;
  }
  return Datum::list(std::vector<Datum>(o->items.begin() + lo, o->items.begin() + hi));
}

Datum listConcat(const Datum& a, const Datum& b) {
  const ListObject *x = listObj(a), *y = listObj(b);
  ListObject::Rep rx = x->form(), ry = y->form();
  if (rx == ry && rx == ListObject::Rep::Int) {
    std::vector<int64_t> out;
    out.reserve(x->ints.size() + y->ints.size());
    out.insert(out.end(), x->ints.begin(), x->ints.end());
    out.insert(out.end(), y->ints.begin(), y->ints.end());
    return intList(std::move(out));
  }
  if (rx == ry && rx == ListObject::Rep::Float) {
    std::vector<double> out;
    out.reserve(x->reals.size() + y->reals.size());
    out.insert(out.end(), x->reals.begin(), x->reals.end());
    out.insert(out.end(), y->reals.begin(), y->reals.end());
    return floatList(std::move(out));
  }
  std::vector<Datum> items = x->snapshot(), more = y->snapshot();
  items.insert(items.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return Datum::list(std::move(items));
}

size_t ListObject::size() const {
  switch (form()) {
    case Rep::Int: return ints.size();
    case Rep::Float: return reals.size();
    case Rep::Boxed: break;
  }
  return items.size();
}

Datum ListObject::get(size_t i) const {
  switch (form()) {
    case Rep::Int: return Datum::integer(ints[i]);
    case Rep::Float: return Datum::real(reals[i]);
    case Rep::Boxed: break;
  }
  return items[i];
}

void ListObject::set(size_t i, Datum v) {
  Rep r = form();
  if (r == Rep::Int && v.kind() == DKind::Int) {
    ints[i] = v.asInt();
  } else if (r == Rep::Float && v.kind() == DKind::Float) {
    reals[i] = v.asFloat();
  } else {
    boxed()[i] = std::move(v);
  }
}

void ListObject::push(Datum v) {
  Rep r = form();
  if (r == Rep::Boxed && items.empty() && (v.kind() == DKind::Int || v.kind() == DKind::Float)) {
    // An empty array takes the form of its first number.
    if (v.kind() == DKind::Int) {
      ints.clear();
      r = Rep::Int;
    } else {
      reals.clear();
      r = Rep::Float;
    }
    rep.store(r, std::memory_order_release);
  }
  if (r == Rep::Int && v.kind() == DKind::Int)
    ints.push_back(v.asInt());
  else if (r == Rep::Float && v.kind() == DKind::Float)
    reals.push_back(v.asFloat());
  else
    boxed().push_back(std::move(v));
}

Datum ListObject::pop() {
  switch (form()) {
    case Rep::Int: {
      Datum d = Datum::integer(ints.back());
      ints.pop_back();
      return d;
    }
    case Rep::Float: {
      Datum d = Datum::real(reals.back());
      reals.pop_back();
      return d;
    }
    case Rep::Boxed: break;
  }
  Datum d = std::move(items.back());
  items.pop_back();
  return d;
}

std::vector<Datum>& ListObject::boxed() {
  if (form() == Rep::Boxed) return items;
  std::lock_guard<std::mutex> lock(boxMu);
  Rep r = form();
  if (r == Rep::Boxed) return items;
  // Sole holder: nobody else can be reading the unboxed buffer.
  bool sole = refs.load(std::memory_order_acquire) <= 1;
  items.clear();
  if (r == Rep::Int) {
    items.reserve(ints.size());
    for (int64_t x : ints) items.push_back(Datum::integer(x));
    if (sole) std::vector<int64_t>().swap(ints);
  } else {
    items.reserve(reals.size());
    for (double x : reals) items.push_back(Datum::real(x));
    if (sole) std::vector<double>().swap(reals);
  }
  rep.store(Rep::Boxed, std::memory_order_release);
  return items;
}

std::vector<Datum> ListObject::snapshot() const {
  std::vector<Datum> out;
  switch (form()) {
    case Rep::Int:
      out.reserve(ints.size());
      for (int64_t x : ints) out.push_back(Datum::integer(x));
      return out;
    case Rep::Float:
      out.reserve(reals.size());
      for (double x : reals) out.push_back(Datum::real(x));
      return out;
    case Rep::Boxed: break;
  }
  return items;
}

void ListObject::compact() {
  if (form() != Rep::Boxed || items.empty()) return;
  DKind k = items[0].kind();
  if (k != DKind::Int && k != DKind::Float) return;
  for (const Datum& x : items)
    if (x.kind() != k) return;
  if (k == DKind::Int) {
    ints.clear();
    ints.reserve(items.size());
    for (const Datum& x : items) ints.push_back(x.asInt());
  } else {
    reals.clear();
    reals.reserve(items.size());
    for (const Datum& x : items) reals.push_back(x.asFloat());
  }
  std::vector<Datum>().swap(items);
  rep.store(k == DKind::Int ? Rep::Int : Rep::Float, std::memory_order_release);
}

ListView::ListView(const Datum& d) {
  if (d.kind() == DKind::Tuple) {
    p_ = &d.tupleItems();
    return;
  }
  ListObject* o = listObj(d);
  if (o->form() == ListObject::Rep::Boxed) {
    p_ = &o->items;
  } else {
    copy_ = o->snapshot();
    p_ = &copy_;
  }
}

ListElems::ListElems(const Datum& d, bool copy) {
  const ListObject* o = listObj(d);
  rep_ = o->form();
  switch (rep_) {
    case ListObject::Rep::Int:
      if (copy) ownInts_ = o->ints;
      ints_ = copy ? ownInts_.data() : o->ints.data();
      n_ = o->ints.size();
      break;
    case ListObject::Rep::Float:
      if (copy) ownReals_ = o->reals;
      reals_ = copy ? ownReals_.data() : o->reals.data();
      n_ = o->reals.size();
      break;
    case ListObject::Rep::Boxed:
      if (copy) ownItems_ = o->items;
      items_ = copy ? ownItems_.data() : o->items.data();
      n_ = o->items.size();
      break;
  }
}

Datum ListElems::select(const std::vector<char>& keep) {
  size_t kept = 0;
  for (size_t i = 0; i < n_; ++i) kept += keep[i] != 0;
  if (kept == 0) return Datum::list({});
  if (rep_ == ListObject::Rep::Int) {
    std::vector<int64_t> out;
    out.reserve(kept);
    for (size_t i = 0; i < n_; ++i)
      if (keep[i]) out.push_back(ints_[i]);
    return intList(std::move(out));
  }
  if (rep_ == ListObject::Rep::Float) {
    std::vector<double> out;
    out.reserve(kept);
    for (size_t i = 0; i < n_; ++i)
      if (keep[i]) out.push_back(reals_[i]);
    return floatList(std::move(out));
  }
  std::vector<Datum> out;
  out.reserve(kept);
  for (size_t i = 0; i < n_; ++i)
    if (keep[i]) out.push_back(take(i));
  return Datum::list(std::move(out));
}

ListBuilder::ListBuilder(size_t n, DKind hint) {
  if (hint == DKind::Int) {
    rep_ = ListObject::Rep::Int;
    ints_.resize(n);
  } else if (hint == DKind::Float) {
    rep_ = ListObject::Rep::Float;
    reals_.resize(n);
  } else {
    items_.resize(n);
  }
}

void ListBuilder::put(size_t i, Datum v) {
  if (rep_ == ListObject::Rep::Int && v.kind() == DKind::Int) {
    ints_[i] = v.asInt();
  } else if (rep_ == ListObject::Rep::Float && v.kind() == DKind::Float) {
    reals_[i] = v.asFloat();
  } else if (rep_ == ListObject::Rep::Boxed) {
    items_[i] = std::move(v);
  } else {
    std::lock_guard<std::mutex> lock(oddMu_);
    odd_.emplace_back(i, std::move(v));
  }
}

Datum ListBuilder::finish() {
  if (rep_ == ListObject::Rep::Boxed) return Datum::list(std::move(items_));
  if (odd_.empty())
    return rep_ == ListObject::Rep::Int ? intList(std::move(ints_)) : floatList(std::move(reals_));
  size_t n = rep_ == ListObject::Rep::Int ? ints_.size() : reals_.size();
  std::vector<Datum> items;
  items.reserve(n);
  for (size_t i = 0; i < n; ++i)
    items.push_back(rep_ == ListObject::Rep::Int ? Datum::integer(ints_[i]) : Datum::real(reals_[i]));
  for (auto& [i, v] : odd_) items[i] = std::move(v);
  return Datum::list(std::move(items));
}

}  // namespace xacc::ir
