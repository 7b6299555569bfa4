// xacc._C.capture.translate: runs the C++ bytecode translator on one frame.
// The host object (xacc/_src/capture/host.py) observes torch calls on meta
// tensors and owns the graph inputs; this file adapts it to the translator's
// Host interface and turns the result into Python values:
//   ("graph", template, outputs)   the frame ran to RETURN_VALUE;
//   ("break", code, detail, file, line, function, offset, internal)
// Nothing raised inside the translator escapes: C++ exceptions and unexpected
// states come back as an internal ("GB020") break.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <set>

#include "../lib/capture/translate/BytecodeFacts.h"
#include "../lib/capture/translate/Codegen.h"
#include "../lib/capture/translate/CodegenImpl.h"
#include "../lib/capture/translate/PyTypes.h"
#include "../lib/capture/translate/Translator.h"
#include "native_record.h"
#include "xacc/capture/Guards.h"

namespace py = pybind11;
namespace cap = xacc::capture;
namespace tr = xacc::capture::translate;
using cap::GB;
using cap::gbCode;

namespace {

/// Reads the pending Python error into (code, detail): a GraphBreak raised by
/// the host keeps its code, anything else is described by its type and text.
void takeError(std::string& code, std::string& detail) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyErr_NormalizeException(&et, &ev, &etb);
  code.clear();
  detail.clear();
  if (ev) {
    PyObject* c = PyObject_GetAttrString(ev, "code");
    if (c && PyUnicode_Check(c)) {
      code = PyUnicode_AsUTF8(c);
      PyObject* d = PyObject_GetAttrString(ev, "detail");
      if (d && PyUnicode_Check(d)) detail = PyUnicode_AsUTF8(d);
      Py_XDECREF(d);
    }
    Py_XDECREF(c);
    PyErr_Clear();
    if (detail.empty()) {
      PyObject* s = PyObject_Str(ev);
      if (s) {
        const char* u = PyUnicode_AsUTF8(s);
        detail = std::string(et ? reinterpret_cast<PyTypeObject*>(et)->tp_name : "error") + ": " + (u ? u : "");
        Py_DECREF(s);
      }
      PyErr_Clear();
    }
  }
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(etb);
}

class PyHost final : public tr::Host {
public:
  explicit PyHost(py::handle host) : host_(host), native_(host.ptr()) {}

