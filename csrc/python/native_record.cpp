// Torch calls recorded in C++, without calling the Python host.
//
// Note [Records made in C++]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// The translator hands every torch call to `Host.record` (host.py), which runs
// it on meta tensors under the recorder's TorchDispatchMode and turns each ATen
// op that reaches the mode into a GIR node (recorder.py). For the calls listed
// in `table()` below, whose ATen ops for the given arguments are known exactly
// (a builtin torch function, Tensor method or operator that dispatches one op,
// or a composite whose kernel calls a fixed sequence for these arguments:
// matmul of two matrices (mm), softmax without dtype (_softmax), contiguous
// (nothing when the tensor is contiguous, else clone), linear of a matrix
// (t, then addmm with a bias or mm without)), the nodes are made here. The
// arguments are bound to the op's schema as Python's argument parser binds
// them (positional, or by keyword for the names each form lists; any other
// keyword declines); tensors must be meta twins bound in `Recorder.vids`,
// numbers Python bools, ints and floats. A node's attributes are what the
// dispatch mode sees: arguments present in the call (a trailing positional
// argument or keyword-only one equal to its default is not passed to the
// mode, so not recorded: `alpha`, `keepdim=False`), a number where the op
// takes a Tensor as a wrapped number, recorded as the number. The result's
// metadata comes from the op's C++ meta function (runNativeMeta, Note [Native
// meta kernels] in AtenNativeMeta.cpp, the rule the Python path's
// `meta_run.run` calls for these same ops), or for view ops and clone from the
// op itself run through the dispatcher on the metas, as the Python path runs
// them (a view result is a view of its input meta, with eager's strides).
// Every node's metadata is computed before the first node is added, so a
// declined call adds nothing. Each node goes through the C++ GraphBuilder and
// each result is bound (vids, _alive, op_counts) as `Recorder._record` binds it.
// Everything else takes the Python path, unchanged: other argument types,
// tensor subclasses (only exact torch.Tensor metas are taken, so no
// __torch_function__ override can apply), an active torch function or
// dispatch mode, inputs that require grad under grad mode (the result's
// autograd history comes from the autograd kernel the Python path runs
// through), inference mode or inference tensors, a no_grad region or
// inference_mode region of the recorder, symbolic numbers, known-value
// tensors (Note [Known tensor values]), dynamic shapes (the shadow run
// compares traces the Python path writes, and only the Python path writes the
// dim expressions of results (State.dim_exprs, Note [Size expressions]) that
// `Host._size_unsure` and `size_node` read in the run compared with the
// shadow: nodes made here have none, which is exact only because no dynamic
// run comes here), a dtype GIR cannot name, and any case the meta rule
// declines or raises on (the Python path then raises or breaks as before).
// The recorder objects this path writes (the Recorder, its tables, the
// builder) are read once per translation (NativeRecorder); the state that may
// change during one (grad and inference regions, `vids`, which restore_binds
// replaces) is read again after any host call that can change it
// (NativeRecorder::invalidate, called by PyHost in translate_bindings.cpp).
// test_native_record.py compares the graphs of both paths
// (native_record(False) switches this one off).
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
  Unary,       ///< op.default(self[, None...])
  Arith,       ///< op.Tensor(self, other[, alpha]); a number `other` is a wrapped number
  Compare,     ///< op.Tensor(self, other), or op.Scalar(self, other) for a number
  Matmul,      ///< matmul of two matrices: its CompositeImplicit kernel calls mm.default(self, other) only
  Softmax,     ///< softmax.int(self, dim) without dtype: its CompositeImplicit kernel calls _softmax(self, dim, False)
  Reduce,      ///< sum/mean: (self) -> op.default; (self, dim[, keepdim]) -> sum.dim_IntList / mean.dim
  Transpose,   ///< transpose.int(self, dim0, dim1), a view
  View,        ///< Tensor.view(self, *size) or view(self, size) with ints: view.default, a view
  Contiguous,  ///< Tensor.contiguous(): self when contiguous, else clone(memory_format=contiguous_format)
  Linear,      ///< linear(input, weight[, bias]) of matrices: t(weight), then addmm(bias, input, wt) or mm(input, wt)
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
    PyObject* nn = PyImport_ImportModule("torch._C._nn");
    auto add = [&](PyObject* owner, const char* name, Entry e) {
      PyObject* f = owner ? PyObject_GetAttrString(owner, name) : nullptr;  // kept for the process
      // Only builtins: a Python-level wrapper (torch/_tensor.py) may do more than the op.
      if (f && (PyCFunction_Check(f) || Py_TYPE(f) == &PyMethodDescr_Type)) (*m)[f] = std::move(e);
      else Py_XDECREF(f);
      PyErr_Clear();
    };
    for (const char* n : {"tanh", "exp", "log", "neg", "sigmoid", "rsqrt", "sqrt", "relu", "abs", "max"}) {
      add(torch, n, {n, Form::Unary, false});  // max: max.default(self) only (other arguments: other overloads)
      add(tensor, n, {n, Form::Unary, false});
    }
    add(op, "neg", {"neg", Form::Unary, false});
    for (const char* n : {"sum", "mean"}) {
      add(torch, n, {n, Form::Reduce, false, 1});  // one argument: op.default(self, dtype=None)
      add(tensor, n, {n, Form::Reduce, false, 1});
    }
    for (PyObject* owner : {torch, tensor, op}) add(owner, "matmul", {"mm", Form::Matmul, false});
    for (PyObject* owner : {torch, tensor}) add(owner, "softmax", {"_softmax", Form::Softmax, false});
    for (PyObject* owner : {torch, tensor}) add(owner, "transpose", {"transpose", Form::Transpose, false});
    for (PyObject* owner : {torch, tensor}) add(owner, "t", {"t", Form::Unary, false});
    add(tensor, "view", {"view", Form::View, false});
    add(tensor, "contiguous", {"clone", Form::Contiguous, false});
    add(nn, "linear", {"linear", Form::Linear, false});
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
    Py_XDECREF(nn);
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
  Ref() = default;
  explicit Ref(PyObject* o) : p(o) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  ~Ref() { Py_XDECREF(p); }
  void reset(PyObject* o) {
    Py_XDECREF(p);
    p = o;
  }
  PyObject* get() const { return p; }
};

