// NumPy capture: ndarrays in a captured frame as tensors of the same graph.
//
// Note [NumPy capture]: an ndarray is tracked as a Tensor tracker whose `np`
// field says Array (or Scalar, for NumPy scalars such as the `np.float64` a
// reduction returns). Its meta twin and graph value are those of a tensor that
// shares the array's memory: an input array enters through the guard step
// `Access::AsTensor` (`torch.from_numpy`, zero-copy, writable arrays of the
// dtypes numpy_ops.DTYPES lists), and every NumPy operation on it (a `np.*`
// call, an operator, a subscript, a method or property) is recorded by
// xacc/_src/capture/numpy_ops.py:run, which gives it NumPy's semantics and
// checks the result's dtype and shape against NumPy's own; what it cannot
// reproduce is a graph break GB021. The flag decides what the user sees at the
// graph's edge: flagged outputs come back as `tensor.numpy()` (zero-copy) or
// `tensor.numpy()[()]`. Mixing the two worlds is explicit: `.numpy()` flags a
// tensor, `torch.from_numpy`/`torch.as_tensor`/`torch.asarray` unflag an array
// (same memory), `torch.tensor` copies; a flagged value reaching any other
// torch call, or a torch tensor reaching a NumPy call, is a break (eager mode
// would convert or fail, and the two differ).
#include <algorithm>
#include <cstring>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

bool isA(PyObject* o, PyObject* type) {
  return type && PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(type));
}

/// The pending Python error as a break: a GraphBreak's own code and detail,
/// else `code` with `what` and the error's message. Clears the error.
std::pair<GB, std::string> pendingBreak(GB code, const std::string& what) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyErr_NormalizeException(&et, &ev, &etb);
  std::pair<GB, std::string> out{code, what};
  PyObject* c = ev ? PyObject_GetAttrString(ev, "code") : nullptr;
  PyObject* d = c ? PyObject_GetAttrString(ev, "detail") : nullptr;
  if (c && d && PyUnicode_Check(c) && PyUnicode_Check(d)) {
    out = {hostBreak(PyUnicode_AsUTF8(c), code), PyUnicode_AsUTF8(d)};
  } else if (ev) {
    std::string m = pyText(ev);
    out.second += ": " + m.substr(0, m.find('\n'));
  }
  Py_XDECREF(c);
  Py_XDECREF(d);
  PyErr_Clear();
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(etb);
  return out;
}

/// Copy of tensor tracker `v` with another view of the same value.
VarRef retag(const VarRef& v, Var::Np np) {
  auto r = makeVar(Var::Kind::Tensor, v->obj);
  r->np = np;
  return r;
}

}  // namespace

bool Translator::numpyEnabled() const { return pyTypes()->ndarray && pyTypes()->numpyRun; }

VarRef Translator::numpyInput(PyObject* array, const SourceRef& source) {
  const PyTypes* T = pyTypes();
  if (Py_TYPE(array) != reinterpret_cast<PyTypeObject*>(T->ndarray)) {
    fail(GB::NumpyOperation, std::string("ndarray subclass ") + Py_TYPE(array)->tp_name);
    return nullptr;
  }
  PyRef ok = PyRef::steal(PyObject_CallOneArg(T->npCheckDtype, array));
  if (!ok) {
    auto [code, detail] = pendingBreak(GB::NumpyOperation, "ndarray dtype");
    fail(code, detail);
    return nullptr;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(array, &view, PyBUF_WRITABLE | PyBUF_STRIDES) < 0) {
    PyErr_Clear();
    fail(GB::NumpyOperation, "read-only or non-strided ndarray (torch.from_numpy cannot share it)");
    return nullptr;
  }
  PyBuffer_Release(&view);
  PyRef tensor = PyRef::steal(PyObject_CallOneArg(T->fromNumpy, array));
  if (!tensor) {
    PyObject *et, *ev, *etb;
    PyErr_Fetch(&et, &ev, &etb);
    std::string why = ev ? pyText(ev) : "torch.from_numpy failed";
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    fail(GB::NumpyOperation, "ndarray: " + why.substr(0, why.find('\n')));
    return nullptr;
  }
  int n = -1;
  if (source) {
    guardType(source, array);
    n = tree_.node(node(source), Access::AsTensor, 0, nullptr);
  }
  std::string code, detail;
  PyRef meta = host_.tensorInput(tensor.get(), n, source != nullptr, code, detail);
  if (!meta) {
    fail(hostBreak(code, GB::NumpyOperation), detail);
    return nullptr;
  }
  auto v = makeVar(Var::Kind::Tensor, std::move(meta), source);
  v->np = Var::Np::Array;
  return v;
}

