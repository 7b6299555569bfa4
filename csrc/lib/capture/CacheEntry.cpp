// Compiled graphs, output templates, cache entries and graph functions. See
// CacheEntry.h. Conversions between Python objects and IValues live here so the
// hook file stays about CPython frames only.
#include "xacc/capture/CacheEntry.h"

#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <exception>
#include <map>
#include <mutex>
#include <new>

#include "xacc/capture/EvalFrame.h"
#include "xacc/ir/Printer.h"

namespace xacc::capture {

namespace {
// See Note [Graph tap]. Strong reference; written with the GIL held.
PyObject* gGraphTap = nullptr;

void callTap(uintptr_t id, const char* what, PyObject* values) {
  CaptureState prev = setState(CaptureState::Off);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyObject* r = PyObject_CallFunction(gGraphTap, "KsO", static_cast<unsigned long long>(id), what, values);
  if (!r) PyErr_Clear();
  Py_XDECREF(r);
  PyErr_Restore(type, value, tb);
  setState(prev);
}
}  // namespace

void setGraphTap(PyObject* tap) {
  Py_XINCREF(tap);
  Py_XSETREF(gGraphTap, tap);
}

bool pythonToIValue(PyObject* o, c10::IValue& out, std::string& error) {
  if (THPVariable_Check(o)) {
    out = THPVariable_Unpack(o);
  } else if (PyBool_Check(o)) {
    out = o == Py_True;
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      error = "integer input does not fit in 64 bits";
      return false;
    }
    out = static_cast<int64_t>(v);
  } else if (PyFloat_Check(o)) {
    out = PyFloat_AS_DOUBLE(o);
  } else if (o == Py_None) {
    out = c10::IValue();
  } else {
    error = std::string("graph input of type '") + Py_TYPE(o)->tp_name + "' is not supported";
    return false;
  }
  return true;
}

namespace {

/// The registered backends, by target (Note [Backend interface]).
struct BackendRegistry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const Backend>, std::less<>> byTarget;
  static BackendRegistry& get() {
    static BackendRegistry* r = new BackendRegistry;
    return *r;
  }
};

/// "xpu0" -> "xpu": the target part of a device name (trailing digits dropped).
std::string_view targetOf(std::string_view device) {
  size_t n = device.size();
  while (n > 0 && device[n - 1] >= '0' && device[n - 1] <= '9') --n;
  return device.substr(0, n);
}

struct RunFailure {
  std::exception_ptr cause;
  std::string error;
};
thread_local RunFailure tRunFailure;  // See Note [ATen error translation]

}  // namespace

void registerBackend(Backend b) {
  BackendRegistry& r = BackendRegistry::get();
  std::lock_guard<std::mutex> lock(r.mu);
  std::string target = b.target;
  r.byTarget[target] = std::make_shared<const Backend>(std::move(b));
}

