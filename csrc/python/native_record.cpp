// Torch calls recorded in C++, without calling the Python host.
//
// Note [Records made in C++]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// The translator hands every torch call to `Host.record` (host.py), which runs
// it on meta tensors under the recorder's TorchDispatchMode and turns each ATen
// op that reaches the mode into a GIR node (recorder.py). For the calls listed
// in `table()` below that resolve to exactly one ATen op (a builtin torch
// function, Tensor method or operator, or a composite whose kernel calls one
// op for these arguments: matmul of two matrices (mm), softmax without dtype
// (_softmax); positional arguments only; tensors that
// are meta twins bound in `Recorder.vids`, Python bools, ints and floats), the
// node is made here: the result's metadata comes from the op's C++ meta
// function (runNativeMeta, Note [Native meta kernels] in AtenNativeMeta.cpp, the
// rule the Python path's `meta_run.run` calls for these same ops), the node
// goes through the C++ GraphBuilder, and the result is bound in the recorder's
// table as `Recorder._record` binds it. The node is the one the Python path
// records: a number where the op takes a Tensor is a wrapped number, which the
// dispatch mode sees as the number and records as the attribute `other`;
// trailing arguments at their defaults (`alpha`) are not seen, so not recorded.
// Everything else takes the Python path, unchanged: kwargs, other argument
// types, tensor subclasses (only exact torch.Tensor metas are taken, so no
// __torch_function__ override can apply), an active torch function or
// dispatch mode, inputs that require grad under grad mode (the result's
// autograd history comes from the autograd kernel the Python path runs
// through), inference mode or inference tensors, a no_grad region or
// inference_mode region of the recorder, symbolic numbers, dynamic shapes (the
// shadow run compares traces the Python path writes), a dtype GIR cannot name,
// and any case the meta rule declines or raises on (the Python path then
// raises or breaks as before). test_native_record.py compares the graphs of
// both paths (native_record(False) switches this one off).
#include "native_record.h"

#include <ATen/ATen.h>
#include <ATen/PythonTorchFunctionTLS.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <torch/csrc/autograd/python_variable.h>

#include <atomic>
#include <string>
#include <unordered_map>
#include <vector>

#include "xacc/backend/aten/NativeMeta.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/capture/GraphBuilder.h"

namespace py = pybind11;
namespace ir = xacc::ir;