VarRef Translator::numpyRun(const char* kind, PyObject* target, const std::vector<VarRef>& args,
                            const std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  if (!noFunctionMode("a NumPy operation")) return nullptr;
  numpyArgs_ = true;
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  PyRef kw = PyRef::steal(PyDict_New());
  bool ok = true;
  for (size_t i = 0; ok && i < args.size(); ++i) {
    PyRef v = pythonValue(args[i]);
    if (!v) ok = false;
    else PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), v.release());
  }
  for (size_t i = 0; ok && i < kwargs.size(); ++i) {
    PyRef v = pythonValue(kwargs[i].second);
    if (!v) ok = false;
    else PyDict_SetItem(kw.get(), kwargs[i].first.get(), v.get());
  }
  numpyArgs_ = false;
  if (!ok) return nullptr;
  PyRef kindObj = PyRef::steal(PyUnicode_FromString(kind));
  PyRef call = PyRef::steal(PyTuple_Pack(4, kindObj.get(), target, tuple.get(), kw.get()));
  std::string code, detail;
  PyRef r = host_.record(T->numpyRun, call.get(), nullptr, code, detail);
  if (!r) {
    fail(hostBreak(code, GB::NumpyOperation), detail);
    return nullptr;
  }
  if (!PyTuple_Check(r.get()) || PyTuple_GET_SIZE(r.get()) != 2) {
    fail(GB::Internal, "numpy_ops.run result");
    return nullptr;
  }
  VarRef value = fromPython(PyTuple_GET_ITEM(r.get(), 0));
  if (!value) return nullptr;
  // Flag the result's tensors, in the order numpy_ops.run listed them.
  PyObject* kinds = PyTuple_GET_ITEM(r.get(), 1);
  Py_ssize_t k = 0;
  std::function<bool(const VarRef&)> mark = [&](const VarRef& v) -> bool {
    if (v->is(Var::Kind::Tensor)) {
      if (k >= PyList_Size(kinds)) return false;
      v->np = PyLong_AsLong(PyList_GET_ITEM(kinds, k++)) == 2 ? Var::Np::Scalar : Var::Np::Array;
      return true;
    }
    for (const VarRef& i : v->items)
      if (!mark(i)) return false;
    return true;
  };
  if (!mark(value) || k != PyList_Size(kinds)) {
    fail(GB::Internal, "numpy_ops.run result kinds");
    return nullptr;
  }
  return value;
}

