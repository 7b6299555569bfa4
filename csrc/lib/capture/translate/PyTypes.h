// Python objects the translator compares against (torch types, builtins),
// looked up once per process and kept alive for its lifetime.
#pragma once

#include <Python.h>

namespace xacc::capture::translate {

// Note [Type dicts]: from 3.12 a static builtin type (dict, object, int, ...)
// keeps its __dict__ in the interpreter and its tp_dict field is NULL; read a
// class's own namespace through typeDict, never tp_dict, or an MRO walk skips
// every builtin base (3.12: `.items` of a dict subclass was "not found"). The
// dict lives as long as the type, so a borrowed reference is returned.
inline PyObject* typeDict(PyTypeObject* tp) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* d = PyType_GetDict(tp);
  Py_XDECREF(d);
  return d;
#else
  return tp->tp_dict;
#endif
}

struct PyTypes {
  PyObject* tensor = nullptr;     ///< torch.Tensor
  PyObject* parameter = nullptr;  ///< torch.nn.Parameter
  PyObject* module = nullptr;     ///< torch.nn.Module
  PyObject* moduleList = nullptr;
  PyObject* sequential = nullptr;
  PyObject* moduleDict = nullptr;
  PyObject* size = nullptr;  ///< torch.Size
  PyObject* dtype = nullptr;
  PyObject* device = nullptr;
  PyObject* memoryFormat = nullptr;
  PyObject* layout = nullptr;
  PyObject* opOverload = nullptr;
  PyObject* opOverloadPacket = nullptr;
  PyObject* tensorBase = nullptr;  ///< torch._C.TensorBase
  PyObject* torchDevice = nullptr; ///< torch.device (the callable)
  PyObject* cudaSynchronize = nullptr;
  PyObject* moduleModule = nullptr;  ///< torch.nn.modules.module (global hooks)
  PyObject* getattrFn = nullptr;     ///< builtins.getattr
  PyObject* noGrad = nullptr;        ///< torch.no_grad
  PyObject* enableGrad = nullptr;    ///< torch.enable_grad
  PyObject* isGradEnabled = nullptr; ///< torch.is_grad_enabled
  PyObject *super, *set, *frozenset;
  // builtins the translator models
  PyObject *len, *range, *enumerate, *zip, *reversed, *iter, *next, *isinstance, *type, *getattr,
      *hasattr, *tuple, *list, *dict, *sum, *min, *max, *abs, *intFn, *floatFn, *boolFn, *callable,
      *print, *str, *round, *sorted, *any, *all, *slice, *divmod, *pow, *issubclass, *repr, *hash;
  // NumPy capture (null when numpy cannot be imported).
  PyObject* ndarray = nullptr;       ///< numpy.ndarray
  PyObject* npGeneric = nullptr;     ///< numpy.generic (scalar types)
  PyObject* npUfunc = nullptr;       ///< numpy.ufunc
  PyObject* npDtype = nullptr;       ///< numpy.dtype
  PyObject* numpyRun = nullptr;      ///< xacc._src.capture.numpy_ops.run
  PyObject* npCheckDtype = nullptr;  ///< numpy_ops.check_dtype
  PyObject* npDtypeOf = nullptr;     ///< numpy_ops.np_dtype
  PyObject* npToArray = nullptr;     ///< numpy_ops.to_numpy
  PyObject* npToScalar = nullptr;    ///< numpy_ops.to_numpy_scalar
  PyObject* fromNumpy = nullptr;     ///< torch.from_numpy
  PyObject* asTensor = nullptr;      ///< torch.as_tensor
  PyObject* torchAsarray = nullptr;  ///< torch.asarray
  PyObject* torchTensor = nullptr;   ///< torch.tensor
  PyObject* mathModule = nullptr;
  PyObject* symSize = nullptr;  ///< xacc._src.capture.host.SymSize (a dynamic size read by Python)
  PyObject* symShape = nullptr;  ///< xacc._src.capture.host.SymShape (a torch.Size read with SymSize items)
  PyObject* operatorModule = nullptr;
  PyObject* partial = nullptr;           ///< functools.partial
  PyObject* inspectSignature = nullptr;  ///< inspect.signature
  PyObject* osEnviron = nullptr;         ///< os.environ
  PyObject* mappingGet = nullptr;        ///< collections.abc.Mapping.get
  PyObject* mappingContains = nullptr;   ///< collections.abc.Mapping.__contains__
  PyObject* finfo = nullptr;             ///< torch.finfo
  PyObject* iinfo = nullptr;             ///< torch.iinfo
  PyObject* polyfills = nullptr;         ///< xacc._src.capture.polyfills.REFERENCE
  PyObject* listIterAt = nullptr;        ///< xacc._src.capture.iterators.list_iter_at
  PyObject* reversedAt = nullptr;        ///< xacc._src.capture.iterators.reversed_at
  PyObject* dictIterAt = nullptr;        ///< xacc._src.capture.iterators.dict_iter_at
  PyObject* viewOf = nullptr;            ///< xacc._src.capture.convert.view_of (Note [Returned views])
};

/// CPython's method-wrapper type (a slot wrapper bound to an object, e.g.
/// `None.__repr__`), read at run time: its C symbol _PyMethodWrapper_Type is
/// not exported from 3.13 on (internal header), so naming it fails to build there.
inline PyTypeObject* methodWrapperType() {
  static PyTypeObject* type = [] {
    PyObject* bound = PyObject_GetAttrString(Py_None, "__repr__");
    PyTypeObject* t = bound ? Py_TYPE(bound) : nullptr;
    Py_XDECREF(bound);  // the type outlives it: a static builtin type
    if (!t) PyErr_Clear();
    return t;
  }();
  return type;
}

/// The table, filled on first use (GIL held). Null if torch cannot be imported.
const PyTypes* pyTypes();

/// `module.name` (a new reference), or null with the Python error set.
PyObject* moduleAttr(const char* module, const char* name);

}  // namespace xacc::capture::translate