std::shared_ptr<const Backend> backendFor(std::string_view device) {
  BackendRegistry& r = BackendRegistry::get();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.byTarget.find(targetOf(device));
  return it == r.byTarget.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const Backend>> backends() {
  BackendRegistry& r = BackendRegistry::get();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::shared_ptr<const Backend>> out;
  for (auto& [target, b] : r.byTarget) out.push_back(b);
  return out;
}

bool deviceAvailable(std::string_view device) { return backendFor(device) != nullptr; }

void noteRunFailure(std::exception_ptr cause, std::string error) {
  tRunFailure = {std::move(cause), std::move(error)};
}

std::exception_ptr takeRunFailure(std::string& error) {
  error = std::move(tRunFailure.error);
  std::exception_ptr e = std::move(tRunFailure.cause);
  tRunFailure = {};
  return e;
}

void raiseAsEager() {
  std::string error;
  std::exception_ptr e = takeRunFailure(error);
  if (!e || error.empty() || !PyErr_Occurred()) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  bool reported = false;
  if (type == PyExc_RuntimeError) {  // exactly: what the executor boundary raises
    PyErr_NormalizeException(&type, &value, &tb);
    if (PyObject* s = value ? PyObject_Str(value) : nullptr) {
      const char* u = PyUnicode_AsUTF8(s);
      reported = u && std::string_view(u).find(error) != std::string_view::npos;
      Py_DECREF(s);
    }
    PyErr_Clear();
  }
  if (!reported) {
    PyErr_Restore(type, value, tb);
    return;
  }
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  torch::translate_exception_to_python(e);
}

PyObject* ivalueToPython(const c10::IValue& v) {
  if (v.isTensor()) return THPVariable_Wrap(v.toTensor());
  if (v.isNone()) Py_RETURN_NONE;
  if (v.isBool()) return PyBool_FromLong(v.toBool());
  if (v.isInt()) return PyLong_FromLongLong(v.toInt());
  if (v.isDouble()) return PyFloat_FromDouble(v.toDouble());
  if (v.isList() || v.isTuple()) {
    bool tuple = v.isTuple();
    c10::ArrayRef<c10::IValue> items = tuple ? v.toTupleRef().elements() : v.toListRef();
    PyObject* out = tuple ? PyTuple_New(items.size()) : PyList_New(items.size());
    if (!out) return nullptr;
    for (size_t i = 0; i < items.size(); ++i) {
      PyObject* e = ivalueToPython(items[i]);
      if (!e) {
        Py_DECREF(out);
        return nullptr;
      }
      if (tuple) PyTuple_SET_ITEM(out, i, e);
      else PyList_SET_ITEM(out, i, e);
    }
    return out;
  }
  PyErr_Format(PyExc_TypeError, "xacc: cannot return a '%s' value to Python", v.tagKind().c_str());
  return nullptr;
}

namespace {
/// Sets the Python error for exception `e`, which escaped the `device`
/// backend's run (Note [Backend interface]: failures are reported as false
/// plus an error, so this is a backend bug or an allocation that failed).
/// Running out of memory raises what eager raises for it; anything else
/// xacc.BackendError with the exception's message. Call with the GIL held.
void raiseEscaped(const std::exception_ptr& e, const std::string& device) {
  std::string what = "an exception that is not a std::exception";
  try {
    std::rethrow_exception(e);
  } catch (const c10::OutOfMemoryError&) {
    torch::translate_exception_to_python(e);
    return;
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
    return;
  } catch (const c10::Error& ce) {
    what = ce.what_without_backtrace();
  } catch (const std::exception& se) {
    what = se.what();
  } catch (...) {
  }
  std::string msg = "xacc: the '" + device + "' backend failed while running a captured graph (an xacc bug): " + what;
  PyObject* cls = nullptr;
  if (PyObject* mod = PyImport_ImportModule("xacc.errors")) {
    cls = PyObject_GetAttrString(mod, "BackendError");
    Py_DECREF(mod);
  }
  if (!cls) PyErr_Clear();
  PyErr_SetString(cls ? cls : PyExc_RuntimeError, msg.c_str());
  Py_XDECREF(cls);
}
}  // namespace

std::shared_ptr<CompiledGraph> CompiledGraph::create(std::unique_ptr<ir::Module> module,
                                                     ir::Graph* graph, std::string& error,
                                                     const std::string& device, const BackendOptions& options) {
  auto cg = std::shared_ptr<CompiledGraph>(new CompiledGraph());
  cg->device_ = device;
  std::shared_ptr<const Backend> backend = backendFor(device);
  if (!backend) {
    error = "device '" + device + "' is not available in this build (no backend registered for '" +
            std::string(targetOf(device)) + "')";
    return nullptr;
  }
  cg->exe_ = backend->prepare(*graph, device, options, error);
  if (!cg->exe_) return nullptr;
  cg->setGraph(std::move(module), graph);
  return cg;
}

std::shared_ptr<CompiledGraph> CompiledGraph::unprepared(std::unique_ptr<ir::Module> module, ir::Graph* graph,
                                                         const std::string& device, std::string plan) {
  auto cg = std::shared_ptr<CompiledGraph>(new CompiledGraph());
  cg->device_ = device;
  cg->plan_ = std::move(plan);
  cg->setGraph(std::move(module), graph);
  return cg;
}

void CompiledGraph::setGraph(std::unique_ptr<ir::Module> module, ir::Graph* graph) {
  for (size_t i = 0; i < graph->numParams(); ++i) {
    bool tok = graph->param(i)->type().isToken();
    paramIsToken_.push_back(tok);
    if (!tok) ++numInputs_;
  }
  for (ir::Value* v : graph->results()) {
    bool tok = v->type().isToken();
    resultIsToken_.push_back(tok);
    if (tok) hasEffects_ = true;
  }
  module_ = std::move(module);
  graph_ = graph;
}

std::string CompiledGraph::text() const { return ir::printGraph(*graph_); }

namespace {
/// Calls the graph tap with `vals` as Python objects (a value that cannot be
/// converted shows as None). Takes the GIL, which the caller may not hold.
void tapValues(uintptr_t id, const char* what, const std::vector<c10::IValue>& vals) {
  PyGILState_STATE gs = PyGILState_Ensure();
  if (gGraphTap) {
    if (PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(vals.size()))) {
      for (size_t i = 0; i < vals.size(); ++i) {
        PyObject* o = ivalueToPython(vals[i]);
        if (!o) {
          PyErr_Clear();
          o = Py_NewRef(Py_None);
        }
        PyTuple_SET_ITEM(t, i, o);
      }
      callTap(id, what, t);
      Py_DECREF(t);
    }
  }
  PyGILState_Release(gs);
}
}  // namespace

