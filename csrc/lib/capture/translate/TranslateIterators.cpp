// Iteration over trackers: `iter(v)` (iterate) makes an Iter tracker over a
// list, tuple, dict, dict view, range, tensor, zip/enumerate/map and other
// modelled iterators; `next(it)` (advance) steps it as CPython's iterator
// would, reading live containers at each step. Split from Translator.cpp.
#include "Translator.h"

#include "PyTypes.h"

namespace xacc::capture::translate {

VarRef Translator::iterate(const VarRef& v) {
  if (v->is(Var::Kind::Iter)) return v;
  if (v->is(Var::Kind::UserObject)) return userIter(v);  // Note [Modelled library objects]
  const PyTypes* T = pyTypes();
  if (v->is(Var::Kind::Object) &&
      PyObject_TypeCheck(v->obj.get(), reinterpret_cast<PyTypeObject*>(T->moduleDict))) {
    PyObject* mods = PyObject_GetAttrString(v->obj.get(), "_modules");
    if (!mods) {
      failPy(GB::UnsupportedType, "_modules");
      return nullptr;
    }
    guardModuleKeys(v);
    auto it = makeVar(Var::Kind::Iter);
    PyObject *k, *m;
    Py_ssize_t pos = 0;
    while (PyDict_Next(mods, &pos, &k, &m)) it->items.push_back(makeConst(PyRef::borrow(k)));
    Py_DECREF(mods);
    return it;
  }
  auto it = makeVar(Var::Kind::Iter);
  if (v->is(Var::Kind::List)) {
    // A live view: items appended, removed or replaced later are seen as in eager.
    it->iter = Var::IterOf::List;
    it->self = v;
    return it;
  }
  if (v->is(Var::Kind::DictView)) {
    it->iter = Var::IterOf::DictView;
    it->self = v;
    it->keys = v->self->keys;  // the keys iteration started with
    return it;
  }
  if (!unpack(v, it->items)) return nullptr;
  if (v->is(Var::Kind::Const) && PyRange_Check(v->obj.get())) it->obj = v->obj;  // see rangeLoop
  return it;
}

bool Translator::advance(const VarRef& it, VarRef& out) {
  using IterOf = Var::IterOf;
  out = nullptr;
  switch (it->iter) {
    case IterOf::Items:
      if (it->pos < it->items.size()) out = it->items[it->pos++];
      return true;
    case IterOf::List:
      // list_iterator: the item at the index while the index is inside the
      // list; once past the end it stays exhausted, whatever is appended later.
      if (it->self && it->pos < it->self->items.size()) {
        out = it->self->items[it->pos++];
      } else {
        it->iter = IterOf::Items;
        it->self = nullptr;
        it->items.clear();
        it->pos = 0;
      }
      return true;
    case IterOf::Reversed:
      // list_reverseiterator: index from len-1 down; a list that shrank below
      // the index ends it.
      if (it->self && it->pos > 0 && it->pos <= it->self->items.size()) {
        out = it->self->items[--it->pos];
      } else {
        it->pos = 0;
        it->self = nullptr;
      }
      return true;
    case IterOf::Enumerate: {
      VarRef x;
      if (!advance(it->self, x)) return false;
      if (x) out = makeSeq(Var::Kind::Tuple, {makeConst(PyRef::steal(PyLong_FromLongLong(it->count++))), x});
      return true;
    }
    case IterOf::Zip: {
      // zip stops at the first exhausted iterator, having taken one item from
      // each iterator before it.
      // zip(strict=True) (count 1) raises ValueError unless all run out together.
      if (it->items.empty()) return true;
      std::vector<VarRef> tuple;
      for (size_t i = 0; i < it->items.size(); ++i) {
        VarRef x;
        if (!advance(it->items[i], x)) return false;
        if (!x) {
          if (it->count == 1 && i > 0)
            return fail(GB::RaisesException, "zip(strict=True): an argument is shorter (raises ValueError)");
          for (size_t j = 1; it->count == 1 && j < it->items.size(); ++j) {
            VarRef y;
            if (!advance(it->items[j], y)) return false;
            if (y) return fail(GB::RaisesException, "zip(strict=True): an argument is longer (raises ValueError)");
          }
          it->items.clear();
          return true;
        }
        tuple.push_back(std::move(x));
      }
      out = makeSeq(Var::Kind::Tuple, std::move(tuple));
      return true;
    }
    case IterOf::DictView: {
      // A dict iterator: the dict's items as they are now (stores to existing
      // keys are seen); a change of its keys raises RuntimeError in Python.
      const std::vector<PyRef>& now = it->self->self->keys;
      bool same = now.size() == it->keys.size();
      for (size_t i = 0; same && i < now.size(); ++i) same = now[i].get() == it->keys[i].get();
      if (!same) return fail(GB::RaisesException, "a dict changed size during iteration (raises RuntimeError)");
      std::vector<VarRef> items = viewItems(*it->self);
      if (it->pos < items.size()) out = items[it->pos++];
      return true;
    }
    case IterOf::Generator: {  // See Note [Lazy generators]
      GenFrame& g = *it->gen;
      if (g.finished) return true;
      PyCodeObject* code = g.frame->code;
      if (inlineTooDeep({code, g.frame->closure}))
        return fail(GB::DepthLimit, "inlining generator " + g.name);
      Frame& f = *g.frame;
      f.parent = current_;
      f.suspended = false;
      inlineStack_.push_back({code, f.closure});
      VarRef value;
      bool ok = runFrame(f, value);
      inlineStack_.pop_back();
      f.parent = nullptr;
      if (!ok) return false;
      ++it->pos;
      if (f.suspended) {
        out = std::move(value);
      } else {
        g.finished = true;  // returned: StopIteration
        g.returned = std::move(value);
      }
      return true;
    }
  }
  return fail(GB::Internal, "internal: unknown iterator");
}

}  // namespace xacc::capture::translate
