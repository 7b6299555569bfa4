// Note [Dict subclasses]
// ~~~~~~~~~~~~~~~~~~~~~~
// An instance of a dict subclass made while tracing (`class Record(dict)` with
// a `__getattr__` reading its keys, a registry with its own `__getitem__`) is a
// Dict tracker whose storage is the modelled dict (keys/items, insertion
// order), obj its class and self the class tracker; the class's own Python
// methods run inlined on it, as for user objects (Note [User objects]):
//
//  * `cls(...)` runs type.__call__: dict.__new__ makes the empty tracker (a
//    `__new__` of the class's own is not modelled); then the first `__init__`
//    on the MRO: dict's fills the storage from one mapping tracker and the
//    keywords, a Python one is inlined (dict.__init__ reached from it through
//    super() is not modelled: a break).
//  * Attribute reads resolve like object.__getattribute__ on the class: a
//    function of the class binds to the instance and is inlined, a property's
//    getter is inlined, dict's own methods are the modelled dict's, and a
//    name found nowhere runs the class's `__getattr__` inlined. Everything read
//    on the class is guarded through the class's source (classAttr).
//  * `d[k]` and `d[k] = v` run the class's `__getitem__`/`__setitem__` when it
//    has one (its `super().__getitem__` reads the storage), else the storage.
//
// Only what the class adds is run as its code; so a class is modelled only if
// every other name it defines is new to dict: overriding any other dict method
// (`get`, `keys`, `__iter__`, `__eq__`, ...) would leave the modelled dict's
// operations answering for code the class replaced, and `__missing__`,
// `__getattribute__`, `__setattr__`, `__delattr__` and `__del__` change what
// every access does. Bases other than dict itself (OrderedDict, defaultdict,
// Counter: their methods call the overridable ones) and metaclasses with their
// own __call__ are not modelled either: all such classes break (GB002) when
// called, as before. Instance attributes (`self.x = ...`) are a break.
//
// At a break or a return the instance is rebuilt as `dict.__new__(cls)`
// filled by `dict.update(obj, {...})` (dict's C update, which runs no
// overridden `__setitem__`): the storage eager has, the class's `__init__`
// not run again (Codegen.cpp).
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

/// Names a class may define on top of dict: what the model runs as its code.
const char* const kDictOverridable[] = {"__init__", "__getitem__", "__setitem__"};
/// Names that change every access, defined anywhere on the MRO: not modelled.
const char* const kDictUnmodelled[] = {"__missing__", "__getattribute__", "__setattr__", "__delattr__", "__del__",
                                       "__new__"};
/// Class-body bookkeeping every class has; not methods.
const char* const kClassBookkeeping[] = {"__module__",  "__qualname__", "__doc__",           "__dict__",
                                         "__weakref__", "__annotations__", "__firstlineno__", "__static_attributes__",
                                         "__orig_bases__", "__parameters__"};

bool named(PyObject* key, const char* const* names, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0) return true;
  return false;
}

template <size_t N>
bool named(PyObject* key, const char* const (&names)[N]) {
  return named(key, names, N);
}

/// `name` on the MRO of `tp` (borrowed) and the class holding it.
PyObject* lookupOwner(PyTypeObject* tp, PyObject* name, PyTypeObject** owner) {
  PyObject* mro = tp->tp_mro;
  *owner = nullptr;
  for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    PyObject* d = typeDict(k);
    if (!d) continue;
    PyObject* v = PyDict_GetItemWithError(d, name);
    if (v) {
      *owner = k;
      return v;
    }
    if (PyErr_Occurred()) PyErr_Clear();
  }
  return nullptr;
}

PyObject* rebuildDictSubclass(PyObject*, PyObject* args) {
  PyObject *cls, *storage;
  if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyDict_Type, &storage)) return nullptr;
  if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), &PyDict_Type)) {
    PyErr_SetString(PyExc_TypeError, "not a dict subclass");
    return nullptr;
  }
  PyRef empty = PyRef::steal(PyTuple_New(0));
  PyObject* d = PyDict_Type.tp_new(reinterpret_cast<PyTypeObject*>(cls), empty.get(), nullptr);
  if (!d) return nullptr;
  if (PyDict_Update(d, storage) < 0) {  // dict's own merge: no overridden __setitem__ runs
    Py_DECREF(d);
    return nullptr;
  }
  return d;
}