namespace xacc::python {

namespace {

std::atomic<bool> enabled{true};

/// How the arguments of a call map onto the op's schema.
enum class Form {
  Unary,    ///< op.default(self[, None...])
  Arith,    ///< op.Tensor(self, other[, alpha]); a number `other` is a wrapped number
  Compare,  ///< op.Tensor(self, other), or op.Scalar(self, other) for a number
  Matmul,   ///< matmul of two matrices: its CompositeImplicit kernel calls mm.default(self, other) only
  Softmax,  ///< softmax.int(self, dim) without dtype: its CompositeImplicit kernel calls _softmax(self, dim, False)
};

struct Entry {
  std::string op;     ///< ATen name: "add"
  Form form;
  bool numberFirst;   ///< `number op tensor` is `tensor op number` (the reflected method of + and *)
  int nones = 0;      ///< trailing optional arguments left at None (sum's dtype)
};

/// Owner attribute -> entry, for the callables the translator hands to `record`.
const std::unordered_map<PyObject*, Entry>& table() {
  static const auto* t = [] {
    auto* m = new std::unordered_map<PyObject*, Entry>();
    PyObject* torch = PyImport_ImportModule("torch");
    PyObject* tensor = torch ? PyObject_GetAttrString(torch, "Tensor") : nullptr;
    PyObject* op = PyImport_ImportModule("operator");
    auto add = [&](PyObject* owner, const char* name, Entry e) {
      PyObject* f = owner ? PyObject_GetAttrString(owner, name) : nullptr;  // kept for the process
      // Only builtins: a Python-level wrapper (torch/_tensor.py) may do more than the op.
      if (f && (PyCFunction_Check(f) || Py_TYPE(f) == &PyMethodDescr_Type)) (*m)[f] = std::move(e);
      else Py_XDECREF(f);
    };
    for (const char* n : {"tanh", "exp", "log", "neg", "sigmoid", "rsqrt", "sqrt", "relu", "abs"}) {
      add(torch, n, {n, Form::Unary, false});
      add(tensor, n, {n, Form::Unary, false});
    }
    add(op, "neg", {"neg", Form::Unary, false});
    add(torch, "sum", {"sum", Form::Unary, false, 1});  // one argument: sum.default(self, dtype=None)
    add(tensor, "sum", {"sum", Form::Unary, false, 1});
    for (PyObject* owner : {torch, tensor, op}) add(owner, "matmul", {"mm", Form::Matmul, false});
    for (PyObject* owner : {torch, tensor}) add(owner, "softmax", {"_softmax", Form::Softmax, false});
    for (const char* n : {"add", "sub", "mul", "div"}) {
      add(torch, n, {n, Form::Arith, false});
      add(tensor, n, {n, Form::Arith, false});
    }
    add(op, "add", {"add", Form::Arith, true});
    add(op, "mul", {"mul", Form::Arith, true});
    add(op, "sub", {"sub", Form::Arith, false});
    add(op, "truediv", {"div", Form::Arith, false});
    for (const char* n : {"lt", "le", "gt", "ge", "eq", "ne"}) {
      add(torch, n, {n, Form::Compare, false});
      add(tensor, n, {n, Form::Compare, false});
      add(op, n, {n, Form::Compare, false});
    }
    Py_XDECREF(op);
    Py_XDECREF(tensor);
    Py_XDECREF(torch);
    PyErr_Clear();
    return m;
  }();
  return *t;
}

/// An attribute (a new reference), or null with no error left.
PyObject* attr(PyObject* o, const char* name) {
  PyObject* r = o ? PyObject_GetAttrString(o, name) : nullptr;
  if (!r) PyErr_Clear();
  return r;
}

struct Ref {  // owns one reference
  PyObject* p = nullptr;
  explicit Ref(PyObject* o) : p(o) {}
  Ref(const Ref&) = delete;
  ~Ref() { Py_XDECREF(p); }
  PyObject* get() const { return p; }
};

/// One positional argument: a bound meta tensor or a Python number.
struct Arg {
  bool tensor = false;
  at::Tensor t;
  int vid = -1;
  at::Scalar num;
  PyObject* obj = nullptr;  // the number (for its attribute)
};

bool readArg(PyObject* a, PyObject* vids, PyObject* known, Arg& out) {
  if (THPVariable_CheckExact(a)) {
    out.tensor = true;
    out.t = THPVariable_Unpack(a);
    if (!out.t.is_meta() || out.t.is_inference()) return false;
    if (out.t.requires_grad() && at::GradMode::is_enabled()) return false;
    Ref key(PyLong_FromVoidPtr(a));
    if (!key.get()) {
      PyErr_Clear();
      return false;
    }
    // A tensor with a known value (Note [Known tensor values], known.py): the
    // Python path computes its results' values too, so it keeps such calls.
    int isKnown = PyDict_Contains(known, key.get());
    if (isKnown != 0) {
      PyErr_Clear();
      return false;
    }
    PyObject* v = PyDict_GetItemWithError(vids, key.get());  // borrowed
    if (!v || !PyLong_CheckExact(v)) {
      PyErr_Clear();
      return false;
    }
    out.vid = static_cast<int>(PyLong_AsLong(v));
    return out.vid >= 0;
  }
  out.obj = a;
  if (PyBool_Check(a)) {
    out.num = at::Scalar(a == Py_True);
    return true;
  }
  if (PyLong_CheckExact(a)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    out.num = at::Scalar(static_cast<int64_t>(v));
    return true;
  }
  if (PyFloat_CheckExact(a)) {
    out.num = at::Scalar(PyFloat_AS_DOUBLE(a));
    return true;
  }
  return false;
}

ir::Attr numberAttr(PyObject* n) {
  if (PyBool_Check(n)) return ir::Attr::boolean(n == Py_True);
  if (PyLong_CheckExact(n)) return ir::Attr::integer(PyLong_AsLongLong(n));
  return ir::Attr::real(PyFloat_AS_DOUBLE(n));
}

/// A number as the 0-dim wrapped-number tensor torch passes for a Tensor argument.
at::Tensor wrappedNumber(const at::Scalar& s) {
  at::Tensor w = at::empty({}, at::TensorOptions().dtype(s.type()).device(c10::kMeta));
  w.unsafeGetTensorImpl()->set_wrapped_number(true);
  return w;
}

/// Whether the recorder is in the plain state this path models (see the Note).
bool plainState(PyObject* ctx, PyObject* rec) {
  Ref dyn(attr(ctx, "dyn_active")), noGrad(attr(rec, "no_grad")), inf(attr(rec, "inference")),
      sym(attr(rec, "sym")), shadow(attr(rec, "shadow"));
  return dyn.get() == Py_False && noGrad.get() == Py_False && inf.get() == Py_False && sym.get() &&
         PyDict_CheckExact(sym.get()) && PyDict_GET_SIZE(sym.get()) == 0 && shadow.get() == Py_None;
}

/// Runs the meta rule of aten::`op`.`overload` on `stack`, adds the node and
/// binds its result as Recorder._record does; null when the rule declines or raises.
PyObject* finish(PyObject* ctx, PyObject* rec, PyObject* vids, const std::string& op, const std::string& overload,
                 torch::jit::Stack stack, std::vector<int> operands, ir::AttrDict attrs, PyObject* file, int line) {
  try {
    if (!backend::aten::runNativeMeta("aten::" + op, overload, stack)) return nullptr;
  } catch (const std::exception&) {
    return nullptr;  // the Python path raises or breaks as it did
  }
  if (stack.size() != 1 || !stack[0].isTensor()) return nullptr;
  at::Tensor out = stack[0].toTensor();
  ir::DType dtype;
  if (!backend::aten::fromScalarType(out.scalar_type(), dtype)) return nullptr;

  Ref device(attr(rec, "device"));
  Ref builderObj(attr(ctx, "builder"));
  Ref counts(attr(rec, "op_counts"));
  Ref alive(attr(rec, "_alive"));
  if (!device.get() || !PyUnicode_Check(device.get()) || !builderObj.get() || !counts.get() ||
      !PyDict_CheckExact(counts.get()) || !alive.get() || !PyList_CheckExact(alive.get()))
    return nullptr;
  capture::GraphBuilder* b = nullptr;
  try {
    b = py::handle(builderObj.get()).cast<capture::GraphBuilder*>();
  } catch (const std::exception&) {
    PyErr_Clear();
    return nullptr;
  }
  std::vector<ir::Dim> dims;
  for (int64_t s : out.sizes()) dims.push_back(ir::Dim::fixed(s));
  std::string gname = "aten." + op + "." + overload;
  const char* f = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
  b->setLoc(f ? f : "<unknown>", static_cast<uint32_t>(line));
  std::vector<int> ids;
  std::string error;
  if (!b->addOp(gname, operands, std::move(attrs), {ir::Type::tensor(dtype, dims, PyUnicode_AsUTF8(device.get()))},
                ids, error) ||
      ids.size() != 1)
    return nullptr;  // nothing was added; the Python path breaks as it did

  // What Recorder._record does after add_op: count the op, bind the result.
  PyObject* result = THPVariable_Wrap(out);
  if (!result) return nullptr;
  Ref name(PyUnicode_FromString(gname.c_str()));
  PyObject* c = PyDict_GetItemWithError(counts.get(), name.get());  // borrowed
  Ref next(PyLong_FromLong(c ? PyLong_AsLong(c) + 1 : 1));
  Ref key(PyLong_FromVoidPtr(result));
  Ref vid(PyLong_FromLong(ids[0]));
  if (PyDict_SetItem(counts.get(), name.get(), next.get()) < 0 || PyDict_SetItem(vids, key.get(), vid.get()) < 0 ||
      PyList_Append(alive.get(), result) < 0) {
    // Out of memory: the node stays (unbound, dead code for DCE) and the
    // Python path records the call again.
    Py_DECREF(result);
    return nullptr;
  }
  return result;
}

PyObject* record(PyObject* host, PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* file, int line) {
  if (kwargs && (!PyDict_Check(kwargs) || PyDict_GET_SIZE(kwargs) != 0)) return nullptr;
  if (!PyTuple_CheckExact(args)) return nullptr;
  const auto& tab = table();
  auto it = tab.find(fn);
  if (it == tab.end()) return nullptr;
  const Entry& e = it->second;
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  if (n != (e.form == Form::Unary ? 1 : 2)) return nullptr;
  if (c10::impl::TorchDispatchModeTLS::stack_len() > 0 || at::impl::PythonTorchFunctionTLS::stack_len() > 0 ||
      c10::InferenceMode::is_enabled())
    return nullptr;

  Ref ctx(attr(host, "ctx"));
  Ref rec(attr(ctx.get(), "rec"));
  if (!rec.get() || !plainState(ctx.get(), rec.get())) return nullptr;
  Ref vids(attr(rec.get(), "vids"));
  if (!vids.get() || !PyDict_CheckExact(vids.get())) return nullptr;
  Ref knownObj(attr(rec.get(), "known"));
  Ref known(knownObj.get() ? attr(knownObj.get(), "vals") : nullptr);
  if (!known.get() || !PyDict_CheckExact(known.get())) return nullptr;

  Arg a[2];
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!readArg(PyTuple_GET_ITEM(args, i), vids.get(), known.get(), a[i])) return nullptr;
  if (e.form == Form::Softmax) {  // (tensor, int dim): the dim is recorded as given
    if (!a[0].tensor || a[1].tensor || !PyLong_CheckExact(a[1].obj)) return nullptr;
    torch::jit::Stack stack{a[0].t, a[1].num.toLong(), false};
    ir::AttrDict attrs;
    attrs.set("dim", numberAttr(a[1].obj));
    attrs.set("half_to_float", ir::Attr::boolean(false));
    return finish(ctx.get(), rec.get(), vids.get(), e.op, "default", std::move(stack), {a[0].vid}, std::move(attrs),
                  file, line);
  }
  if (!a[0].tensor) {
    if (!e.numberFirst || !a[1].tensor) return nullptr;
    std::swap(a[0], a[1]);  // Tensor.__radd__ / __rmul__: op(tensor, number)
  }
  // matmul decomposes to mm only for two matrices (other ranks: views, bmm, ...).
  if (e.form == Form::Matmul && (!a[1].tensor || a[0].t.dim() != 2 || a[1].t.dim() != 2)) return nullptr;