VarRef Translator::numpyAttr(const VarRef& a, PyObject* nameObj) {
  const PyTypes* T = pyTypes();
  if (!noFunctionMode("a NumPy attribute")) return nullptr;
  std::string name = PyUnicode_AsUTF8(nameObj);
  PyObject* meta = a->obj.get();
  if (name == "shape" || name == "ndim" || name == "size" || name == "nbytes") {
    // Sizes are read through the host, like a tensor's (dynamic shapes).
    static PyObject* shapeName = PyUnicode_InternFromString("shape");
    PyRef args = PyRef::steal(PyTuple_Pack(2, meta, shapeName));
    std::string code, detail;
    PyRef shape = host_.record(T->getattrFn, args.get(), nullptr, code, detail);
    if (!shape) {
      fail(hostBreak(code, GB::UnmodeledAttribute), detail);
      return nullptr;
    }
    PyRef tup = PyRef::steal(PySequence_Tuple(shape.get()));
    if (!tup) {
      failPy(GB::Internal, "shape");
      return nullptr;
    }
    if (name == "shape") return makeConst(tup);
    Py_ssize_t nd = PyTuple_GET_SIZE(tup.get());
    if (name == "ndim") return makeConst(PyRef::steal(PyLong_FromSsize_t(nd)));
    long long n = 1;
    for (Py_ssize_t i = 0; i < nd; ++i) n *= PyLong_AsLongLong(PyTuple_GET_ITEM(tup.get(), i));
    if (name == "nbytes") {
      PyRef dt = PyRef::steal(PyObject_CallOneArg(T->npDtypeOf, meta));
      PyRef item = dt ? PyRef::steal(PyObject_GetAttrString(dt.get(), "itemsize")) : PyRef();
      if (!item) {
        failPy(GB::Internal, "itemsize");
        return nullptr;
      }
      n *= PyLong_AsLongLong(item.get());
    }
    return makeConst(PyRef::steal(PyLong_FromLongLong(n)));
  }
  if (name == "dtype" || name == "itemsize") {
    PyRef dt = PyRef::steal(PyObject_CallOneArg(T->npDtypeOf, meta));
    if (dt && name == "itemsize") dt = PyRef::steal(PyObject_GetAttrString(dt.get(), "itemsize"));
    if (!dt) {
      failPy(GB::Internal, "dtype");
      return nullptr;
    }
    return makeConst(dt);
  }
  if (name == "T" || name == "real" || name == "imag") return numpyRun("attr", nameObj, {a}, {});
  PyObject* cls = PyObject_GetAttr(T->ndarray, nameObj);
  if (!cls) {
    failPy(GB::UnmodeledAttribute, "ndarray." + name);
    return nullptr;
  }
  bool method = PyCallable_Check(cls) && !PyObject_TypeCheck(cls, &PyProperty_Type) &&
                strncmp(Py_TYPE(cls)->tp_name, "getset", 6) != 0;
  Py_DECREF(cls);
  if (!method) {
    fail(GB::NumpyOperation, "ndarray." + name + " is not captured");
    return nullptr;
  }
  auto m = makeVar(Var::Kind::TensorMethod);
  m->self = a;
  m->name = name;
  return m;
}

VarRef Translator::numpyMethod(const VarRef& tm, std::vector<VarRef>& args,
                               std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const std::string& name = tm->name;
  if (!noFunctionMode("a NumPy method")) return nullptr;
  if (name == "item" || name == "tolist" || name == "__bool__" || name == "__int__" || name == "__float__") {
    fail(GB::TensorReadBack, "ndarray." + name + "()");
    return nullptr;
  }
  std::vector<VarRef> all{tm->self};
  all.insert(all.end(), args.begin(), args.end());
  PyRef n = PyRef::steal(PyUnicode_FromString(name.c_str()));
  return numpyRun("method", n.get(), all, kwargs);
}

bool Translator::isNumpyCallable(PyObject* o) const {
  const PyTypes* T = pyTypes();
  if (!T->ndarray) return false;
  if (isA(o, T->npUfunc)) return true;
  if (PyType_Check(o)) {
    return PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(o), reinterpret_cast<PyTypeObject*>(T->npGeneric)) ||
           o == T->ndarray;
  }
  PyObject* m = PyObject_GetAttrString(o, "__module__");
  if (!m) {
    PyErr_Clear();
    return false;
  }
  bool r = PyUnicode_Check(m) && strncmp(PyUnicode_AsUTF8(m), "numpy", 5) == 0 &&
           (PyUnicode_AsUTF8(m)[5] == '\0' || PyUnicode_AsUTF8(m)[5] == '.');
  Py_DECREF(m);
  return r;
}

// Note [NumPy on constants]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A NumPy function called on constants only (numbers, strings, tuples, lists
// of those: `np.sqrt(d)`, `np.prod(x.shape)`, `np.argmax([0.1, 0.7])`) whose
// result is a NumPy scalar or a plain constant runs now, in NumPy itself, and
// the result is a constant of its exact type (np.float64 stays np.float64), as
// eager computes it. Only functions known to be pure run early: ufuncs and the
// reductions and predicates of kPureNumpy (never numpy.random, whose state
// advances per call, nor anything that writes); a function giving an array
// still runs per call through numpy_ops.
static const char* const kPureNumpy[] = {
    "prod", "sum", "mean", "median", "std", "var", "amax", "amin", "max", "min", "argmax", "argmin",
    "round", "around", "dot", "inner", "isclose", "allclose", "array_equal", "ndim", "size", "all", "any",
    "count_nonzero", "ptp", "average", "nanmax", "nanmin", "nansum", "nanmean", "trace", "clip", "interp",
};