  tr::PyRef tensorInput(PyObject* tensor, int node, bool guard, std::string& code,
                        std::string& detail) override {
    PyObject* r = PyObject_CallMethod(host_.ptr(), "tensor_input", "Oii", tensor, node, guard ? 1 : 0);
    if (!r) takeError(code, detail);
    return tr::PyRef::steal(r);
  }
  tr::PyRef tensorInputs(PyObject* items, std::string& code, std::string& detail) override {
    PyObject* r = PyObject_CallMethod(host_.ptr(), "tensor_inputs", "O", items);
    if (!r) takeError(code, detail);
    return tr::PyRef::steal(r);
  }
  tr::PyRef record(PyObject* fn, PyObject* args, PyObject* kwargs, std::string& code,
                   std::string& detail) override {
    // Note [Records made in C++]: the calls native_record.cpp reproduces exactly
    // never reach the host.
    if (PyObject* r = native_.call(fn, args, kwargs, file_, line_)) return tr::PyRef::steal(r);
    native_.invalidate();
    PyObject* r = PyObject_CallMethod(host_.ptr(), "record", "OOOOi", fn, args, kwargs ? kwargs : Py_None,
                                      file_ ? file_ : Py_None, line_);
    if (!r) takeError(code, detail);
    return tr::PyRef::steal(r);
  }
  int valueOf(PyObject* meta, std::string& detail) override {
    // Note [Bindings read in place]: a meta the recorder bound is read from its
    // table (`Recorder.vids`, id(meta) -> value id) without running Python
    // code; only a miss (a real tensor becoming an entry constant, or a break)
    // calls `Host.value_of`.
    int bound = native_.bound(meta);
    if (bound >= 0) return bound;
    PyObject* r = PyObject_CallMethod(host_.ptr(), "value_of", "O", meta);
    if (!r) {
      std::string code;
      takeError(code, detail);
      return -1;
    }
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    return static_cast<int>(v);
  }
  int constIndex(PyObject* obj) override {
    PyObject* r = PyObject_CallMethod(host_.ptr(), "const_index", "O", obj);
    if (!r) {
      PyErr_Clear();
      return 0;
    }
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    return static_cast<int>(v);
  }
  bool setGrad(bool enabled, std::string& code, std::string& detail) override {
    native_.invalidate();  // the recorder's no_grad region
    PyObject* r = PyObject_CallMethod(host_.ptr(), "set_grad", "i", enabled ? 1 : 0);
    if (!r) {
      takeError(code, detail);
      return false;
    }
    Py_DECREF(r);
    return true;
  }
  int scalarInput(int node, bool isInt) override { return callInt("scalar_input", "ii", node, isInt ? 1 : 0); }
  int arith(const char* op, const std::vector<int>& operands, const char* type) override {
    PyObject* ids = PyList_New(static_cast<Py_ssize_t>(operands.size()));
    for (size_t i = 0; i < operands.size(); ++i)
      PyList_SET_ITEM(ids, static_cast<Py_ssize_t>(i), PyLong_FromLong(operands[i]));
    int r = callInt("arith", "sOs", op, ids, type);
    Py_DECREF(ids);
    return r;
  }
  int sizeConcrete(int vid) override { return callInt("size_concrete", "i", vid); }
  int scalarConst(PyObject* value, const char* type) override { return callInt("scalar_const", "Os", value, type); }
  tr::PyRef marker(int i) override {
    PyObject* r = PyObject_CallMethod(host_.ptr(), "marker", "i", i);
    if (!r) PyErr_Clear();
    return tr::PyRef::steal(r);
  }
  tr::PyRef probe(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* values) override {
    return tr::PyRef::steal(PyObject_CallMethod(host_.ptr(), "probe", "OOOO", fn, args, kwargs, values));
  }
  tr::PyRef recordSym(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* sentinels,
                      const std::vector<int>& vids, std::string& code, std::string& detail) override {
    native_.invalidate();
    PyObject* ids = PyList_New(static_cast<Py_ssize_t>(vids.size()));
    for (size_t i = 0; i < vids.size(); ++i) PyList_SET_ITEM(ids, static_cast<Py_ssize_t>(i), PyLong_FromLong(vids[i]));
    PyObject* r = PyObject_CallMethod(host_.ptr(), "record_sym", "OOOOOOi", fn, args, kwargs, sentinels, ids,
                                      file_ ? file_ : Py_None, line_);
    Py_DECREF(ids);
    if (!r) takeError(code, detail);
    return tr::PyRef::steal(r);
  }
  tr::PyRef call(const char* method, PyObject* args, std::string& code, std::string& detail) override {
    native_.invalidate();  // set_inference, restore_binds, ...: Note [Records made in C++]
    PyObject* fn = PyObject_GetAttrString(host_.ptr(), method);
    PyObject* r = fn ? PyObject_CallObject(fn, args) : nullptr;
    Py_XDECREF(fn);
    if (!r) takeError(code, detail);
    return tr::PyRef::steal(r);
  }
  void setLoc(PyObject* file, int line) override {
    file_ = file;
    line_ = line;
  }

private:
  template <typename... A>
  int callInt(const char* method, const char* fmt, A... a) {
    PyObject* r = PyObject_CallMethod(host_.ptr(), method, fmt, a...);
    if (!r) {
      PyErr_Clear();
      return -1;
    }
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();
    return static_cast<int>(v);
  }
  py::handle host_;
  xacc::python::NativeRecorder native_;  ///< Note [Records made in C++]
  PyObject* file_ = nullptr;  // borrowed from a code object being translated
  int line_ = 0;
};