PyMethodDef kRebuildDef = {"xacc_rebuild_dict_subclass", rebuildDictSubclass, METH_VARARGS,
                           "dict.__new__(cls) filled with dict.update(obj, storage)"};

}  // namespace

PyObject* dictSubclassRebuilder() {
  static PyObject* fn = PyCFunction_New(&kRebuildDef, nullptr);  // lives as long as the process
  return fn;
}

std::string dictClassProblem(PyTypeObject* tp) {
  if (Py_TYPE(tp)->tp_call != PyType_Type.tp_call) return "a metaclass with its own __call__";
  if (tp->tp_flags & Py_TPFLAGS_IS_ABSTRACT) return "an abstract class";
  PyObject* mro = tp->tp_mro;
  if (!mro) return "a class without an MRO";
  static PyObject* dictType = reinterpret_cast<PyObject*>(&PyDict_Type);
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* k = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    if (k == &PyDict_Type || k == &PyBaseObject_Type) continue;
    if (!(k->tp_flags & Py_TPFLAGS_HEAPTYPE)) return std::string("a subclass of ") + k->tp_name;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(typeDict(k), &pos, &key, &value)) {
      if (!PyUnicode_Check(key) || named(key, kClassBookkeeping) || named(key, kDictOverridable)) continue;
      if (named(key, kDictUnmodelled)) return std::string(k->tp_name) + " defines " + PyUnicode_AsUTF8(key);
      int onDict = PyObject_HasAttr(dictType, key);
      if (onDict) return std::string(k->tp_name) + " overrides dict." + PyUnicode_AsUTF8(key);
    }
  }
  if (tp->tp_new != PyDict_Type.tp_new) return "a __new__ of its own";
  return "";
}

bool Translator::dictOverrides(const VarRef& obj, const char* dunder) const {
  PyRef name = PyRef::steal(PyUnicode_FromString(dunder));
  PyTypeObject* owner = nullptr;
  PyObject* m = lookupOwner(reinterpret_cast<PyTypeObject*>(obj->obj.get()), name.get(), &owner);
  return m && owner != &PyDict_Type && owner != &PyBaseObject_Type;
}

VarRef Translator::constructDict(const VarRef& clsVar, std::vector<VarRef>& args,
                                 std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  auto* tp = reinterpret_cast<PyTypeObject*>(clsVar->obj.get());
  std::string why = dictClassProblem(tp);
  if (!why.empty()) {
    fail(GB::UntraceableCall, std::string(tp->tp_name) + "(): " + why);
    return nullptr;
  }
  auto d = makeVar(Var::Kind::Dict, clsVar->obj);
  d->self = clsVar;
  static PyObject* initName = PyUnicode_InternFromString("__init__");
  PyTypeObject* owner = nullptr;
  PyObject* init = lookupOwner(tp, initName, &owner);
  if (init && owner != &PyDict_Type && owner != &PyBaseObject_Type) {
    if (!PyFunction_Check(init) || !isUserFunction(init)) {
      fail(GB::UntraceableCall, std::string(tp->tp_name) + ".__init__ is a " + Py_TYPE(init)->tp_name);
      return nullptr;
    }
    VarRef bound = classAttr(d, clsVar, init, initName);  // guarded through the class's source
    if (!bound) return nullptr;
    std::vector<VarRef> all{d};
    all.insert(all.end(), args.begin(), args.end());
    VarRef r = inlineFunction(bound->obj.get(), std::move(all), std::move(kwargs), nullptr);
    if (!r) return nullptr;
    if (!r->is(Var::Kind::Const) || r->obj.get() != Py_None) {
      fail(GB::RaisesException, std::string(tp->tp_name) + ".__init__ returned a value (TypeError)");
      return nullptr;
    }
    return d;
  }
  // dict.__init__(mapping=(), **kwargs): the mapping's items, then the keywords.
  if (args.size() > 1) {
    fail(GB::RaisesException, std::string(tp->tp_name) + "() takes at most 1 positional argument (TypeError)");
    return nullptr;
  }
  auto put = [&](PyObject* k, const VarRef& v) {
    for (size_t j = 0; j < d->keys.size(); ++j) {
      int eq = PyObject_RichCompareBool(d->keys[j].get(), k, Py_EQ);
      if (eq < 0) return false;
      if (eq) {
        d->items[j] = v;
        return true;
      }
    }
    d->keys.push_back(PyRef::borrow(k));
    d->items.push_back(v);
    return true;
  };
  if (!args.empty()) {
    const VarRef& m = args[0];
    if (!m->is(Var::Kind::Dict) || isModelOutputVar(m) || (isDictSubclassVar(m) && dictOverrides(m, "__getitem__"))) {
      fail(GB::UntraceableCall, std::string(tp->tp_name) + "() from a value other than a plain dict");
      return nullptr;
    }
    for (size_t j = 0; j < m->keys.size(); ++j)
      if (!put(m->keys[j].get(), m->items[j])) {
        failPy(GB::UnsupportedType, "dict key comparison");
        return nullptr;
      }
  }
  for (auto& [k, v] : kwargs)
    if (!put(k.get(), v)) {
      failPy(GB::UnsupportedType, "dict key comparison");
      return nullptr;
    }
  return d;
}

