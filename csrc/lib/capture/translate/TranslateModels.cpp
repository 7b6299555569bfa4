// Note [Modelled library objects]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Some library classes written in C (collections.OrderedDict, defaultdict,
// Counter, deque) are modelled by Python classes in
// xacc/_src/capture/polyfills_collections.py: calling the original inlines its
// reference, which makes a user object (Note [User objects]) of the model
// class, whose methods and dunder methods are plain Python the translator
// inlines. Unlike the context-manager stand-ins (Note [Context managers]),
// such a model is shown as the library object, so it declares two class
// attributes:
//
//  * `_xacc_type`: the library class. typeOf answers it (type(), isinstance(),
//    `obj.__class__`), so code that dispatches on the type sees what it sees
//    in eager;
//  * `_xacc_rebuild`: a function of the model object that returns the real
//    object. At a graph break or a return Codegen rebuilds the model object
//    (object.__new__ and its attributes, Note [User objects]) and calls it;
//    every reference to the tracker then gets that one real object.
//
// A polyfill class without them is never shown: its type is not answered and
// rebuilding it breaks the frame. Besides the operators, len(), [] and truth
// of Note [Operator protocols], a user object is iterated through its class's
// `__iter__` (GET_ITER, list(), unpacking, for) and answers `in` through
// `__contains__`, as CPython's tp_iter and sq_contains slots do.
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

/// `name` in the class dicts along the MRO of polyfill class `cls` (borrowed), null when none.
PyObject* modelAttr(PyObject* cls, const char* name) {
  if (!isPolyfillClass(cls)) return nullptr;
  PyRef n = PyRef::steal(PyUnicode_InternFromString(name));
  return _PyType_Lookup(reinterpret_cast<PyTypeObject*>(cls), n.get());
}

}  // namespace

PyObject* modelledType(PyObject* cls) {
  PyObject* t = modelAttr(cls, "_xacc_type");
  return t && PyType_Check(t) ? t : nullptr;
}

PyObject* modelRebuilder(PyObject* cls) {
  if (!modelledType(cls)) return nullptr;
  PyObject* r = modelAttr(cls, "_xacc_rebuild");
  return r && Py_IS_TYPE(r, &PyStaticMethod_Type) ? wrappedFunc(r) : nullptr;
}

VarRef Translator::userIter(const VarRef& obj) {
  static PyObject* iterName = PyUnicode_InternFromString("__iter__");
  bool handled = false;
  VarRef r = userDunder(obj, iterName, {}, handled);
  if (failed()) return nullptr;
  if (!handled) {
    // No __iter__: CPython would try the legacy __getitem__ protocol, or raise TypeError.
    fail(GB::UnsupportedType, std::string("iteration over a ") +
                                  reinterpret_cast<PyTypeObject*>(obj->self->obj.get())->tp_name +
                                  " without __iter__");
    return nullptr;
  }
  if (!r) return nullptr;
  if (!r->is(Var::Kind::Iter)) {  // an object of a class with __next__ is not modelled
    fail(GB::UnsupportedType, "__iter__ returned a value that is not an iterator the translator models");
    return nullptr;
  }
  return r;
}

/// What type() answers for a tracked value (null: not answered, a break); a
/// model's is its library class.
PyObject* Translator::typeOf(const VarRef& v) {
  switch (v->kind) {
    case Var::Kind::Tensor: {
      if (v->isNumpy()) return numpyType(v);
      auto it = tensorTypes_.find(v->obj.get());  // Note [Tensor types]
      return it != tensorTypes_.end() ? it->second.get() : pyTypes()->tensor;
    }
    case Var::Kind::Const:
    case Var::Kind::Object:
    case Var::Kind::SymScalar:
    case Var::Kind::Set: return reinterpret_cast<PyObject*>(Py_TYPE(v->obj.get()));
    case Var::Kind::Tuple:
      if (v->torchSize) return pyTypes()->size;  // Note [Symbolic shapes keep their type]
      return v->obj ? v->obj.get() : reinterpret_cast<PyObject*>(&PyTuple_Type);
    case Var::Kind::InstanceDict: return reinterpret_cast<PyObject*>(&PyDict_Type);  // Note [Instance dicts]
    case Var::Kind::UserObject:  // a polyfill's stand-in is never shown (Note [Context managers])
      if (PyObject* lib = modelledType(v->self->obj.get())) return lib;  // Note [Modelled library objects]
      return isPolyfillClass(v->self->obj.get()) ? nullptr : v->self->obj.get();
    case Var::Kind::List: return reinterpret_cast<PyObject*>(&PyList_Type);
    case Var::Kind::Dict: return v->obj ? v->obj.get() : reinterpret_cast<PyObject*>(&PyDict_Type);
    case Var::Kind::DictView:
      if (v->self->obj) return nullptr;  // a ModelOutput's (OrderedDict) views have types of their own
      return reinterpret_cast<PyObject*>(v->name == "keys"     ? &PyDictKeys_Type
                                         : v->name == "values" ? &PyDictValues_Type
                                                               : &PyDictItems_Type);
    default: return nullptr;
  }
}

int Translator::userContains(const VarRef& obj, const VarRef& key) {
  static PyObject* containsName = PyUnicode_InternFromString("__contains__");
  bool handled = false;
  VarRef r = userDunder(obj, containsName, {key}, handled);
  if (failed()) return -1;
  if (!handled) return -2;  // the caller's default
  if (!r) return -1;
  return truth(r);
}

}  // namespace xacc::capture::translate