class PyBreakHost final : public tr::BreakHost {
public:
  explicit PyBreakHost(py::handle host) : host_(host) {}
  tr::PyRef finishGraph(const std::vector<int>& outputs) override {
    PyObject* ids = PyList_New(static_cast<Py_ssize_t>(outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i)
      PyList_SET_ITEM(ids, static_cast<Py_ssize_t>(i), PyLong_FromLong(outputs[i]));
    PyObject* r = PyObject_CallMethod(host_.ptr(), "finish_graph", "O", ids);
    Py_DECREF(ids);
    return tr::PyRef::steal(r);
  }
  PyObject* constAt(int i) override {
    PyObject* ctx = PyObject_GetAttrString(host_.ptr(), "ctx");
    PyObject* consts = ctx ? PyObject_GetAttrString(ctx, "consts") : nullptr;
    Py_XDECREF(ctx);
    if (!consts) {
      PyErr_Clear();
      return nullptr;
    }
    PyObject* c = PyList_Check(consts) && i < PyList_GET_SIZE(consts) ? PyList_GET_ITEM(consts, i) : nullptr;
    Py_DECREF(consts);  // the context keeps the list (and the constant) alive
    return c;
  }

private:
  py::handle host_;
};

py::object breakResult(const tr::Failure& f) {
  return py::make_tuple("break", f.code, f.detail, f.file, f.line, f.function, f.offset, f.internal);
}

/// The frame split at `ins`: ("code", fn, ...) or ("fallback", code, detail, <the break>).
py::object splitResult(tr::Translator& t, const tr::Instr& ins, py::handle func, py::handle host,
                       const tr::Failure& brk, bool silent) {
  if (!tr::codegenModelled()) {
    // Note [Bytecode versions]: no break function for this version yet.
    return py::make_tuple("fallback", gbCode(GB::UnsupportedInstruction),
                          "not captured: break functions for CPython 3." + std::to_string(tr::opcodeTableVersion()) +
                              " bytecode not generated yet",
                          brk.code, brk.detail, brk.file, brk.line, brk.function, silent);
  }
  PyBreakHost bh(host);
  tr::Failure fallback;
  tr::PyRef fn = tr::emitBreak(t, *t.topFrame(), ins, func.ptr(), bh, fallback);
  if (PyErr_Occurred()) PyErr_Clear();
  if (!fn && fallback.code == "LOOP") {
    // A break again, at the loop's header: the caller translates once more.
    tr::Failure f = brk;
    f.offset = fallback.offset;
    f.detail += " (inside the loop at line " + std::to_string(fallback.line) + ": " + fallback.detail + ")";
    return breakResult(f);
  }
  if (!fn) {
    return py::make_tuple("fallback", fallback.code, fallback.detail, brk.code, brk.detail, brk.file, brk.line,
                          brk.function, silent);
  }
  return py::make_tuple("code", py::reinterpret_steal<py::object>(fn.release()), brk.code, brk.detail, brk.file,
                        brk.line, brk.function, silent);
}

/// The output template of the return value (the spec `graph_entry` takes);
/// false when bytecode is needed to rebuild it: an input returned (rebuilt from
/// its source, so the caller gets that very object back, Parameters and tensors
/// that require grad included), a list or dict met twice (one object, built
/// once by the break function's code), a value of another kind.
struct TemplateState {
  std::set<const tr::Var*> containers;  ///< lists and dicts met so far
  std::set<int> tensors;                ///< graph values of every tensor returned
};

/// The graph values of the tensors computed by the graph in `v`.
void returnedTensors(tr::Translator& t, const tr::VarRef& v, std::set<int>& out, int depth = 0) {
  using K = tr::Var::Kind;
  if (depth > 64) return;
  if (v->is(K::Tensor) && !v->isNumpy() && !t.inputSource(v)) {
    int id = t.valueOf(v);
    if (id >= 0) out.insert(id);
  } else if (v->is(K::Tuple) || v->is(K::List) || v->is(K::Dict)) {
    for (const auto& i : v->items) returnedTensors(t, i, out, depth + 1);
  }
}

bool makeTemplate(tr::Translator& t, const tr::VarRef& v, std::vector<int>& outs, py::object& spec,
                  TemplateState& st) {
  using K = tr::Var::Kind;
  switch (v->kind) {
    case K::Tensor: {
      if (t.inputSource(v)) return false;
      // A view of an input or of another returned tensor (Note [Returned views]).
      tr::SourceRef baseSource;
      int baseVid = -1;
      if (t.viewBase(v, baseSource, baseVid) && (baseSource || st.tensors.count(baseVid))) return false;
      int id = t.valueOf(v);
      if (id < 0) return false;
      size_t k = std::find(outs.begin(), outs.end(), id) - outs.begin();
      if (k == outs.size()) outs.push_back(id);
      if (v->isNumpy()) {
        // See Note [NumPy capture]: the graph's tensor as an ndarray or NumPy scalar.
        const tr::PyTypes* T = tr::pyTypes();
        PyObject* conv = v->np == tr::Var::Np::Scalar ? T->npToScalar : T->npToArray;
        spec = py::make_tuple("call", py::reinterpret_borrow<py::object>(conv), static_cast<int>(k));
        return true;
      }
      spec = py::make_tuple("out", static_cast<int>(k));
      return true;
    }
    case K::SymScalar: {
      int id = t.scalarVid(v);
      if (id < 0) return false;
      size_t k = std::find(outs.begin(), outs.end(), id) - outs.begin();
      if (k == outs.size()) outs.push_back(id);
      spec = py::make_tuple("out", static_cast<int>(k));
      return true;
    }
    case K::Const: {
      PyObject* o = v->obj.get();
      const tr::PyTypes* T = tr::pyTypes();
      if (o == Py_None || PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyUnicode_Check(o) ||
          PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(T->dtype)) ||
          PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(T->device)) ||
          Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(T->size)) {
        spec = py::make_tuple("const", py::reinterpret_borrow<py::object>(o));
        return true;
      }
      return false;
    }
    case K::Tuple:
    case K::List: {
      if (v->source || v->obj) return false;  // obj: a tuple subclass's instance, rebuilt by bytecode
      if (v->is(K::List) && !st.containers.insert(v.get()).second) return false;
      py::list items;
      for (const auto& i : v->items) {
        py::object s;
        if (!makeTemplate(t, i, outs, s, st)) return false;
        items.append(s);
      }
      spec = py::make_tuple(v->is(K::Tuple) ? "tuple" : "list", items);
      return true;
    }
    case K::Dict: {
      if (v->source || v->obj) return false;  // obj: a ModelOutput, rebuilt by bytecode
      if (!st.containers.insert(v.get()).second) return false;
      py::list keys, items;
      for (size_t i = 0; i < v->keys.size(); ++i) {
        py::object s;
        if (!makeTemplate(t, v->items[i], outs, s, st)) return false;
        keys.append(py::reinterpret_borrow<py::object>(v->keys[i].get()));
        items.append(s);
      }
      spec = py::make_tuple("dict", keys, items);
      return true;
    }
    default:
      return false;
  }
}