/// One positional argument: a bound meta tensor or a Python number.
struct Arg {
  bool tensor = false;
  at::Tensor t;
  int vid = -1;
  at::Scalar num;
  PyObject* obj = nullptr;  // the argument (a number: for its attribute)
};

/// A node to add: its ATen op, operands (value ids; kPrev: the previous
/// node's result), attributes and meta result.
struct Node {
  std::string gname;
  std::vector<int> operands;
  ir::AttrDict attrs;
  at::Tensor out;
};
constexpr int kPrev = -2;

ir::Attr numberAttr(PyObject* n) {
  if (PyBool_Check(n)) return ir::Attr::boolean(n == Py_True);
  if (PyLong_CheckExact(n)) return ir::Attr::integer(PyLong_AsLongLong(n));
  return ir::Attr::real(PyFloat_AS_DOUBLE(n));
}

ir::Attr intsAttr(const std::vector<int64_t>& v) {
  ir::Attr::Array a;
  for (int64_t e : v) a.push_back(ir::Attr::integer(e));
  return ir::Attr::array(std::move(a));
}

/// An exact Python int (not a bool) that fits in int64.
bool exactInt(PyObject* o, int64_t& out) {
  if (!o || !PyLong_CheckExact(o)) return false;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  out = static_cast<int64_t>(v);
  return true;
}