bool CompiledGraph::checkCall(size_t n, std::string& error) const {
  if (!exe_) {
    error = "graph is not prepared for a backend (its entry runs other graphs): " + plan_;
    return false;
  }
  if (n != numInputs_) {
    error = "graph expects " + std::to_string(numInputs_) + " inputs, got " + std::to_string(n);
    return false;
  }
  return true;
}

bool CompiledGraph::execute(std::vector<c10::IValue>& args, std::vector<c10::IValue>& outs, std::string& error,
                            std::exception_ptr& escaped) const {
  std::vector<c10::IValue> all;
  bool ok = false;
  // This runs under the eval-frame hook, which CPython calls from C, or on the
  // autograd engine's thread: an exception that left here would reach
  // std::terminate (it aborted the process when an xpu region read a vmap
  // BatchedTensor's memory), and it would skip re-taking the GIL. So every
  // exception stops here. The Python an op's kernel runs (a custom op's, Note
  // [Custom operators as nodes]) is eager's opaque call, never captured: Note
  // [Capture state].
  CaptureState prevState = setState(CaptureState::Off);
  try {
    ok = exe_->run(args, all, error);
  } catch (...) {
    escaped = std::current_exception();
  }
  setState(prevState);
  if (escaped || !ok) return false;
  outs.clear();
  for (size_t i = 0; i < all.size(); ++i)
    if (!resultIsToken_[i]) outs.push_back(std::move(all[i]));
  if (gGraphTap) tapValues(id(), "out", outs);
  return true;
}

bool CompiledGraph::run(PyObject* const* inputs, size_t n, std::vector<c10::IValue>& outs,
                        std::string& error) const {
  if (!checkCall(n, error)) return false;
  std::vector<c10::IValue> args(paramIsToken_.size());
  size_t k = 0;
  for (size_t i = 0; i < paramIsToken_.size(); ++i) {
    if (paramIsToken_[i]) continue;
    if (!pythonToIValue(inputs[k++], args[i], error)) return false;
  }
  if (gGraphTap) {
    PyObject* in = PyTuple_New(static_cast<Py_ssize_t>(n));
    for (size_t i = 0; i < n; ++i) {
      Py_INCREF(inputs[i]);
      PyTuple_SET_ITEM(in, i, inputs[i]);
    }
    callTap(id(), "in", in);
    Py_DECREF(in);
  }
  bool ok = false;
  std::exception_ptr escaped;
  Py_BEGIN_ALLOW_THREADS
  ok = execute(args, outs, error, escaped);
  Py_END_ALLOW_THREADS
  if (escaped) {
    raiseEscaped(escaped, device_);
    return false;
  }
  return ok;
}

bool CompiledGraph::runValues(std::vector<c10::IValue> inputs, std::vector<c10::IValue>& outs, std::string& error,
                              std::exception_ptr& escaped) const {
  if (!checkCall(inputs.size(), error)) return false;
  if (gGraphTap) tapValues(id(), "in", inputs);
  std::vector<c10::IValue> args(paramIsToken_.size());
  for (size_t i = 0, k = 0; i < paramIsToken_.size(); ++i)
    if (!paramIsToken_[i]) args[i] = std::move(inputs[k++]);
  return execute(args, outs, error, escaped);
}

PyObject* CompiledGraph::call(PyObject* const* inputs, size_t n) const {
  std::vector<c10::IValue> outs;
  std::string error;
  if (!run(inputs, n, outs, error)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, error.c_str());
    return nullptr;
  }
  PyObject* t = PyTuple_New(outs.size());
  if (!t) return nullptr;
  for (size_t i = 0; i < outs.size(); ++i) {
    PyObject* o = ivalueToPython(outs[i]);
    if (!o) {
      Py_DECREF(t);
      return nullptr;
    }
    PyTuple_SET_ITEM(t, i, o);
  }
  return t;
}

void OutTemplate::clear() {
  Py_XDECREF(obj);
  obj = nullptr;
  for (OutTemplate& t : items) t.clear();
  items.clear();
}