py::object translate(py::handle func, py::tuple args, py::handle host, cap::GuardTree& tree,
                     const std::string& device, bool symbolicScalars, py::dict breakAt) {
  if (!PyFunction_Check(func.ptr())) throw py::type_error("translate: expected a function");
  PyHost h(host);
  tr::Options opts;
  opts.device = device;
  opts.symbolicScalars = symbolicScalars;
  for (auto item : breakAt) {
    py::tuple b = item.second.cast<py::tuple>();
    tr::Failure f;
    f.code = b[0].cast<std::string>();
    f.detail = b[1].cast<std::string>();
    f.file = b[2].cast<std::string>();
    f.line = b[3].cast<int>();
    f.function = b[4].cast<std::string>();
    opts.breakAt[item.first.cast<int>()] = f;
  }
  if (!tr::bytecodeModelled()) {
    // Note [Bytecode versions]: this version's bytecode is decoded, not yet
    // modelled by the opcode handlers: the frame runs as plain Python.
    auto* code = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(func.ptr()));
    tr::Failure f;
    f.code = gbCode(GB::UnsupportedInstruction);
    f.detail = "not captured: CPython 3." + std::to_string(tr::opcodeTableVersion()) + " bytecode not supported yet";
    f.file = PyUnicode_AsUTF8(code->co_filename);
    f.function = PyUnicode_AsUTF8(code->co_name);
    f.line = code->co_firstlineno;
    return breakResult(f);
  }
  tr::Translator t(h, tree, opts);
  try {
    tr::VarRef ret = t.run(func.ptr(), args.ptr());
    if (PyErr_Occurred()) PyErr_Clear();  // never leave an error pending
    if (!ret) {
      const tr::Failure& f = t.failure();
      if (f.replayed && t.topFrame()) {
        tr::Frame& top = *t.topFrame();
        // Note [Traced exceptions]: an exception leaving the frame ends it as in
        // eager: a split there, not a break.
        return splitResult(t, top.bc->instrs()[top.ip], func, host, f, f.code == gbCode(GB::ExceptionEscapes));
      }
      return breakResult(f);
    }
    std::vector<int> outs;
    py::object spec;
    bool writes = !t.attrWrites().empty() || !t.mutatedInputs().empty() || !t.draws().empty();
    TemplateState st;
    returnedTensors(t, ret, st.tensors);
    if (writes || !makeTemplate(t, ret, outs, spec, st)) {
      if (t.failed()) return breakResult(t.failure());
      // The return value must be rebuilt by bytecode, or attribute writes
      // replayed after the graph (Note [Replayed attribute writes]): split at
      // RETURN_VALUE.
      tr::Frame& top = *t.topFrame();
      top.stack.push_back(ret);
      tr::Failure f;
      f.code = gbCode(GB::UnsupportedType);
      f.detail = writes ? "attribute writes, container mutations or random draws replayed after the graph"
                        : "returning a value that needs bytecode to rebuild";
      f.file = PyUnicode_AsUTF8(top.code->co_filename);
      f.line = top.line;
      f.function = PyUnicode_AsUTF8(top.code->co_name);
      return splitResult(t, top.bc->instrs()[top.ip - 1], func, host, f, true);
    }
    return py::make_tuple("graph", spec, outs, t.steps);
  } catch (const std::exception& e) {
    if (PyErr_Occurred()) PyErr_Clear();
    tr::Failure f = t.failure();
    f.code = gbCode(GB::Internal);
    f.detail = std::string("internal error: ") + e.what();
    f.internal = true;
    return breakResult(f);
  }
}

}  // namespace