VarRef Translator::dictSubclassAttr(const VarRef& obj, PyObject* name) {
  const VarRef& clsVar = obj->self;
  auto* tp = reinterpret_cast<PyTypeObject*>(obj->obj.get());
  std::string what = std::string(".") + PyUnicode_AsUTF8(name) + " of a " + tp->tp_name;
  if (PyUnicode_CompareWithASCIIString(name, "__class__") == 0) return clsVar;
  PyTypeObject* owner = nullptr;
  PyObject* cattr = lookupOwner(tp, name, &owner);
  PyRef keep = PyRef::borrow(cattr);
  if (cattr && owner == &PyDict_Type) {
    // dict's __init__ runs only from type.__call__ here; fromkeys makes an
    // instance of type(self), which the modelled dict's would not.
    if (!PyUnicode_CompareWithASCIIString(name, "__init__") || !PyUnicode_CompareWithASCIIString(name, "fromkeys")) {
      fail(GB::UnmodeledAttribute, what);
      return nullptr;
    }
    auto m = makeVar(Var::Kind::ContainerMethod);  // dict's own method on the storage
    m->self = obj;
    m->name = PyUnicode_AsUTF8(name);
    return m;
  }
  if (cattr && owner != &PyBaseObject_Type) {
    if (Py_TYPE(cattr) == &PyProperty_Type) {
      PyRef g = PyRef::steal(PyObject_GetAttrString(cattr, "fget"));
      if (!g) PyErr_Clear();
      if (g && PyFunction_Check(g.get()) && isUserFunction(g.get())) return inlineFunction(g.get(), {obj}, {}, nullptr);
    }
    if (Py_TYPE(cattr)->tp_descr_set) {  // other data descriptors (__dict__, slots, ...)
      fail(GB::UnmodeledAttribute, what + " is a " + Py_TYPE(cattr)->tp_name);
      return nullptr;
    }
    return classAttr(obj, clsVar, cattr, name);
  }
  if (cattr) {  // object's own (__eq__ aside, dict has them all): not modelled
    fail(GB::UnmodeledAttribute, what);
    return nullptr;
  }
  static PyObject* getattrName = PyUnicode_InternFromString("__getattr__");
  PyObject* ga = lookupOwner(tp, getattrName, &owner);
  if (ga && PyFunction_Check(ga) && isUserFunction(ga)) {
    VarRef bound = classAttr(obj, clsVar, ga, getattrName);  // guarded through the class's source
    if (!bound) return nullptr;
    return inlineFunction(bound->obj.get(), {obj, makeConst(PyRef::borrow(name))}, {}, nullptr);
  }
  fail(GB::UnmodeledAttribute, what + " (AttributeError)");
  return nullptr;
}

}  // namespace xacc::capture::translate