  // The op, its boxed arguments, operands and attributes.
  std::string overload = "default";
  torch::jit::Stack stack{a[0].t};
  std::vector<int> operands{a[0].vid};
  ir::AttrDict attrs;
  if (e.form != Form::Unary) {
    if (a[1].tensor) {
      overload = "Tensor";
      stack.emplace_back(a[1].t);
      operands.push_back(a[1].vid);
    } else if (e.form == Form::Compare) {
      overload = "Scalar";
      stack.emplace_back(a[1].num);
      attrs.set("other", numberAttr(a[1].obj));
    } else {
      overload = "Tensor";
      stack.emplace_back(wrappedNumber(a[1].num));
      attrs.set("other", numberAttr(a[1].obj));
    }
    if (e.form == Form::Matmul) overload = "default";
    if (e.op == "add" || e.op == "sub") stack.emplace_back(at::Scalar(int64_t{1}));  // alpha
  }
  for (int i = 0; i < e.nones; ++i) stack.emplace_back();  // None
  return finish(ctx.get(), rec.get(), vids.get(), e.op, overload, std::move(stack), std::move(operands),
                std::move(attrs), file, line);
}

}  // namespace

PyObject* nativeRecord(PyObject* host, PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* file, int line) {
  if (!enabled.load(std::memory_order_relaxed)) return nullptr;
  PyObject* r = record(host, fn, args, kwargs, file, line);
  if (!r && PyErr_Occurred()) PyErr_Clear();
  return r;
}

void bindNativeRecord(py::module_& c) {
  c.def(
      "native_record",
      [](py::object on) {
        bool prev = enabled.load();
        if (!on.is_none()) enabled.store(on.cast<bool>());
        return prev;
      },
      py::arg("enabled") = py::none(),
      "Switches the C++ recording of plain torch calls (Note [Records made in C++], native_record.cpp) "
      "on or off; returns the previous setting (None: only reads it).");
}

}  // namespace xacc::python
