// Calls answered at capture time: builtins and stdlib helpers with a
// reference implementation in xacc/_src/capture/polyfills.py (inlined) or
// pure on constants (run now), functions marked as trace-time constants,
// methods of immutable builtin values on constant arguments, and
// inspect.signature of a known function.
#include <algorithm>
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

/// What a function marked as a trace-time constant may answer: None, bool,
/// int, float or str.
bool scalarConstant(PyObject* v) {
  return v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) ||
         PyUnicode_CheckExact(v);
}

/// A result that is a plain constant (None, bool, int, float, str, bytes, or
/// a tuple or fresh list of those: `name.split("|")`).
bool plainConstant(PyObject* v) {
  if (v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyUnicode_CheckExact(v) ||
      PyBytes_CheckExact(v))
    return true;
  if (PyTuple_CheckExact(v)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(v); ++i)
      if (!plainConstant(PyTuple_GET_ITEM(v, i))) return false;
    return true;
  }
  if (PyList_CheckExact(v)) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); ++i)
      if (!plainConstant(PyList_GET_ITEM(v, i))) return false;
    return true;
  }
  return false;
}

}  // namespace

VarRef Translator::polyfill(PyObject* f, std::vector<VarRef>& args,
                            std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  if (!T->polyfills || !PyDict_Check(T->polyfills)) return nullptr;
  PyObject* entry = PyDict_GetItemWithError(T->polyfills, f);  // borrowed
  if (!entry) {
    PyErr_Clear();  // not there, or not hashable
    return nullptr;
  }
  PyObject* ref = PyTuple_GET_ITEM(entry, 0);
  if (PyUnicode_Check(ref)) return polyfillQuery(ref, args, kwargs);  // TranslateBuiltins.cpp
  if (ref == Py_None) {
    // No reference: the original is pure and its result an immutable value
    // (polyfills.py, PURE_ON_CONSTANTS), called now on constant arguments.
    std::vector<VarRef> all = args;
    for (const auto& kv : kwargs) all.push_back(kv.second);
    // Constants, classes (`np.iinfo(np.int16)`: guarded where they were read)
    // and lists of constants (passed as a fresh copy: `torch.Size([n, 1])`).
    std::function<PyRef(const VarRef&)> constant = [&](const VarRef& a) -> PyRef {
      if (isConst(a) || (a->is(Var::Kind::Object) && PyType_Check(a->obj.get()))) return constOf(a);
      if (!a->is(Var::Kind::List)) return {};
      PyRef l = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(a->items.size())));
      for (size_t i = 0; i < a->items.size(); ++i) {
        PyRef e = constant(a->items[i]);
        if (!e) return {};
        PyList_SET_ITEM(l.get(), static_cast<Py_ssize_t>(i), e.release());
      }
      return l;
    };
    std::vector<PyRef> values;
    for (const VarRef& a : all) {
      values.push_back(constant(a));
      if (!values.back()) {
        if (!failed()) fail(GB::UntraceableCall, nameOf(f) + " on a value that is not a constant");
        return nullptr;
      }
    }
    PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
    for (size_t i = 0; i < args.size(); ++i)
      PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), values[i].release());
    PyRef kw = PyRef::steal(PyDict_New());
    for (size_t i = 0; i < kwargs.size(); ++i)
      PyDict_SetItem(kw.get(), kwargs[i].first.get(), values[args.size() + i].get());
    PyObject* r = PyObject_Call(f, tuple.get(), kw.get());
    if (!r) {
      failPy(GB::RaisesException, nameOf(f));  // Python raises it again where the frame breaks
      return nullptr;
    }
    PyRef result = PyRef::steal(r);
    bool value = plainConstant(r) || PyObject_TypeCheck(r, reinterpret_cast<PyTypeObject*>(T->device)) ||
                 PyObject_TypeCheck(r, reinterpret_cast<PyTypeObject*>(T->dtype)) ||
                 Py_IS_TYPE(r, reinterpret_cast<PyTypeObject*>(T->size));
    return value ? fromConst(r) : makeVar(Var::Kind::Object, result);
  }
  if (PyObject_IsTrue(PyTuple_GET_ITEM(entry, 1))) {
    bool constant = true;
    for (const VarRef& a : args) constant = constant && isConst(a);
    for (const auto& kv : kwargs) constant = constant && isConst(kv.second);
    if (constant) return nullptr;  // the original itself, at capture time
  }
  return inlineFunction(ref, std::move(args), std::move(kwargs), nullptr);
}

VarRef Translator::signatureOf(const VarRef& v) {
  // inspect.signature of a function known at capture time (its identity is
  // guarded where it came from an input): an immutable inspect.Signature,
  // read through constant attribute access (`len(sig.parameters)`).
  PyRef target;
  if (v->is(Var::Kind::BoundMethod) && PyFunction_Check(v->obj.get())) {
    // Bound to a tracked object: the signature without the first parameter,
    // as for any bound method (the receiver itself does not matter).
    target = PyRef::steal(PyMethod_New(v->obj.get(), Py_None));
  } else if (v->is(Var::Kind::Object) && (PyFunction_Check(v->obj.get()) || PyMethod_Check(v->obj.get()))) {
    target = v->obj;
  }
  if (!target) {
    fail(GB::UntraceableCall, "inspect.signature of a value that is not a known function");
    return nullptr;
  }
  PyObject* m = PyImport_ImportModule("inspect");
  PyObject* sig = m ? PyObject_CallMethod(m, "signature", "O", target.get()) : nullptr;
  Py_XDECREF(m);
  if (!sig) {
    failPy(GB::UntraceableCall, "inspect.signature");
    return nullptr;
  }
  return makeConst(PyRef::steal(sig));
}

VarRef Translator::callOnConstants(PyObject* o, std::vector<VarRef>& args,
                                   std::vector<std::pair<PyRef, VarRef>>& kwargs, bool marked) {
  // A method of an immutable builtin value: its receiver is a constant already
  // (guarded by value where it came from an input). Either way the arguments
  // must be constants too.
  auto constArg = [&](const VarRef& v) -> PyRef {
    if (isConst(v)) return constOf(v);
    bool constItems = !marked && v->is(Var::Kind::List);  // "/".join(parts): a fresh copy of the list
    for (const VarRef& i : v->items) constItems = constItems && isConst(i);
    if (constItems) {
      PyRef l = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(v->items.size())));
      for (size_t i = 0; i < v->items.size(); ++i)
        PyList_SET_ITEM(l.get(), static_cast<Py_ssize_t>(i), constOf(v->items[i]).release());
      return l;
    }
    fail(GB::UntraceableCall, nameOf(o) + (marked ? " (a trace-time constant) on a non-constant argument"
                                      : " on a value that is not a constant"));
    return {};
  };
  PyRef tuple, kw;
  if (!callArgs(args, kwargs, constArg, tuple, kw)) return nullptr;
  PyObject* r = PyObject_Call(o, tuple.get(), kw.get());
  if (!r) {
    failPy(GB::UntraceableCall, nameOf(o));
    return nullptr;
  }
  PyRef result = PyRef::steal(r);
  if (marked ? !scalarConstant(r) : !plainConstant(r)) {
    fail(GB::UntraceableCall, nameOf(o) + (marked ? " returned a non-constant value"
                                      : " returned a value that is not a plain constant"));
    return nullptr;
  }
  return fromConst(r);
}
}  // namespace xacc::capture::translate
