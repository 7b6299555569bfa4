// Sets of constants. A set tracker owns a real Python set that the program's
// own operations (BUILD_SET, SET_ADD, add/discard/update/..., |=, ...) are
// applied to, in the program's order, so membership, length and iteration
// order are exactly eager's. Elements must be hashable constants, objects
// compared by identity, or tensors (Note [Sets of tensors]); a set that came
// from outside is guarded by type and equality and never mutated here (a
// mutation is a break).
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

// Note [Sets of tensors]
// ~~~~~~~~~~~~~~~~~~~~~~
// A tensor is hashable by identity (Tensor.__hash__ is id(self)), and
// nn.Module._named_members keeps the parameters it has yielded in a set
// (`if v is None or v in memo: continue` ... `memo.add(v)`). A tensor tracker
// is put into a set tracker's real set as its meta twin: there is one meta
// twin per tensor object (IS_OP answers `is` by it), and the twin hashes by
// its own identity, so membership, add/discard/remove, len(), truth, set
// algebra and comparisons between such sets answer as eager's do, where a
// lookup finds a tensor by identity (distinct live objects have distinct id
// hashes, so Tensor.__eq__ is never called between two of them). What depends
// on the hash values themselves, which the twins do not share with eager's
// tensors, is refused with GB011: iteration order (iter, unpacking, list(),
// pop()), the set as a constant (str(), repr()) and rebuilding it where it
// escapes (a return, a break). A key of another type whose hash equals a
// tensor's address-derived hash would be compared with it by Tensor.__eq__ in
// eager, an outcome that depends on memory addresses; that is not modelled.

bool setHoldsTensors(PyObject* set) {
  // set's own iterator walks the table without running Python code (a subclass's
  // __iter__ is not called); 3.13 made _PySet_NextEntry internal.
  if (!PyAnySet_Check(set)) return true;
  auto* tensor = reinterpret_cast<PyTypeObject*>(pyTypes()->tensor);
  PyRef it = PyRef::steal(PySet_Type.tp_iter(set));
  if (!it) {
    PyErr_Clear();
    return true;  // cannot look: treat the order as unknown
  }
  while (PyObject* e = Py_TYPE(it.get())->tp_iternext(it.get())) {
    bool isTensor = PyObject_TypeCheck(e, tensor);
    Py_DECREF(e);
    if (isTensor) return true;
  }
  PyErr_Clear();
  return false;
}

bool Translator::setOrderKnown(const VarRef& s, const char* what) {
  if (!setHoldsTensors(s->obj.get())) return true;
  return fail(GB::UnsupportedType, std::string(what) + " of a set holding tensors (its order follows their addresses)");
}

PyRef Translator::setKey(const VarRef& v) {
  if (v->is(Var::Kind::Tensor) && !v->isNumpy()) return v->obj;  // Note [Sets of tensors]
  PyRef k = constOf(v);
  if (!k) return {};
  if (PyObject_Hash(k.get()) == -1) {
    failPy(GB::RaisesException, "unhashable set element");
    return {};
  }
  return k;
}

VarRef Translator::makeSet(const std::vector<VarRef>& items, bool frozen) {
  PyRef s = PyRef::steal(PySet_New(nullptr));
  for (const VarRef& i : items) {
    PyRef k = setKey(i);
    if (!k) return nullptr;
    if (PySet_Add(s.get(), k.get()) < 0) {
      failPy(GB::UnsupportedType, "set add");
      return nullptr;
    }
  }
  if (frozen) s = PyRef::steal(PyFrozenSet_New(s.get()));
  return makeVar(Var::Kind::Set, s);
}

bool Translator::mutableSet(const VarRef& v) {
  if (!v->is(Var::Kind::Set) || !PySet_CheckExact(v->obj.get())) return fail(GB::UnsupportedType, "add to a non-set");
  if (v->source) return fail(GB::OuterContainerMutation, "set passed in from outside");
  return true;
}

VarRef Translator::setMethod(const VarRef& s, const std::string& name, std::vector<VarRef>& args) {
  static const char* kRead[] = {"union", "intersection", "difference", "symmetric_difference",
                                "issubset", "issuperset", "isdisjoint", "copy"};
  static const char* kWrite[] = {"add", "discard", "remove", "update", "intersection_update",
                                 "difference_update", "symmetric_difference_update", "clear", "pop"};
  bool read = false, write = false;
  for (const char* r : kRead) read = read || name == r;
  for (const char* w : kWrite) write = write || name == w;
  if (!read && !write) {
    fail(GB::UnsupportedType, "set." + name);
    return nullptr;
  }
  if (write && !mutableSet(s)) return nullptr;
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyRef a;
    if (name == "add" || name == "discard" || name == "remove") {
      a = setKey(args[i]);
    } else if (args[i]->is(Var::Kind::Set)) {
      a = args[i]->obj;
    } else {
      std::vector<VarRef> items;
      VarRef it = iterate(args[i]);
      if (!it || !unpack(it, items)) return nullptr;
      VarRef tmp = makeSet(items, false);
      if (!tmp) return nullptr;
      a = tmp->obj;
    }
    if (!a) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), a.release());
  }
  if (name == "remove" && args.size() == 1 && PySet_Contains(s->obj.get(), PyTuple_GET_ITEM(tuple.get(), 0)) != 1) {
    fail(GB::RaisesException, "set.remove of a missing element (raises KeyError)");
    return nullptr;
  }
  if (name == "pop" && !setOrderKnown(s, "pop()")) return nullptr;
  if (name == "pop" && PySet_GET_SIZE(s->obj.get()) == 0) {
    fail(GB::RaisesException, "pop from an empty set (raises KeyError)");
    return nullptr;
  }
  PyRef method = PyRef::steal(PyObject_GetAttrString(s->obj.get(), name.c_str()));
  if (!method) {
    failPy(GB::UnsupportedType, "set." + name);
    return nullptr;
  }
  PyObject* r = PyObject_Call(method.get(), tuple.get(), nullptr);
  if (!r) {
    failPy(GB::UnsupportedType, "set." + name);
    return nullptr;
  }
  PyRef rr = PyRef::steal(r);
  if (PyAnySet_Check(r)) return makeVar(Var::Kind::Set, rr);
  if (name == "pop" && !PyTuple_Check(r) && PyObject_TypeCheck(r, &PyBaseObject_Type) &&
      !(r == Py_None || PyBool_Check(r) || PyLong_Check(r) || PyFloat_Check(r) || PyUnicode_Check(r)))
    return makeVar(Var::Kind::Object, rr);
  return fromConst(r);
}

VarRef Translator::setBinary(PyObject* op, const VarRef& a, const VarRef& b) {
  bool inplace = op == operatorFn("ior") || op == operatorFn("iand") || op == operatorFn("isub") ||
                 op == operatorFn("ixor");
  if (inplace && PySet_CheckExact(a->obj.get()) && !mutableSet(a)) return nullptr;
  PyObject* r = PyObject_CallFunctionObjArgs(op, a->obj.get(), b->obj.get(), nullptr);
  if (!r) {
    failPy(GB::UnsupportedType, "set operator");
    return nullptr;
  }
  PyRef rr = PyRef::steal(r);
  if (r == a->obj.get()) return a;  // updated in place
  if (PyAnySet_Check(r)) return makeVar(Var::Kind::Set, rr);
  return fromConst(r);
}

}  // namespace xacc::capture::translate