// Note [Resume registry sweep]: the registry of resume and loop-body code
// (CodegenImpl.h) holds strong references to the code objects it made them
// from, so that resume code is made once per split and reused. When the
// user's function is deleted, the registry is all that keeps its code object
// (and, through the code's co_extra cache, its graphs, break function and
// resume functions) alive. A sweep finds each original code object whose every
// reference is one of the registry's, and drops its entries: the code object
// dies and its cache entries are freed with it. A resume code object that is
// itself split has its own entries: it is released once its origin's entries
// are gone, so the sweep repeats until nothing more goes. xacc.jit sweeps
// after every collection of gc generation 1 or 2 (gc_callback), not only after
// full ones: full collections are rare, and a program that makes and drops
// functions kept thousands of dead ones (their graphs, guards, executables)
// until the next, which left RSS fragmented far above what is live (10,000
// functions: +47 MB, now within 10 MB of eager; test_memory_bound). A sweep
// walks the registry (about 0.3 ms with 1,200 live split functions, under
// load): generation 1 runs once every 10 young collections.
size_t sweepResumeRegistry() {
  auto& reg = tr::codegen::registry();
  size_t freed = 0;
  for (;;) {
    std::vector<PyObject*> release;  // released after the lock: deallocation may run Python
    {
      std::lock_guard<std::mutex> lock(reg.mu);
      std::map<PyCodeObject*, Py_ssize_t> held;  // original code -> references the registry holds
      for (const auto& [rcode, o] : reg.origin) held[o.first]++;
      for (const auto& [key, f] : reg.fns) held[std::get<0>(key)]++;
      for (const auto& [key, f] : reg.bodyFns) held[std::get<0>(key)]++;
      std::set<PyCodeObject*> unused;
      for (const auto& [code, n] : held)
        if (Py_REFCNT(reinterpret_cast<PyObject*>(code)) == n) unused.insert(code);
      if (unused.empty()) break;
      freed += unused.size();
      auto keep = [&](PyCodeObject* orig) { return !unused.count(orig); };
      for (auto it = reg.origin.begin(); it != reg.origin.end();) {
        if (keep(it->second.first)) {
          ++it;
          continue;
        }
        release.push_back(reinterpret_cast<PyObject*>(it->first));
        release.push_back(reinterpret_cast<PyObject*>(it->second.first));
        it = reg.origin.erase(it);
      }
      auto sweep = [&](auto& fns, bool bodies) {
        for (auto it = fns.begin(); it != fns.end();) {
          PyCodeObject* orig = std::get<0>(it->first);
          if (keep(orig)) {
            ++it;
            continue;
          }
          if (bodies) {
            auto* body = reinterpret_cast<PyCodeObject*>(it->second);
            reg.pythonBodies.erase(body);
            if (reg.bodies.erase(body)) release.push_back(reinterpret_cast<PyObject*>(body));
          }
          release.push_back(it->second);
          release.push_back(reinterpret_cast<PyObject*>(orig));
          it = fns.erase(it);
        }
      };
      sweep(reg.fns, false);
      sweep(reg.bodyFns, true);
    }
    for (PyObject* o : release) Py_DECREF(o);
  }
  return freed;
}