PyObject* OutTemplate::build(const std::vector<c10::IValue>& outs) const {
  switch (kind) {
    case Kind::Out:
      if (index < 0 || index >= static_cast<int>(outs.size())) {
        PyErr_SetString(PyExc_RuntimeError, "xacc: output template index out of range");
        return nullptr;
      }
      return ivalueToPython(outs[index]);
    case Kind::Const: Py_INCREF(obj); return obj;
    case Kind::Call: {
      if (index < 0 || index >= static_cast<int>(outs.size())) {
        PyErr_SetString(PyExc_RuntimeError, "xacc: output template index out of range");
        return nullptr;
      }
      PyObject* v = ivalueToPython(outs[index]);
      if (!v) return nullptr;
      PyObject* r = PyObject_CallOneArg(obj, v);
      Py_DECREF(v);
      return r;
    }
    case Kind::Tuple:
    case Kind::List: {
      PyObject* r = kind == Kind::Tuple ? PyTuple_New(items.size()) : PyList_New(items.size());
      if (!r) return nullptr;
      for (size_t i = 0; i < items.size(); ++i) {
        PyObject* e = items[i].build(outs);
        if (!e) {
          Py_DECREF(r);
          return nullptr;
        }
        if (kind == Kind::Tuple) PyTuple_SET_ITEM(r, i, e);
        else PyList_SET_ITEM(r, i, e);
      }
      return r;
    }
    case Kind::Dict: {
      PyObject* d = PyDict_New();
      if (!d) return nullptr;
      for (size_t i = 0; i < items.size(); ++i) {
        PyObject* e = items[i].build(outs);
        if (!e || PyDict_SetItem(d, PyTuple_GET_ITEM(obj, i), e) < 0) {
          Py_XDECREF(e);
          Py_DECREF(d);
          return nullptr;
        }
        Py_DECREF(e);
      }
      return d;
    }
  }
  return nullptr;
}

CacheEntry::~CacheEntry() {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF(consts);
  Py_XDECREF(fn);
  Py_XDECREF(runner);
  ret.clear();
  PyGILState_Release(g);
}

FrameView CacheEntry::view(PyObject* const* args, size_t nargs, PyObject* globals,
                           PyObject* builtins, PyObject* closure) const {
  return FrameView::of(args, nargs, globals, builtins, closure, consts);
}

namespace {
/// Calls a training runner (Note [Training runner]) with `n` inputs; a new
/// tuple of outputs, or null with an exception set.
PyObject* callRunner(PyObject* runner, PyObject* const* inputs, size_t n) {
  PyObject* args = PyTuple_New(static_cast<Py_ssize_t>(n));
  if (!args) return nullptr;
  for (size_t i = 0; i < n; ++i) {
    Py_INCREF(inputs[i]);
    PyTuple_SET_ITEM(args, i, inputs[i]);
  }
  CaptureState prev = setState(CaptureState::Off);  // its Python frames are ours and torch's
  PyObject* r = PyObject_Call(runner, args, nullptr);
  setState(prev);
  Py_DECREF(args);
  if (r && !PyTuple_Check(r)) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_TypeError, "xacc: a training runner must return a tuple");
    return nullptr;
  }
  return r;
}
}  // namespace

PyObject* CacheEntry::runGraph(PyObject** resolved) const {
  PyObject* small[16];
  std::vector<PyObject*> big;
  PyObject** inputs = small;
  if (inputNodes.size() > 16) {
    big.resize(inputNodes.size());
    inputs = big.data();
  }
  for (size_t i = 0; i < inputNodes.size(); ++i) inputs[i] = resolved[inputNodes[i]];
  std::vector<c10::IValue> outs;
  std::string error;
  if (runner) {
    PyObject* r = callRunner(runner, inputs, inputNodes.size());
    if (!r) return nullptr;
    bool ok = true;
    Py_ssize_t n = PyTuple_GET_SIZE(r);
    outs.resize(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n && ok; ++i) ok = pythonToIValue(PyTuple_GET_ITEM(r, i), outs[i], error);
    Py_DECREF(r);
    if (!ok) {
      PyErr_SetString(PyExc_RuntimeError, error.c_str());
      return nullptr;
    }
    return ret.build(outs);
  }
  if (!graph->run(inputs, inputNodes.size(), outs, error)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, error.c_str());
    return nullptr;
  }
  return ret.build(outs);
}

GraphFunction::~GraphFunction() {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF(consts);
  Py_XDECREF(runner);
  PyGILState_Release(g);
}

PyObject* GraphFunction::call(PyObject* const* args, size_t nargs) const {
  PyObject *globals = nullptr, *builtins = nullptr, *closure = nullptr;
  if (!runningFrameScope(globals, builtins, closure)) {
    PyErr_SetString(PyExc_RuntimeError, "xacc: a compiled graph was called outside a Python frame");
    return nullptr;
  }
  FrameView v = FrameView::of(args, nargs, globals, builtins, closure, consts);
  std::vector<PyObject*> resolved(sources->size());
  if (!sources->resolve(v, resolved.data())) {
    sources->release(resolved.data());
    PyErr_SetString(PyExc_RuntimeError, "xacc: a graph input could not be read from its source");
    return nullptr;
  }
  std::vector<PyObject*> inputs;
  inputs.reserve(inputNodes.size());
  for (int id : inputNodes) inputs.push_back(resolved[id]);
  PyObject* r = runner ? callRunner(runner, inputs.data(), inputs.size()) : graph->call(inputs.data(), inputs.size());
  sources->release(resolved.data());
  return r;
}

}  // namespace xacc::capture
