// Attribute reads of user objects made while tracing: hasattr(), `obj.name`
// as type(obj).__getattribute__ runs it (Note [Attribute protocol]), and
// object's generic lookup (Note [User objects] in TranslateObjects.cpp).
#include "AttributeProtocol.h"
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

PyObject* ownGetattribute(PyTypeObject* tp) {
  static PyObject* gaName = PyUnicode_InternFromString("__getattribute__");
  static PyObject* objects = _PyType_Lookup(&PyBaseObject_Type, gaName);  // borrowed, lives forever
  PyObject* ga = _PyType_Lookup(tp, gaName);  // borrowed
  return ga && ga != objects ? ga : nullptr;
}

VarRef Translator::userAttrOrMissing(const VarRef& obj, PyObject* name, bool& missing) {
  const bool clean = !failed();
  missing = false;
  if (VarRef v = userAttr(obj, name)) return v;
  if (clean && failure_.missingAttr) {  // Note [AttributeError of a Python __getattribute__]
    failure_ = Failure{};
    missing = true;
  }
  return nullptr;
}

int Translator::userHasattr(const VarRef& obj, PyObject* name) {
  // hasattr() is getattr() that answers False on AttributeError. Where the
  // lookup runs code (a property's getter, a Python __get__, __getattr__) it
  // is run as getattr runs it (userAttr): a value is True, and any failure,
  // an AttributeError included (not modelled), stays a failure. A polyfill
  // stand-in's attributes are not its library object's (Note [Modelled
  // library objects]): not answered.
  const VarRef& clsVar = obj->self;
  auto* tp = reinterpret_cast<PyTypeObject*>(clsVar->obj.get());
  if (isPolyfillClass(clsVar->obj.get()) || !PyUnicode_Check(name)) return -2;
  auto byGetattr = [&]() { return userAttr(obj, name) ? 1 : -1; };
  if (ownGetattribute(tp)) {  // Note [Attribute protocol]: every name runs it
    bool missing = false;
    if (userAttrOrMissing(obj, name, missing)) return 1;
    return missing ? 0 : -1;
  }
  if (PyUnicode_CompareWithASCIIString(name, "__class__") == 0 ||
      PyUnicode_CompareWithASCIIString(name, "__dict__") == 0)
    return 1;
  PyObject* cattr = _PyType_Lookup(tp, name);
  if (cattr && Py_TYPE(cattr) == &PyMemberDescr_Type) {  // a __slots__ member: set or not in the instance's storage
    for (const PyRef& k : obj->keys)
      if (PyUnicode_Compare(k.get(), name) == 0) return 1;
    return 0;
  }
  if (cattr && Py_TYPE(cattr)->tp_descr_set) return byGetattr();  // a data descriptor wins
  for (const PyRef& k : obj->keys)
    if (PyUnicode_Compare(k.get(), name) == 0) return 1;
  if (cattr) {
    bool plain = !Py_TYPE(cattr)->tp_descr_get || PyFunction_Check(cattr) ||
                 Py_TYPE(cattr) == &PyStaticMethod_Type || Py_TYPE(cattr) == &PyClassMethod_Type;
    if (!plain) return byGetattr();
    guardHas(clsVar->source, Leaf::Kind::HasAttr, name, true);  // the class keeps it
    return 1;
  }
  static PyObject* getattrName = PyUnicode_InternFromString("__getattr__");
  if (_PyType_Lookup(tp, getattrName)) return byGetattr();
  // The metaclass's attributes (`__name__`, `mro`) are the class's, not its
  // instances': absent from the MRO dicts but found on the class, not answered.
  if (PyObject_HasAttr(clsVar->obj.get(), name)) return -2;
  guardHas(clsVar->source, Leaf::Kind::HasAttr, name, false);  // the class does not gain it
  return 0;
}