/// A tuple or list of exact ints (an `int[]` argument).
bool intList(PyObject* o, std::vector<int64_t>& out) {
  if (!PyTuple_Check(o) && !PyList_CheckExact(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  for (Py_ssize_t i = 0; i < n; ++i) {
    int64_t v;
    if (!exactInt(PySequence_Fast_GET_ITEM(o, i), v)) return false;
    out.push_back(v);
  }
  return true;
}

/// A number as the 0-dim wrapped-number tensor torch passes for a Tensor argument.
at::Tensor wrappedNumber(const at::Scalar& s) {
  at::Tensor w = at::empty({}, at::TensorOptions().dtype(s.type()).device(c10::kMeta));
  w.unsafeGetTensorImpl()->set_wrapped_number(true);
  return w;
}

/// The result of aten::`op`.`overload` on `stack` by its C++ meta rule; an
/// undefined tensor when the rule declines or raises.
at::Tensor metaOf(const std::string& op, const std::string& overload, torch::jit::Stack stack) {
  try {
    if (!backend::aten::runNativeMeta("aten::" + op, overload, stack)) return {};
  } catch (const std::exception&) {
    return {};  // the Python path raises or breaks as it did
  }
  if (stack.size() != 1 || !stack[0].isTensor()) return {};
  return stack[0].toTensor();
}

/// Binds the call's arguments by position, then the keywords in `names`
/// (parameter i + 1 of the call; self is positional); false when a keyword is
/// not one of them, is given twice, or too many arguments are given.
bool bindKw(PyObject* args, PyObject* kwargs, std::initializer_list<const char*> names,
            std::vector<PyObject*>& out) {
  Py_ssize_t n = PyTuple_GET_SIZE(args);
  out.assign(names.size() + 1, nullptr);
  if (n > static_cast<Py_ssize_t>(out.size()) || n < 1) return false;
  for (Py_ssize_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = PyTuple_GET_ITEM(args, i);
  if (!kwargs) return true;
  Py_ssize_t found = 0;
  size_t i = 1;
  for (const char* name : names) {
    PyObject* v = PyDict_GetItemString(kwargs, name);  // borrowed
    if (v) {
      if (out[i]) return false;  // given twice: Python's TypeError
      out[i] = v;
      ++found;
    }
    ++i;
  }
  return found == PyDict_GET_SIZE(kwargs);
}

}  // namespace

/// The recorder objects of one translation (see the Note).
struct NativeRecorder::State {
  bool read = false;    ///< the fixed part was read
  bool usable = false;  ///< a plain translation with the objects this path writes
  Ref ctx, rec, knownVals, counts, alive;
  std::string device;
  capture::GraphBuilder* b = nullptr;
  bool plain = false;   ///< no region of the recorder, no symbolic numbers
  Ref vids;
};

NativeRecorder::NativeRecorder(PyObject* host) : host_(host), s_(std::make_unique<State>()) {}
NativeRecorder::~NativeRecorder() = default;

void NativeRecorder::refresh() {
  State& s = *s_;
  if (!s.read) {
    s.read = true;
    s.ctx.reset(attr(host_, "ctx"));
    s.rec.reset(attr(s.ctx.get(), "rec"));
    // Fixed per translation (host.State.__init__): a dynamic-shape run keeps the Python path.
    Ref dyn(attr(s.ctx.get(), "dyn_active")), shadow(attr(s.rec.get(), "shadow")), device(attr(s.rec.get(), "device")),
        builder(attr(s.ctx.get(), "builder")), known(attr(s.rec.get(), "known"));
    s.knownVals.reset(attr(known.get(), "vals"));
    s.counts.reset(attr(s.rec.get(), "op_counts"));
    s.alive.reset(attr(s.rec.get(), "_alive"));
    const char* d = device.get() && PyUnicode_Check(device.get()) ? PyUnicode_AsUTF8(device.get()) : nullptr;
    if (d) s.device = d;
    try {
      s.b = builder.get() ? py::handle(builder.get()).cast<capture::GraphBuilder*>() : nullptr;
    } catch (const std::exception&) {
      s.b = nullptr;
    }
    PyErr_Clear();
    s.usable = s.rec.get() && dyn.get() == Py_False && shadow.get() == Py_None && d && s.b && s.knownVals.get() &&
               PyDict_CheckExact(s.knownVals.get()) && s.counts.get() && PyDict_CheckExact(s.counts.get()) &&
               s.alive.get() && PyList_CheckExact(s.alive.get());
  }
  if (!fresh_) {
    fresh_ = true;
    s.vids.reset(attr(s.rec.get(), "vids"));
    if (s.vids.get() && !PyDict_CheckExact(s.vids.get())) s.vids.reset(nullptr);
    Ref noGrad(attr(s.rec.get(), "no_grad")), inf(attr(s.rec.get(), "inference")), sym(attr(s.rec.get(), "sym"));
    s.plain = noGrad.get() == Py_False && inf.get() == Py_False && sym.get() && PyDict_CheckExact(sym.get()) &&
              PyDict_GET_SIZE(sym.get()) == 0 && s.vids.get();
  }
}

bool NativeRecorder::ready() {
  refresh();
  return s_->usable && s_->plain;
}

int NativeRecorder::bound(PyObject* meta) {
  refresh();
  if (!s_->vids.get()) return -1;
  PyObject* key = PyLong_FromVoidPtr(meta);
  if (!key) {
    PyErr_Clear();
    return -1;
  }
  PyObject* v = PyDict_GetItemWithError(s_->vids.get(), key);  // borrowed
  Py_DECREF(key);
  long out = v && PyLong_CheckExact(v) ? PyLong_AsLong(v) : -1;
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  return static_cast<int>(out);
}

namespace {

bool readArg(PyObject* a, PyObject* vids, PyObject* known, Arg& out) {
  out.obj = a;
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
  if (PyBool_Check(a)) {
    out.num = at::Scalar(a == Py_True);
    return true;
  }
  int64_t v;
  if (exactInt(a, v)) {
    out.num = at::Scalar(v);
    return true;
  }
  if (PyFloat_CheckExact(a)) {
    out.num = at::Scalar(PyFloat_AS_DOUBLE(a));
    return true;
  }
  return false;
}

/// The nodes of an elementwise, comparison, matmul, softmax or unary call on
/// `a` (arguments already read); false when the call is not modelled.
bool plainNodes(const Entry& e, Arg* a, Py_ssize_t n, std::vector<Node>& nodes) {
  if (n != (e.form == Form::Unary ? 1 : 2)) return false;
  if (e.form == Form::Softmax) {  // (tensor, int dim): the dim is recorded as given
    if (!a[0].tensor || a[1].tensor || !PyLong_CheckExact(a[1].obj)) return false;
    Node nd{"aten._softmax.default", {a[0].vid}, {}, metaOf(e.op, "default", {a[0].t, a[1].num.toLong(), false})};
    nd.attrs.set("dim", numberAttr(a[1].obj));
    nd.attrs.set("half_to_float", ir::Attr::boolean(false));
    nodes.push_back(std::move(nd));
    return true;
  }
  if (!a[0].tensor) {
    if (!e.numberFirst || !a[1].tensor) return false;
    std::swap(a[0], a[1]);  // Tensor.__radd__ / __rmul__: op(tensor, number)
  }
  // matmul decomposes to mm only for two matrices (other ranks: views, bmm, ...).
  if (e.form == Form::Matmul && (!a[1].tensor || a[0].t.dim() != 2 || a[1].t.dim() != 2)) return false;
  std::string overload = "default";
  torch::jit::Stack stack{a[0].t};
  Node nd;
  nd.operands.push_back(a[0].vid);
  if (e.form != Form::Unary) {
    if (a[1].tensor) {
      overload = "Tensor";
      stack.emplace_back(a[1].t);
      nd.operands.push_back(a[1].vid);
    } else if (e.form == Form::Compare) {
      overload = "Scalar";
      stack.emplace_back(a[1].num);
      nd.attrs.set("other", numberAttr(a[1].obj));
    } else {
      overload = "Tensor";
      stack.emplace_back(wrappedNumber(a[1].num));
      nd.attrs.set("other", numberAttr(a[1].obj));
    }
    if (e.form == Form::Matmul) overload = "default";
    if (e.op == "add" || e.op == "sub") stack.emplace_back(at::Scalar(int64_t{1}));  // alpha
  }
  for (int i = 0; i < e.nones; ++i) stack.emplace_back();  // None
  if (e.op == "t") {
    // A view: run as the Python path runs it (the op on the metas, through the dispatcher).
    try {
      nd.out = at::t(a[0].t);
    } catch (const std::exception&) {
      return false;
    }
  } else {
    nd.out = metaOf(e.op, overload, std::move(stack));
  }
  nd.gname = "aten." + e.op + "." + overload;
  nodes.push_back(std::move(nd));
  return true;
}

/// Runs `f` (a view op or clone on the metas, through the dispatcher as the
/// Python path runs it); an undefined tensor when it raises.
template <typename F>
at::Tensor dispatched(F f) {
  try {
    return f();
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

namespace {

/// Adds `nodes` in order and binds their results; the last result (a new
/// reference), or null when nothing was added for a declined node.
PyObject* emit(NativeRecorder::State& s, std::vector<Node>& nodes, PyObject* file, int line) {
  std::vector<ir::DType> dtypes;
  for (const Node& nd : nodes) {
    ir::DType dtype;
    if (!nd.out.defined() || !backend::aten::fromScalarType(nd.out.scalar_type(), dtype)) return nullptr;
    dtypes.push_back(dtype);
  }
  const char* f = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
  if (!f) PyErr_Clear();
  s.b->setLoc(f ? f : "<unknown>", static_cast<uint32_t>(line));
  PyObject* result = nullptr;
  int prev = -1;
  for (size_t k = 0; k < nodes.size(); ++k) {
    Node& nd = nodes[k];
    for (int& o : nd.operands)
      if (o == kPrev) o = prev;
    std::vector<ir::Dim> dims;
    for (int64_t d : nd.out.sizes()) dims.push_back(ir::Dim::fixed(d));
    std::vector<int> ids;
    std::string error;
    if (!s.b->addOp(nd.gname, nd.operands, std::move(nd.attrs), {ir::Type::tensor(dtypes[k], dims, s.device)}, ids,
                    error) ||
        ids.size() != 1) {
      // Nothing of this node was added (an earlier one of the call may have
      // been: bound, dead code for DCE); the Python path breaks as it did.
      Py_XDECREF(result);
      return nullptr;
    }
    prev = ids[0];
    // What Recorder._record does after add_op: count the op, bind the result.
    Py_XDECREF(result);
    result = THPVariable_Wrap(nd.out);
    if (!result) return nullptr;
    Ref name(PyUnicode_FromString(nd.gname.c_str()));
    PyObject* c = name.get() ? PyDict_GetItemWithError(s.counts.get(), name.get()) : nullptr;  // borrowed
    Ref next(PyLong_FromLong(c ? PyLong_AsLong(c) + 1 : 1));
    Ref key(PyLong_FromVoidPtr(result));
    Ref vid(PyLong_FromLong(ids[0]));
    if (!name.get() || !next.get() || !key.get() || !vid.get() ||
        PyDict_SetItem(s.counts.get(), name.get(), next.get()) < 0 ||
        PyDict_SetItem(s.vids.get(), key.get(), vid.get()) < 0 || PyList_Append(s.alive.get(), result) < 0) {
      // Out of memory: the node stays (unbound, dead code for DCE) and the
      // Python path records the call again.
      Py_DECREF(result);
      return nullptr;
    }
  }
  return result;
}

}  // namespace

PyObject* NativeRecorder::record(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* file, int line) {
  if (kwargs && !PyDict_CheckExact(kwargs)) return nullptr;
  if (kwargs && PyDict_GET_SIZE(kwargs) == 0) kwargs = nullptr;
  if (!PyTuple_CheckExact(args) || PyTuple_GET_SIZE(args) < 1) return nullptr;
  const auto& tab = table();
  auto it = tab.find(fn);
  if (it == tab.end()) return nullptr;
  const Entry& e = it->second;
  if (c10::impl::TorchDispatchModeTLS::stack_len() > 0 || at::impl::PythonTorchFunctionTLS::stack_len() > 0 ||
      c10::InferenceMode::is_enabled())
    return nullptr;
  if (!ready()) return nullptr;
  State& s = *s_;
  PyObject* vids = s.vids.get();
  PyObject* known = s.knownVals.get();

  std::vector<Node> nodes;
  Arg self;
  if (!readArg(PyTuple_GET_ITEM(args, 0), vids, known, self)) return nullptr;
  if (!self.tensor && !e.numberFirst) return nullptr;  // only a number-first operator (`1 + x`) has a number first
  std::vector<PyObject*> p;
  switch (e.form) {
    case Form::Reduce: {
      if (!bindKw(args, kwargs, {"dim", "keepdim"}, p) || !self.tensor) return nullptr;
      if (!p[1] && !p[2]) {
        Entry whole{e.op, Form::Unary, false, 1};
        if (!plainNodes(whole, &self, 1, nodes)) return nullptr;
        break;
      }
      std::vector<int64_t> dims;
      int64_t d;
      if (!p[1]) return nullptr;
      if (exactInt(p[1], d)) dims.push_back(d);
      else if (!intList(p[1], dims) || dims.empty()) return nullptr;
      if (p[2] && !PyBool_Check(p[2])) return nullptr;
      bool keep = p[2] == Py_True;
      std::string overload = e.op == "sum" ? "dim_IntList" : "dim";
      Node nd{"aten." + e.op + "." + overload, {self.vid}, {},
              metaOf(e.op, overload, {self.t, c10::IValue(dims), keep, c10::IValue()})};
      nd.attrs.set("dim", intsAttr(dims));
      if (keep) nd.attrs.set("keepdim", ir::Attr::boolean(true));  // False: the default, not passed
      nodes.push_back(std::move(nd));
      break;
    }
    case Form::Transpose: {
      int64_t d0, d1;
      if (!bindKw(args, kwargs, {"dim0", "dim1"}, p) || !self.tensor || !exactInt(p[1], d0) || !exactInt(p[2], d1))
        return nullptr;
      Node nd{"aten.transpose.int", {self.vid}, {}, dispatched([&] { return at::transpose(self.t, d0, d1); })};
      nd.attrs.set("dim0", ir::Attr::integer(d0));
      nd.attrs.set("dim1", ir::Attr::integer(d1));
      nodes.push_back(std::move(nd));
      break;
    }
    case Form::View: {
      if (kwargs || !self.tensor) return nullptr;
      std::vector<int64_t> size;
      Py_ssize_t n = PyTuple_GET_SIZE(args);
      if (n == 2 && !PyLong_Check(PyTuple_GET_ITEM(args, 1))) {
        if (!intList(PyTuple_GET_ITEM(args, 1), size)) return nullptr;  // view((a, b)); view(dtype) declines
      } else {
        for (Py_ssize_t i = 1; i < n; ++i) {
          int64_t v;
          if (!exactInt(PyTuple_GET_ITEM(args, i), v)) return nullptr;
          size.push_back(v);
        }
      }
      if (n < 2) return nullptr;
      Node nd{"aten.view.default", {self.vid}, {}, dispatched([&] { return self.t.view(size); })};
      nd.attrs.set("size", intsAttr(size));
      nodes.push_back(std::move(nd));
      break;
    }
    case Form::Contiguous: {
      if (kwargs || PyTuple_GET_SIZE(args) != 1 || !self.tensor) return nullptr;
      if (self.t.is_contiguous()) {
        // contiguous's kernel returns self: no op reaches the mode, the same meta comes back.
        Py_INCREF(self.obj);
        return self.obj;
      }
      Node nd{"aten.clone.default", {self.vid}, {},
              dispatched([&] { return at::clone(self.t, at::MemoryFormat::Contiguous); })};
      nd.attrs.set("memory_format", ir::Attr::string("contiguous_format"));
      nodes.push_back(std::move(nd));
      break;
    }
    case Form::Linear: {
      if (!bindKw(args, kwargs, {"weight", "bias"}, p) || !self.tensor || !p[1]) return nullptr;
      Arg w, bias;
      if (!readArg(p[1], vids, known, w) || !w.tensor) return nullptr;
      bool hasBias = p[2] && p[2] != Py_None;
      if (hasBias && (!readArg(p[2], vids, known, bias) || !bias.tensor)) return nullptr;
      // linear's kernel for a matrix input: addmm(bias, input, weight.t()) with
      // a bias, matmul(input, weight.t()) (mm of two matrices) without.
      if (self.t.dim() != 2 || w.t.dim() != 2) return nullptr;
      Node tn{"aten.t.default", {w.vid}, {}, dispatched([&] { return at::t(w.t); })};
      if (!tn.out.defined()) return nullptr;
      Node mm;
      if (hasBias) {
        mm = Node{"aten.addmm.default", {bias.vid, self.vid, kPrev}, {},
                  metaOf("addmm", "default", {bias.t, self.t, tn.out, at::Scalar(int64_t{1}), at::Scalar(int64_t{1})})};
      } else {
        mm = Node{"aten.mm.default", {self.vid, kPrev}, {}, metaOf("mm", "default", {self.t, tn.out})};
      }
      nodes.push_back(std::move(tn));
      nodes.push_back(std::move(mm));
      break;
    }
    default: {
      if (kwargs) return nullptr;
      Py_ssize_t n = PyTuple_GET_SIZE(args);
      if (n > 2) return nullptr;
      Arg a[2];
      a[0] = self;
      if (n == 2 && !readArg(PyTuple_GET_ITEM(args, 1), vids, known, a[1])) return nullptr;
      if (!plainNodes(e, a, n, nodes)) return nullptr;
    }
  }
  return emit(s, nodes, file, line);
}

PyObject* NativeRecorder::call(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* file, int line) {
  if (!enabled.load(std::memory_order_relaxed)) return nullptr;
  PyObject* r = record(fn, args, kwargs, file, line);
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