VarRef Translator::numpyOnConstants(PyObject* fn, const std::vector<VarRef>& args,
                                    const std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  const PyTypes* T = pyTypes();
  bool pure = isA(fn, T->npUfunc);
  if (!pure && PyCallable_Check(fn)) {
    PyRef mod = PyRef::steal(PyObject_GetAttrString(fn, "__module__"));
    PyRef name = PyRef::steal(PyObject_GetAttrString(fn, "__name__"));
    if (!mod || !name) PyErr_Clear();
    // The function of that name in numpy itself (not numpy.random, not a look-alike).
    PyObject* np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");  // borrowed
    PyRef same = mod && name && PyUnicode_Check(name.get()) && np ? PyRef::steal(PyObject_GetAttr(np, name.get()))
                                                                 : PyRef();
    if (!same) PyErr_Clear();
    for (const char* n : kPureNumpy)
      pure = pure || (same.get() == fn && PyUnicode_CompareWithASCIIString(name.get(), n) == 0);
  }
  if (!pure) return nullptr;
  // A Python number that is a graph input (a float argument such as a default
  // `min_derivative` of a frame of its own) specializes, as for a builtin: the
  // result is the NumPy scalar eager computes, not an array in the graph.
  // Sizes, loop indices and loop-carried numbers stay symbolic (numpy_ops).
  auto plainNumber = [](const VarRef& v) {
    auto special = [](const VarRef& x) { return x->name == "loop index" || x->name == "loop carried"; };
    return v->is(Var::Kind::SymScalar) && !isSizeSym(v) && !special(v) &&
           std::none_of(v->items.begin(), v->items.end(), special) &&
           std::none_of(v->items.begin(), v->items.end(), [](const VarRef& x) { return isSizeSym(x); });
  };
  std::function<bool(const VarRef&)> foldable = [&](const VarRef& v) {
    if (isConst(v) || plainNumber(v)) return true;
    if (!v->is(Var::Kind::List)) return false;
    return std::all_of(v->items.begin(), v->items.end(), foldable);
  };
  for (const VarRef& a : args)
    if (!foldable(a)) return nullptr;
  for (const auto& kv : kwargs)
    if (!foldable(kv.second)) return nullptr;
  std::function<PyRef(const VarRef&)> value = [&](const VarRef& v) -> PyRef {
    if (plainNumber(v)) {
      VarRef c = concrete(v);
      return c && !failed() ? constOf(c) : PyRef();
    }
    if (isConst(v)) return constOf(v);
    if (!v->is(Var::Kind::List)) return {};
    PyRef l = PyRef::steal(PyList_New(static_cast<Py_ssize_t>(v->items.size())));  // a fresh copy
    for (size_t i = 0; i < v->items.size(); ++i) {
      PyRef e = value(v->items[i]);
      if (!e) return {};
      PyList_SET_ITEM(l.get(), static_cast<Py_ssize_t>(i), e.release());
    }
    return l;
  };
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    PyRef a = value(args[i]);
    if (!a) return nullptr;
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), a.release());
  }
  PyRef kw = PyRef::steal(PyDict_New());
  for (const auto& [k, v] : kwargs) {
    PyRef a = value(v);
    if (!a) return nullptr;
    PyDict_SetItem(kw.get(), k.get(), a.get());
  }
  PyObject* r = PyObject_Call(fn, tuple.get(), kw.get());
  if (!r) {
    PyErr_Clear();  // per call through numpy_ops, which reports it
    return nullptr;
  }
  PyRef result = PyRef::steal(r);
  if (T->npGeneric && PyObject_TypeCheck(r, reinterpret_cast<PyTypeObject*>(T->npGeneric)) &&
      !PyObject_TypeCheck(r, &PyBytes_Type) && Py_TYPE(r)->tp_as_number)
    return makeConst(result);
  return nullptr;
}

