// The python executor's value layer: Python objects as Camel datums
// (DKind::PyObj, an opaque object holding a strong reference) and the
// conversions between Camel values and Python objects.
//
// Camel -> Python: null -> None, int, float, bool, string -> str, arrays ->
// list, tuples -> tuple, structs -> dict, PyObject -> the object itself,
// tensors -> the same torch.Tensor (no copy; through the tensor bridge),
// function values -> Python callables that call back into Camel (valid while
// the call that passed them runs).
// Python -> Camel is directed by the Camel type expected (a declared result,
// a PyObject<T> target): int where int is expected (bool is not an int),
// float from int or float, sequences element by element, dicts to structs by
// field name, torch.Tensor to a tensor datum sharing the tensor; `any` takes
// the natural conversion and wraps what has none as a PyObject.
//
// Every function here must be called with the GIL held (Gil). Failures return
// false/null with `error` set, never throw and never leave a Python exception set.
#pragma once

#include <Python.h>

#include <memory>
#include <string>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Type.h"
#include "xacc/support/PyRef.h"

namespace xacc::executors::python {

/// Whether the interpreter is shutting down (CPython 3.13 made _Py_IsFinalizing
/// public as Py_IsFinalizing and dropped the old name).
inline bool pyFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/// Holds the GIL for its lifetime (any thread; re-entrant).
class Gil {
public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

private:
  PyGILState_STATE state_;
};

using support::PyRef;

/// A Python object as a Camel value.
struct PyObjectBox : ir::OpaqueObject {
  explicit PyObjectBox(PyObject* o) : obj(o) {}  // takes the reference
  ~PyObjectBox() override;
  std::string repr() const override;  ///< str(obj)
  PyObject* obj;
};

/// Wraps `o` (adds a reference).
ir::Datum wrapObject(PyObject* o);
/// The object inside a PyObject datum (borrowed), or null.
PyObject* objectOf(const ir::Datum& d);

/// What a Camel function value converted to a Python callable calls back
/// through: the interpreter running the builtin that passed it.
struct CallbackScope {
  ir::Interpreter* interp = nullptr;
  const ir::Node* site = nullptr;
  /// Cleared when the builtin returns; later calls raise RuntimeError.
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);
  ~CallbackScope() { *alive = false; }
};

/// Camel -> Python; `t` is the declared Camel type (null: from the datum).
/// Function values need `scope`. Returns a new reference or null.
PyObject* toPython(const ir::Datum& d, ir::Type t, const CallbackScope* scope, std::string& error);
/// Python -> Camel value of type `t` (null type or `any`: natural conversion).
bool fromPython(PyObject* o, ir::Type t, ir::Datum& out, std::string& error);

/// The pending Python exception as "TypeError: message (file.py:3 in f)";
/// clears it. Inline so that executors loaded without the python executor's
/// code (pyplot) report Python errors the same way.
inline std::string takePythonError() {
  if (!PyErr_Occurred()) return "unknown Python error";
  PyObject *type = nullptr, *raw = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &raw, &trace);
  PyErr_NormalizeException(&type, &raw, &trace);
  if (trace && raw) PyException_SetTraceback(raw, trace);
  PyRef typeRef = PyRef::steal(type), exc = PyRef::steal(raw), traceRef = PyRef::steal(trace);
  if (!raw) return "unknown Python error";
  std::string out = Py_TYPE(raw)->tp_name;
  PyRef msg = PyRef::steal(PyObject_Str(raw));
  if (msg) {
    const char* m = PyUnicode_AsUTF8(msg.get());
    if (m && *m) out += std::string(": ") + m;
  }
  // The innermost Python frame of the traceback: where it went wrong.
  PyObject* tb = PyException_GetTraceback(raw);
  PyRef tbRef = PyRef::steal(tb);
  while (tb && tb != Py_None) {
    PyObject* next = PyObject_GetAttrString(tb, "tb_next");
    if (!next || next == Py_None) {
      Py_XDECREF(next);
      break;
    }
    tbRef = PyRef::steal(next);
    tb = next;
  }
  if (tb && tb != Py_None) {
    PyRef frame = PyRef::steal(PyObject_GetAttrString(tb, "tb_frame"));
    PyRef lineno = PyRef::steal(PyObject_GetAttrString(tb, "tb_lineno"));
    PyRef code = frame ? PyRef::steal(PyObject_GetAttrString(frame.get(), "f_code")) : PyRef();
    PyRef file = code ? PyRef::steal(PyObject_GetAttrString(code.get(), "co_filename")) : PyRef();
    PyRef name = code ? PyRef::steal(PyObject_GetAttrString(code.get(), "co_name")) : PyRef();
    if (file && name && lineno) {
      const char* f = PyUnicode_AsUTF8(file.get());
      const char* n = PyUnicode_AsUTF8(name.get());
      long l = PyLong_AsLong(lineno.get());
      if (f && n) out += " (" + std::string(f) + ":" + std::to_string(l) + " in " + n + ")";
    }
  }
  PyErr_Clear();
  return out;
}

/// Tensor conversion, provided by a component that links torch's Python
/// bindings (xacc._C in a Python process, the `pytensor` executor in camel).
struct TensorBridge {
  bool (*toDatum)(PyObject* tensor, ir::Datum& out) = nullptr;  ///< false: not a tensor
  PyObject* (*toPython)(const ir::Datum& d) = nullptr;           ///< new reference
};
void setTensorBridge(TensorBridge b);
/// The bridge, loading the `pytensor` executor on first need when none is set.
const TensorBridge* tensorBridge(std::string& error);

/// Makes sure `dir` is on sys.path (prepended once).
void addToSysPath(const std::string& dir);

}  // namespace xacc::executors::python