void bindTranslate(py::module_& c) {
  xacc::python::bindNativeRecord(c);
  c.def(
      "graph_breaks",
      [] {
        py::list rows;
        for (const cap::GraphBreakRow& r : cap::kGraphBreaks) rows.append(py::make_tuple(r.code, r.name, r.reason, r.hint));
        return rows;
      },
      "The graph-break table (xacc/capture/GraphBreaks.def): [(code, name, reason, hint)] in row order.");
  c.def("sweep_resumes", &sweepResumeRegistry,
        "Frees the resume and loop-body functions of code objects nothing else holds; returns "
        "how many code objects were released (Note [Resume registry sweep]).");
  // A builtin, not a Python function: no bytecode runs, so a SIGINT noted while
  // a capture allocates (and triggers this collection) is never raised inside
  // it, where Python would report it as ignored (Note [Noted interrupts stop
  // every stage] in convert.py).
  c.def(
      "gc_callback",
      [](py::handle phase, py::handle info) {
        if (!PyUnicode_Check(phase.ptr()) || PyUnicode_CompareWithASCIIString(phase.ptr(), "stop") != 0) return;
        PyObject* gen = PyDict_Check(info.ptr()) ? PyDict_GetItemString(info.ptr(), "generation") : nullptr;
        if (gen && PyLong_Check(gen) && PyLong_AsLong(gen) >= 1) sweepResumeRegistry();
      },
      "gc.callbacks entry: sweeps the resume registry after each collection of generation 1 or 2.");
  c.def("is_resume", [](py::handle code) {
    return PyCode_Check(code.ptr()) && tr::resumeOrigin(reinterpret_cast<PyCodeObject*>(code.ptr()), nullptr);
  });
  c.def("is_loop_body", [](py::handle code) {
    return PyCode_Check(code.ptr()) && tr::isLoopBody(reinterpret_cast<PyCodeObject*>(code.ptr()));
  });
  c.def("loop_body_runs_as_python", [](py::handle code) {
    return PyCode_Check(code.ptr()) && tr::loopBodyRunsAsPython(reinterpret_cast<PyCodeObject*>(code.ptr()));
  });
  c.def("resume_info", [](py::handle code) -> py::object {
    // (original code, prologue bytes) of a resume code object, else None.
    if (!PyCode_Check(code.ptr())) return py::none();
    int prologue = 0;
    PyCodeObject* orig = tr::resumeOrigin(reinterpret_cast<PyCodeObject*>(code.ptr()), &prologue);
    if (!orig) return py::none();
    return py::make_tuple(py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(orig)), prologue);
  });
  c.def("resume_line", [](py::handle code) {
    // The user's line a resume code object continues at (0: unknown or not one).
    return PyCode_Check(code.ptr()) ? tr::resumeLine(reinterpret_cast<PyCodeObject*>(code.ptr())) : 0;
  });
  c.def("register_resume", [](py::handle code, py::handle orig, int prologue) {
    if (!PyCode_Check(code.ptr()) || !PyCode_Check(orig.ptr())) throw py::type_error("expected code objects");
    tr::registerResume(reinterpret_cast<PyCodeObject*>(code.ptr()), reinterpret_cast<PyCodeObject*>(orig.ptr()),
                       prologue);
  });
  c.def("translate", &translate, py::arg("func"), py::arg("args"), py::arg("host"), py::arg("tree"),
        py::arg("device") = "cpu", py::arg("symbolic_scalars") = true, py::arg("break_at") = py::dict(),
        "Runs the C++ bytecode translator on func(*args); see translate_bindings.cpp.");
}