VarRef Translator::numpyCall(PyObject* fn, std::vector<VarRef>& args,
                             std::vector<std::pair<PyRef, VarRef>>& kwargs, bool& handled) {
  const PyTypes* T = pyTypes();
  handled = true;
  if (isNumpyCallable(fn)) {
    if (PyType_Check(fn)) {
      // np.float32(2.0): a NumPy scalar built from constants is a constant.
      bool consts = fn != T->ndarray && kwargs.empty();
      for (const VarRef& a : args) consts = consts && isConst(a);
      if (!consts) {
        fail(GB::NumpyOperation, std::string("constructing ") + reinterpret_cast<PyTypeObject*>(fn)->tp_name +
                          " from traced values");
        return nullptr;
      }
      PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
      for (size_t i = 0; i < args.size(); ++i)
        PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), constOf(args[i]).release());
      PyObject* r = PyObject_Call(fn, tuple.get(), nullptr);
      if (!r) {
        failPy(GB::NumpyOperation, std::string(reinterpret_cast<PyTypeObject*>(fn)->tp_name) + "() raised");
        return nullptr;
      }
      return makeConst(PyRef::steal(r));
    }
    if (VarRef c = numpyOnConstants(fn, args, kwargs)) return c;
    if (failed()) return nullptr;
    return numpyRun("fn", fn, args, kwargs);
  }
  bool anyNp = false;
  for (const VarRef& a : args) anyNp = anyNp || a->isNumpy();
  for (const auto& kv : kwargs) anyNp = anyNp || kv.second->isNumpy();
  if (!anyNp) {
    handled = false;
    return nullptr;
  }
  // torch <- numpy bridges: the ndarray's memory as a tensor (as eager does).
  bool share = fn == T->fromNumpy || fn == T->asTensor || fn == T->torchAsarray;
  if ((share || fn == T->torchTensor) && args.size() == 1 && args[0]->isNumpy()) {
    VarRef dtype;
    for (auto& [k, v] : kwargs) {
      const char* s = PyUnicode_AsUTF8(k.get());
      if (fn != T->fromNumpy && strcmp(s, "dtype") == 0) {
        dtype = v;
      } else if (fn != T->fromNumpy && strcmp(s, "device") == 0) {
        continue;  // device erasure: everything lives on the capture target
      } else {
        fail(GB::NumpyOperation, "keyword " + std::string(s) + " to a torch <- numpy conversion");
        return nullptr;
      }
    }
    VarRef t = retag(args[0], Var::Np::Tensor);
    if (fn == T->torchTensor) {
      static PyObject* clone = PyObject_GetAttrString(pyTypes()->tensor, "clone");
      t = record(clone, {t}, {});
      if (!t) return nullptr;
    }
    if (dtype && !(dtype->is(Var::Kind::Const) && dtype->obj.get() == Py_None)) {
      static PyObject* to = PyObject_GetAttrString(pyTypes()->tensor, "to");
      t = record(to, {t, dtype}, {});
    }
    return t;
  }
  handled = false;
  return nullptr;
}

PyObject* Translator::numpyType(const VarRef& v) {
  const PyTypes* T = pyTypes();
  if (v->np == Var::Np::Array) return T->ndarray;
  PyRef dt = PyRef::steal(PyObject_CallOneArg(T->npDtypeOf, v->obj.get()));
  if (!dt) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* tp = PyObject_GetAttrString(dt.get(), "type");
  if (!tp) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(tp);  // numpy scalar types live as long as numpy
  return tp;
}

VarRef Translator::tensorToNumpy(const VarRef& t, std::vector<VarRef>& args,
                                 std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  if (!args.empty() || !kwargs.empty()) {
    fail(GB::NumpyOperation, "Tensor.numpy() with arguments");
    return nullptr;
  }
  PyObject* rg = PyObject_GetAttrString(t->obj.get(), "requires_grad");
  int grad = rg ? PyObject_IsTrue(rg) : -1;
  Py_XDECREF(rg);
  if (grad != 0) {
    if (grad < 0) PyErr_Clear();
    fail(GB::TensorReadBack, "Tensor.numpy() of a tensor that requires grad (raises in eager)");
    return nullptr;
  }
  PyRef check = PyRef::steal(PyObject_CallOneArg(pyTypes()->npCheckDtype, t->obj.get()));
  if (!check) {
    auto [code, detail] = pendingBreak(GB::NumpyOperation, "Tensor.numpy()");
    fail(code, detail);
    return nullptr;
  }
  return retag(t, Var::Np::Array);
}

}  // namespace xacc::capture::translate
