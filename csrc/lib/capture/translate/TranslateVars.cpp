// `obj.__dict__` and `vars(obj)` of user objects made while tracing (Note
// [Instance dicts]). Invariant: the view holds no copy of the attributes;
// every read takes them from the object at that moment.
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

// Note [Instance dicts]
// ~~~~~~~~~~~~~~~~~~~~~
// A UserObject tracker keeps its instance __dict__ as its keys/items (Note
// [User objects]). `obj.__dict__` (and `vars(obj)`, the same object in Python)
// is an InstanceDict tracker that points at the object, so it stays the live
// mapping eager code sees: a read (`d[k]`, `k in d`, `len(d)`, `d.get(k)`,
// `d.copy()`) is answered from the attributes as they are when it runs
// (instanceDictNow), a write made through the object later shows in the next
// read. `d.update(other_dict)` with str keys stores into the object's
// attributes as dict.update does (copy.py sets a copy's state so; Note [Copies
// of instances] in polyfills_copy.py). Other writes through the view,
// iteration, views of it (keys/items/values) and any other method are not
// modelled and break (GB010/GB011). At a break
// or return the object is rebuilt and the view is its `__dict__`. Classes
// whose instances keep attributes elsewhere are refused: `__slots__` (their
// values sit with the dict entries in the tracker), a `__dict__` attribute of
// their own, and polyfill models of library objects (their state is the
// model's, not the library object's).

VarRef Translator::instanceDict(const VarRef& obj) {
  PyObject* cls = obj->self ? obj->self->obj.get() : nullptr;
  if (!cls || !PyType_Check(cls)) {
    fail(GB::UnmodeledAttribute, ".__dict__ of an object of unknown class");
    return nullptr;
  }
  auto* tp = reinterpret_cast<PyTypeObject*>(cls);
  const std::string what = std::string(".__dict__ of a ") + tp->tp_name;
  if (modelledType(cls) || isPolyfillClass(cls)) {
    fail(GB::UnmodeledAttribute, what + " (a model of a library object)");
    return nullptr;
  }
  if (tp->tp_dictoffset == 0) {
    fail(GB::UnmodeledAttribute, what + " (its instances have no __dict__)");
    return nullptr;
  }
  static PyObject* slotsName = PyUnicode_InternFromString("__slots__");
  static PyObject* dictName = PyUnicode_InternFromString("__dict__");
  PyObject* mro = tp->tp_mro;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (typeDict(k) && PyDict_GetItemWithError(typeDict(k), slotsName)) {
      fail(GB::UnmodeledAttribute, what + " (a class with __slots__)");
      return nullptr;
    }
  }
  PyObject* d = _PyType_Lookup(tp, dictName);  // borrowed
  if (PyErr_Occurred()) PyErr_Clear();
  if (!d || Py_TYPE(d) != &PyGetSetDescr_Type) {
    fail(GB::UnmodeledAttribute, what + " (a __dict__ attribute of its own)");
    return nullptr;
  }
  auto v = makeVar(Var::Kind::InstanceDict);
  v->self = obj;
  return v;
}

VarRef Translator::instanceDictNow(const VarRef& d) {
  const Var& obj = *d->self;
  auto now = makeVar(Var::Kind::Dict);
  now->keys = obj.keys;
  now->items = obj.items;
  return now;
}

}  // namespace xacc::capture::translate
