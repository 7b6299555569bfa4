// Conversions between Camel values and Python objects (PyValues.h).
#include "PyValues.h"

#include <dlfcn.h>

#include <mutex>

#include "xacc/camel/Compiler.h"
#include "xacc/camel/Executor.h"
#include "StdlibImpl.h"

namespace xacc::executors::python {

using ir::Datum;
using ir::DKind;
using ir::Type;
using ir::TypeKind;

PyObjectBox::~PyObjectBox() {
  // A Python object may outlive the interpreter when datums are released at
  // process exit; leak it then rather than touch a finalized runtime.
  if (!Py_IsInitialized() || pyFinalizing()) return;
  Gil gil;
  Py_DECREF(obj);
}

std::string PyObjectBox::repr() const {
  if (!Py_IsInitialized()) return "<PyObject>";
  Gil gil;
  PyRef s = PyRef::steal(PyObject_Str(obj));
  if (!s) {
    PyErr_Clear();
    return "<PyObject>";
  }
  Py_ssize_t n = 0;
  const char* u = PyUnicode_AsUTF8AndSize(s.get(), &n);
  if (!u) {
    PyErr_Clear();
    return "<PyObject>";
  }
  return std::string(u, size_t(n));
}

Datum wrapObject(PyObject* o) {
  Py_INCREF(o);
  return Datum::object(DKind::PyObj, new PyObjectBox(o));
}

PyObject* objectOf(const Datum& d) {
  if (d.kind() != DKind::PyObj) return nullptr;
  return static_cast<PyObjectBox*>(d.object())->obj;
}

// ---- tensors ---------------------------------------------------------------------

namespace {
std::mutex bridgeMu;
TensorBridge bridge;
bool bridgeSet = false;
}  // namespace

void setTensorBridge(TensorBridge b) {
  std::lock_guard<std::mutex> lock(bridgeMu);
  bridge = b;
  bridgeSet = true;
}

const TensorBridge* tensorBridge(std::string& error) {
  {
    std::lock_guard<std::mutex> lock(bridgeMu);
    if (bridgeSet) return &bridge;
  }
  // The pytensor executor (loaded on the first tensor) exports the two
  // conversions; its entry imports torch (the GIL is re-entrant).
  std::string err;
  if (!camel::ExecutorRegistry::get().load("pytensor", err)) {
    error = "tensors need the pytensor executor: " + err;
    return nullptr;
  }
  TensorBridge b;
  b.toDatum = reinterpret_cast<bool (*)(PyObject*, Datum&)>(dlsym(RTLD_DEFAULT, "xacc_pytensor_to_datum"));
  b.toPython = reinterpret_cast<PyObject* (*)(const Datum&)>(dlsym(RTLD_DEFAULT, "xacc_pytensor_to_python"));
  if (!b.toDatum || !b.toPython) {
    error = "the pytensor executor does not provide tensor conversion";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(bridgeMu);
  bridge = b;
  bridgeSet = true;
  return &bridge;
}

// ---- errors ----------------------------------------------------------------------


// ---- Camel functions as Python callables -----------------------------------------

namespace {

struct CamelCallable {
  Datum fn;
  Type type;  ///< func<(!token, params...) -> (!token, result, ...)>
  ir::Interpreter* interp;
  const ir::Node* site;
  std::shared_ptr<bool> alive;
};

void destroyCallable(PyObject* capsule) {
  delete static_cast<CamelCallable*>(PyCapsule_GetPointer(capsule, "camel.function"));
}

PyObject* callCamel(PyObject* self, PyObject* args) {
  auto* c = static_cast<CamelCallable*>(PyCapsule_GetPointer(self, "camel.function"));
  if (!c) return nullptr;
  if (!*c->alive) {
    PyErr_SetString(PyExc_RuntimeError,
                    "a Camel function was called after the Camel call that passed it returned");
    return nullptr;
  }
  const auto& params = c->type.elements();  // token first
  size_t want = params.empty() ? 0 : params.size() - 1;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (size_t(n) != want) {
    PyErr_Format(PyExc_TypeError, "Camel function takes %zu argument%s, got %zd", want,
                 want == 1 ? "" : "s", n);
    return nullptr;
  }
  std::vector<Datum> in{Datum::token()};
  for (Py_ssize_t i = 0; i < n; ++i) {
    Datum d;
    std::string err;
    if (!fromPython(PyTuple_GET_ITEM(args, i), params[size_t(i) + 1], d, err)) {
      PyErr_Format(PyExc_TypeError, "argument %zd of the Camel function: %s", i + 1, err.c_str());
      return nullptr;
    }
    in.push_back(std::move(d));
  }
  std::vector<Datum> out;
  size_t diagsBefore = c->interp->diag().diagnostics().size();
  bool ok;
  Py_BEGIN_ALLOW_THREADS
  ok = c->interp->apply(c->fn, in, out, c->site);
  Py_END_ALLOW_THREADS
  if (!ok) {
    const auto& diags = c->interp->diag().diagnostics();
    std::string msg = diags.size() > diagsBefore ? diags.back().loc.str() + ": " + diags.back().message
                                                 : std::string("the Camel function failed");
    PyErr_SetString(PyExc_RuntimeError, ("Camel error: " + msg).c_str());
    return nullptr;
  }
  const auto& results = c->type.funcResults();
  if (out.size() < 2) Py_RETURN_NONE;
  std::string err;
  PyObject* r = toPython(out[1], results.size() > 1 ? results[1] : Type(), nullptr, err);
  if (!r) PyErr_SetString(PyExc_TypeError, ("result of the Camel function: " + err).c_str());
  return r;
}

PyMethodDef callableDef = {"camel_function", callCamel, METH_VARARGS,
                           "A Camel function value passed to Python."};

}  // namespace

// ---- Camel -> Python -------------------------------------------------------------

PyObject* toPython(const Datum& d, Type t, const CallbackScope* scope, std::string& error) {
  auto elem = [&](size_t i) -> Type {
    if (!t) return Type();
    if (t.kind() == TypeKind::List) return t.elementType();
    if ((t.kind() == TypeKind::Tuple || t.kind() == TypeKind::Struct) && i < t.elements().size())
      return t.elements()[i];
    return Type();
  };
  switch (d.kind()) {
    case DKind::Null:
    case DKind::Token: Py_RETURN_NONE;
    case DKind::Int: return PyLong_FromLongLong(d.asInt());
    case DKind::Float: return PyFloat_FromDouble(d.asFloat());
    case DKind::Bool: return PyBool_FromLong(d.asBool());
    case DKind::Str: {
      const std::string& s = d.asStr();
      PyObject* o = PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace");
      if (!o) error = takePythonError();
      return o;
    }
    case DKind::List:
    case DKind::Tuple: {
      ir::ListView view(d);  // Note [Compact arrays]: the form is left as it is
      const auto& items = *view;
      bool list = d.kind() == DKind::List;
      PyRef seq = PyRef::steal(list ? PyList_New(Py_ssize_t(items.size()))
                                    : PyTuple_New(Py_ssize_t(items.size())));
      if (!seq) {
        error = takePythonError();
        return nullptr;
      }
      for (size_t i = 0; i < items.size(); ++i) {
        PyObject* e = toPython(items[i], elem(i), scope, error);
        if (!e) {
          error = "[" + std::to_string(i) + "]" + (error.empty() ? "" : ": " + error);
          return nullptr;
        }
        if (list)
          PyList_SET_ITEM(seq.get(), Py_ssize_t(i), e);
        else
          PyTuple_SET_ITEM(seq.get(), Py_ssize_t(i), e);
      }
      return seq.release();
    }
    case DKind::Struct: {
      PyRef dict = PyRef::steal(PyDict_New());
      const auto& names = d.structNames();
      const auto& fields = d.structFields();
      for (size_t i = 0; i < names.size(); ++i) {
        Type ft = t && t.kind() == TypeKind::Struct && t.fieldIndex(names[i]) >= 0
                      ? t.elements()[size_t(t.fieldIndex(names[i]))]
                      : Type();
        PyRef v = PyRef::steal(toPython(fields[i], ft, scope, error));
        if (!v) {
          error = "." + names[i] + (error.empty() ? "" : ": " + error);
          return nullptr;
        }
        if (PyDict_SetItemString(dict.get(), names[i].c_str(), v.get()) < 0) {
          error = takePythonError();
          return nullptr;
        }
      }
      return dict.release();
    }
    case DKind::PyObj: {
      PyObject* o = objectOf(d);
      Py_INCREF(o);
      return o;
    }
    case DKind::Tensor: {
      const TensorBridge* b = tensorBridge(error);
      if (!b) return nullptr;
      PyObject* o = b->toPython(d);
      if (!o) error = PyErr_Occurred() ? takePythonError() : "cannot convert the tensor";
      return o;
    }
    case DKind::Func: {
      if (!scope || !scope->interp) {
        error = "a Camel function cannot be passed to Python here";
        return nullptr;
      }
      Type ft = t && t.kind() == TypeKind::Func ? t : Type();
      if (!ft) {
        error = "a Camel function passed to Python needs a declared function type";
        return nullptr;
      }
      auto* c = new CamelCallable{d, ft, scope->interp, scope->site, scope->alive};
      PyRef capsule = PyRef::steal(PyCapsule_New(c, "camel.function", destroyCallable));
      if (!capsule) {
        delete c;
        error = takePythonError();
        return nullptr;
      }
      PyObject* f = PyCFunction_New(&callableDef, capsule.get());
      if (!f) error = takePythonError();
      return f;
    }
  }
  error = "cannot convert a " + std::string(camel::stdlib::kindName(d)) + " to Python";
  return nullptr;
}

// ---- Python -> Camel -------------------------------------------------------------

namespace {

std::string pyTypeName(PyObject* o) { return Py_TYPE(o)->tp_name; }

bool typeError(PyObject* o, Type t, std::string& error) {
  error = "expected " + camel::camelTypeName(t) + ", got Python '" + pyTypeName(o) + "'";
  return false;
}

bool tensorFromPython(PyObject* o, Datum& out, bool& isTensor, std::string& error) {
  isTensor = false;
  // Only consult (and possibly load) the bridge for objects torch made.
  PyObject* mod = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__module__");
  PyRef modRef = PyRef::steal(mod);
  if (!mod) {
    PyErr_Clear();
    return true;
  }
  const char* m = PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : nullptr;
  if (!m || std::string_view(m).substr(0, 5) != "torch") return true;
  const TensorBridge* b = tensorBridge(error);
  if (!b) return false;
  isTensor = b->toDatum(o, out);
  return true;
}

}  // namespace

bool fromPython(PyObject* o, Type t, Datum& out, std::string& error) {
  TypeKind k = t ? t.kind() : TypeKind::Any;
  switch (k) {
    case TypeKind::PyObj:
      out = wrapObject(o);
      return true;
    case TypeKind::Null:
      out = Datum();
      return true;
    case TypeKind::Int: {
      if (PyBool_Check(o) || !(PyLong_Check(o) || PyIndex_Check(o))) return typeError(o, t, error);
      int overflow = 0;
      PyRef idx = PyRef::steal(PyNumber_Index(o));
      long long v = idx ? PyLong_AsLongLongAndOverflow(idx.get(), &overflow) : -1;
      if (!idx || overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        error = "integer does not fit in 64 bits";
        return false;
      }
      out = Datum::integer(v);
      return true;
    }
    case TypeKind::Float: {
      if (PyBool_Check(o) || !(PyFloat_Check(o) || PyLong_Check(o) || PyIndex_Check(o) ||
                               Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float))
        return typeError(o, t, error);
      if (PyObject_HasAttrString(o, "dim")) return typeError(o, t, error);  // not a tensor
      double v = PyFloat_AsDouble(o);
      if (v == -1.0 && PyErr_Occurred()) {
        error = takePythonError();
        return false;
      }
      out = Datum::real(v);
      return true;
    }
    case TypeKind::Bool:
      if (!PyBool_Check(o)) return typeError(o, t, error);
      out = Datum::boolean(o == Py_True);
      return true;
    case TypeKind::Str: {
      if (!PyUnicode_Check(o)) return typeError(o, t, error);
      Py_ssize_t n = 0;
      const char* s = PyUnicode_AsUTF8AndSize(o, &n);
      if (!s) {
        error = takePythonError();
        return false;
      }
      out = Datum::string(std::string(s, size_t(n)));
      return true;
    }
    case TypeKind::List:
    case TypeKind::Tuple: {
      if (!PyList_Check(o) && !PyTuple_Check(o)) return typeError(o, t, error);
      PyRef fast = PyRef::steal(PySequence_Fast(o, "a sequence"));
      Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.get());
      if (k == TypeKind::Tuple && size_t(n) != t.elements().size()) {
        error = "expected " + camel::camelTypeName(t) + ", got a sequence of " + std::to_string(n) +
                " elements";
        return false;
      }
      std::vector<Datum> items(static_cast<size_t>(n));
      for (Py_ssize_t i = 0; i < n; ++i) {
        Type et = k == TypeKind::List ? t.elementType() : t.elements()[size_t(i)];
        if (!fromPython(PySequence_Fast_GET_ITEM(fast.get(), i), et, items[size_t(i)], error)) {
          error = "[" + std::to_string(i) + "]: " + error;
          return false;
        }
      }
      out = k == TypeKind::List ? Datum::list(std::move(items)) : Datum::tuple(std::move(items));
      return true;
    }
    case TypeKind::Struct: {
      if (!PyDict_Check(o)) return typeError(o, t, error);
      const auto& names = t.fieldNames();
      std::vector<Datum> fields(names.size());
      for (size_t i = 0; i < names.size(); ++i) {
        PyObject* v = PyDict_GetItemString(o, names[i].c_str());  // borrowed
        if (!v) {
          error = "missing field '" + names[i] + "' of " + camel::camelTypeName(t);
          return false;
        }
        if (!fromPython(v, t.elements()[i], fields[i], error)) {
          error = "." + names[i] + ": " + error;
          return false;
        }
      }
      if (size_t(PyDict_Size(o)) != names.size()) {
        error = "expected " + camel::camelTypeName(t) + ", got a dict with " +
                std::to_string(PyDict_Size(o)) + " keys";
        return false;
      }
      out = Datum::structure(names, std::move(fields));
      return true;
    }
    case TypeKind::Tensor: {
      bool isTensor = false;
      if (!tensorFromPython(o, out, isTensor, error)) return false;
      return isTensor || typeError(o, t, error);
    }
    case TypeKind::Func:
      error = "Python callables cannot be converted to Camel functions";
      return false;
    case TypeKind::Token:
      out = Datum::token();
      return true;
    case TypeKind::Any: break;
  }
  // Natural conversion.
  if (o == Py_None) {
    out = Datum();
  } else if (PyBool_Check(o)) {
    out = Datum::boolean(o == Py_True);
  } else if (PyLong_Check(o)) {
    return fromPython(o, Type::i64(), out, error);
  } else if (PyFloat_Check(o)) {
    out = Datum::real(PyFloat_AS_DOUBLE(o));
  } else if (PyUnicode_Check(o)) {
    return fromPython(o, Type::string(), out, error);
  } else if (PyList_Check(o) || PyTuple_Check(o)) {
    Py_ssize_t n = PySequence_Size(o);
    std::vector<Datum> items(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* e = PyList_Check(o) ? PyList_GET_ITEM(o, i) : PyTuple_GET_ITEM(o, i);
      if (!fromPython(e, Type(), items[size_t(i)], error)) return false;
    }
    out = PyList_Check(o) ? Datum::list(std::move(items)) : Datum::tuple(std::move(items));
  } else if (PyDict_Check(o)) {
    std::vector<std::string> names;
    std::vector<Datum> fields;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    bool allStr = true;
    while (PyDict_Next(o, &pos, &key, &value))
      if (!PyUnicode_Check(key)) allStr = false;
    if (!allStr) {
      out = wrapObject(o);  // no struct form: keep the dict as a PyObject
      return true;
    }
    pos = 0;
    while (PyDict_Next(o, &pos, &key, &value)) {
      names.push_back(PyUnicode_AsUTF8(key));
      Datum d;
      if (!fromPython(value, Type(), d, error)) return false;
      fields.push_back(std::move(d));
    }
    out = Datum::structure(std::move(names), std::move(fields));
  } else {
    bool isTensor = false;
    if (!tensorFromPython(o, out, isTensor, error)) return false;
    if (!isTensor) out = wrapObject(o);
  }
  return true;
}

void addToSysPath(const std::string& dir) {
  if (dir.empty()) return;
  PyObject* path = PySys_GetObject("path");  // borrowed
  if (!path || !PyList_Check(path)) return;
  PyRef d = PyRef::steal(PyUnicode_FromString(dir.c_str()));
  if (!d) {
    PyErr_Clear();
    return;
  }
  int has = PySequence_Contains(path, d.get());
  if (has == 0) PyList_Insert(path, 0, d.get());
  PyErr_Clear();
}

}  // namespace xacc::executors::python
