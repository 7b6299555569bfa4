// `obj.__dict__` and `vars(obj)` of user objects made while tracing (Note
// [Instance dicts]), `object.__new__(cls)`, getattr with a default and
// attribute deletion on them (Note [User objects] in TranslateObjects.cpp).
// Invariant: the view holds no copy of the attributes; every read takes them
// from the object at that moment.
#include "AttributeProtocol.h"
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
// of instances] in polyfills_copy.py). Its type is dict (an exact dict in
// Python), and its keys/values/items views are DictView trackers over the
// object itself (the tracker's keys/items are the dict's entries), so they
// are live as in Python and iterating one sees a change of its keys (a
// RuntimeError in Python: a break); a view is rebuilt as
// `instance_dict(obj).keys()`. Other writes through the view, iterating the view
// itself and any other method are not modelled and break (GB010/GB011). At
// a break or return the object is rebuilt and the view is its instance dict
// (Note [Rebuilt instance dicts]). Classes
// whose instances keep attributes elsewhere are refused: `__slots__` (their
// values sit with the dict entries in the tracker), a `__dict__` attribute of
// their own, and polyfill models of library objects (their state is the
// model's, not the library object's).

// Note [Rebuilt instance dicts]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A user object rebuilt at a break (Codegen.cpp, rebuildUserObject) gets its
// attributes written into its instance dict itself, and an InstanceDict or
// a view of it is rebuilt from that dict: `instance_dict(obj)`
// (instanceDictReader, PyObject_GenericGetDict), never `obj.__dict__` or
// STORE_ATTR. The tracker's keys are the dict's entries, so that is the exact
// state; the attribute protocol would run the class's own __getattribute__,
// __setattr__ or a data descriptor of the same name, user code plain Python
// never ran there (a logging __getattribute__ would log `__dict__`).
// A __slots__ member, kept with the entries in the tracker, is stored by
// object.__setattr__, which finds the member descriptor (C) first.

namespace {
PyObject* readInstanceDict(PyObject*, PyObject* obj) { return PyObject_GenericGetDict(obj, nullptr); }
PyMethodDef kInstanceDictDef = {"xacc_instance_dict", readInstanceDict, METH_O,
                                "the object's instance dict, read without the attribute protocol"};
}  // namespace

PyObject* instanceDictReader() {
  static PyObject* fn = PyCFunction_New(&kInstanceDictDef, nullptr);  // lives as long as the process
  return fn;
}

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

VarRef Translator::objectNew(std::vector<VarRef>& args, std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  // `object.__new__(cls)` (copyreg.__newobj__, a __new__ that calls it): the
  // bare instance type.__call__ would start from, with no __init__ run.
  if (args.size() != 1 || !kwargs.empty() || !args[0]->is(Var::Kind::Object) || !PyType_Check(args[0]->obj.get())) {
    fail(GB::UntraceableCall, "object.__new__ with arguments other than a class");
    return nullptr;
  }
  auto* tp = reinterpret_cast<PyTypeObject*>(args[0]->obj.get());
  const std::string cls = tp->tp_name;
  std::string why = userClassProblem(tp);
  if (!why.empty()) {
    fail(GB::UntraceableCall, "object.__new__(" + cls + "): " + why);
    return nullptr;
  }
  if (PyType_IsSubtype(tp, &PyTuple_Type) ||
      (pyTypes()->module && PyType_IsSubtype(tp, reinterpret_cast<PyTypeObject*>(pyTypes()->module)))) {
    fail(GB::UntraceableCall, "object.__new__(" + cls + ") of a tuple subclass or an nn.Module");
    return nullptr;
  }
  auto self = makeVar(Var::Kind::UserObject);
  self->self = args[0];
  return self;
}