namespace {

/// object.__getattribute__ of a user object; `withGetattr` runs the class's __getattr__ when nothing is found.
VarRef genericUserAttr(Translator& t, const VarRef& obj, PyObject* name, bool withGetattr) {
  const VarRef& clsVar = obj->self;
  auto* tp = reinterpret_cast<PyTypeObject*>(clsVar->obj.get());
  if (PyUnicode_CompareWithASCIIString(name, "__class__") == 0) {
    if (PyObject* lib = modelledType(clsVar->obj.get()))  // Note [Modelled library objects]
      return makeVar(Var::Kind::Object, PyRef::borrow(lib));
    return clsVar;
  }
  if (PyUnicode_CompareWithASCIIString(name, "__dict__") == 0) return t.instanceDict(obj);  // TranslateVars.cpp
  PyObject* cattr = _PyType_Lookup(tp, name);
  PyRef keep = PyRef::borrow(cattr);
  if (cattr && Py_TYPE(cattr) == &PyMemberDescr_Type) {  // a __slots__ member: the instance's storage
    for (size_t j = 0; j < obj->keys.size(); ++j)
      if (PyUnicode_Compare(obj->keys[j].get(), name) == 0) return obj->items[j];
    t.failMissingAttr(std::string(".") + PyUnicode_AsUTF8(name) + ": an unset slot of a " + std::string(tp->tp_name) + " (AttributeError)");
    return nullptr;
  }
  if (cattr && Py_TYPE(cattr)->tp_descr_set) {  // a data descriptor wins over the instance dict
    if (Py_TYPE(cattr) == &PyProperty_Type) {
      PyRef g = PyRef::steal(PyObject_GetAttrString(cattr, "fget"));
      if (!g) PyErr_Clear();
      if (g && PyFunction_Check(g.get()) && isUserFunction(g.get())) return t.inlineFunction(g.get(), {obj}, {}, nullptr);
    }
    t.fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " is a " + Py_TYPE(cattr)->tp_name);
    return nullptr;
  }
  for (size_t j = 0; j < obj->keys.size(); ++j)
    if (PyUnicode_Compare(obj->keys[j].get(), name) == 0) return obj->items[j];
  if (cattr) return t.classAttr(obj, clsVar, cattr, name);
  static PyObject* getattrName = PyUnicode_InternFromString("__getattr__");
  if (PyObject* ga = withGetattr ? _PyType_Lookup(tp, getattrName) : nullptr) {
    if (PyFunction_Check(ga) && isUserFunction(ga)) {
      PyRef k = PyRef::borrow(ga);
      return t.inlineFunction(ga, {obj, makeConst(PyRef::borrow(name))}, {}, nullptr);
    }
  }
  t.failMissingAttr(std::string(".") + PyUnicode_AsUTF8(name) + " of a " + std::string(tp->tp_name) + " (AttributeError)");
  return nullptr;
}

}  // namespace

// Note [Attribute protocol]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// `obj.name` (and getattr, hasattr, vars, LOAD_METHOD) on a user object is
// type(obj).__getattribute__(obj, name), with __getattr__ run when that
// raises AttributeError (slot_tp_getattr_hook). Without a __getattribute__ of
// its own the class has object's: genericUserAttr, __getattr__ run where the
// generic lookup finds nothing. One written in Python is inlined for every
// name, `__class__` and `__dict__` included; inside it `super().__getattribute__`
// and `object.__getattribute__(obj, name)` are object's (genericUserAttr
// without __getattr__). An AttributeError it raises is a break (an exception
// the translator does not catch), except the one hasattr/getattr-with-default
// take (Note [AttributeError of a Python __getattribute__] below); so a class
// with both a Python __getattribute__ and a __getattr__ breaks at any read:
// the fallback is decided by that exception. isinstance() that the type answers False breaks
// too: Python then asks `obj.__class__`, which such a class answers itself.
VarRef Translator::userAttr(const VarRef& obj, PyObject* name) {
  const VarRef& clsVar = obj->self;
  auto* tp = reinterpret_cast<PyTypeObject*>(clsVar->obj.get());
  if (PyObject* ga = ownGetattribute(tp)) {
    PyRef keep = PyRef::borrow(ga);
    static PyObject* getattrName = PyUnicode_InternFromString("__getattr__");
    if (!PyFunction_Check(ga) || !isUserFunction(ga)) {
      fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " through " + std::string(tp->tp_name) +
                                       ".__getattribute__, a " + Py_TYPE(ga)->tp_name);
      return nullptr;
    }
    if (_PyType_Lookup(tp, getattrName)) {
      fail(GB::UnmodeledAttribute, std::string(".") + PyUnicode_AsUTF8(name) + " of a " + std::string(tp->tp_name) +
                                       " defining both __getattribute__ and __getattr__");
      return nullptr;
    }
    return inlineFunction(ga, {obj, makeConst(PyRef::borrow(name))}, {}, nullptr);
  }
  return genericUserAttr(*this, obj, name, true);
}

// Note [AttributeError of a Python __getattribute__]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// hasattr(obj, name) and getattr(obj, name, default) on a user object whose
// class has a __getattribute__ written in Python run it inlined (Note
// [Attribute protocol]); where it lets an AttributeError out, Python answers
// False / the default (the exception itself is never seen). The translator
// knows that exception exactly in one case: object's lookup of a missing
// name (or an unset slot) inside it, failMissingAttr, which marks the failure
// (Failure::missingAttr). The mark stays only while nothing Python would run
// on the way out is passed: runFrame clears it at an instruction inside a
// try range (an except, finally or with block of that frame would run), in a
// frame that does not pass exceptions to its caller (a polyfill's reference,
// a lazily run generator) and where the grad mode changed. userHasattr and
// userGetattrDefault (through userAttrOrMissing) then take the marked failure as that AttributeError:
// False, the default, with every effect the inlined code had before the
// raise kept, as in Python. An unmarked failure stays a break. The class's
// __getattribute__ runs once, as in Python (getattr with a default does not
// ask hasattr first).
bool Translator::failMissingAttr(const std::string& detail) {
  const bool first = !failed();
  fail(GB::UnmodeledAttribute, detail);
  if (first) failure_.missingAttr = true;
  return false;
}

VarRef objectGetAttribute(Translator& t, const VarRef& obj, PyObject* name) {
  return genericUserAttr(t, obj, name, false);
}

}  // namespace xacc::capture::translate