VarRef Translator::userGetattrDefault(const VarRef& obj, PyObject* name, const VarRef& dflt) {
  // getattr(obj, name, default): the default when the lookup finds nothing and
  // runs no code on the way (no attribute on the MRO, no __getattr__), as
  // hasattr answers it (guarded); null (and no failure) where getattr decides.
  static PyObject* getattrName = PyUnicode_InternFromString("__getattr__");
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  if (PyUnicode_Check(name) && ownGetattribute(tp) && !isPolyfillClass(obj->self->obj.get())) {
    // One run of the class's __getattribute__ (Note [AttributeError of a Python __getattribute__]).
    bool missing = false;
    if (VarRef v = userAttrOrMissing(obj, name, missing)) return v;
    return missing ? dflt : nullptr;
  }
  if (!PyUnicode_Check(name) || _PyType_Lookup(tp, name) || _PyType_Lookup(tp, getattrName)) return nullptr;
  return userHasattr(obj, name) == 0 ? dflt : nullptr;
}

// Note [Deleting attributes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// `del obj.name`, `delattr(obj, "name")` and `object.__delattr__(obj, "name")`
// on a user object run type(obj).__delattr__: one written in Python is
// inlined; object's goes to a data descriptor on the MRO (a property's
// deleter is inlined, other descriptors break), a `__slots__` member or the
// instance dict, whose entry is removed (a later read finds the class
// attribute, if any, as Python does). A name that is not set raises
// AttributeError in Python: a break. On anything else (an object read from
// outside the frame, a module) deletion stays a break (GB007).
bool Translator::delAttr(const VarRef& obj, PyObject* name) {
  std::string what = std::string("del .") + PyUnicode_AsUTF8(name);
  if (!obj->is(Var::Kind::UserObject) || !obj->self || !PyType_Check(obj->self->obj.get()))
    return fail(GB::AttributeWrite, what);
  static PyObject* delattrName = PyUnicode_InternFromString("__delattr__");
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  PyObject* da = _PyType_Lookup(tp, delattrName);  // borrowed
  if (!da || da == _PyType_Lookup(&PyBaseObject_Type, delattrName)) return objectDelAttr(obj, name);
  PyRef keep = PyRef::borrow(da);
  if (!PyFunction_Check(da) || !isUserFunction(da))
    return fail(GB::AttributeWrite, what + " through " + tp->tp_name + ".__delattr__, a " + Py_TYPE(da)->tp_name);
  VarRef bound = classAttr(obj, obj->self, da, delattrName);
  if (!bound) return false;
  return inlineFunction(bound->obj.get(), {obj, makeConst(PyRef::borrow(name))}, {}, nullptr) != nullptr;
}

bool Translator::objectDelAttr(const VarRef& obj, PyObject* name) {
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->self->obj.get());
  std::string what = std::string("del .") + PyUnicode_AsUTF8(name);
  if (PyUnicode_CompareWithASCIIString(name, "__class__") == 0 ||
      PyUnicode_CompareWithASCIIString(name, "__dict__") == 0)
    return fail(GB::AttributeWrite, what);
  PyObject* cattr = _PyType_Lookup(tp, name);  // borrowed
  PyRef keep = PyRef::borrow(cattr);
  bool slot = cattr && Py_TYPE(cattr) == &PyMemberDescr_Type;
  if (!slot && cattr && Py_TYPE(cattr)->tp_descr_set) {
    if (Py_TYPE(cattr) == &PyProperty_Type) {
      PyRef d = PyRef::steal(PyObject_GetAttrString(cattr, "fdel"));
      if (!d) PyErr_Clear();
      if (d && PyFunction_Check(d.get()) && isUserFunction(d.get()))
        return inlineFunction(d.get(), {obj}, {}, nullptr) != nullptr;
    }
    return fail(GB::AttributeWrite, what + " (a " + Py_TYPE(cattr)->tp_name + " on " + tp->tp_name + ")");
  }
  if (!slot && tp->tp_dictoffset == 0)
    return fail(GB::AttributeWrite, what + " (a " + tp->tp_name + " has no __dict__: AttributeError)");
  for (size_t j = 0; j < obj->keys.size(); ++j)
    if (PyUnicode_Compare(obj->keys[j].get(), name) == 0) {
      obj->keys.erase(obj->keys.begin() + static_cast<std::ptrdiff_t>(j));
      obj->items.erase(obj->items.begin() + static_cast<std::ptrdiff_t>(j));
      return true;
    }
  return fail(GB::RaisesException, what + ": not set (raises AttributeError)");
}

}  // namespace xacc::capture::translate
