// The PEP 523 eval-frame hook for CPython 3.11, and the per-code cache kept in
// the code object's co_extra slot. This is the only file in xacc that includes
// CPython internals; porting to another minor version means a new file of this
// kind (the tripwire below stops a build against any other version).
//
// A hooked call proceeds as: thread state Off, a throwflag (generator unwind),
// a generator/coroutine code object or a code marked skip -> the default
// evaluator; otherwise the cache entries of the code object are checked in MRU
// order against the frame's argument slots, globals and closure; a hit runs
// the entry (a graph, a generated function, or the default evaluator); a miss
// in Compile state calls the compile callback with the thread switched Off
// (see Note [Capture state]) and retries the cache once. Frames run while a
// trace or profile function is set go to the default evaluator. Frames whose entry
// replaces the bytecode are never evaluated: the caller (_PyEval_Vector)
// clears and pops them, exactly as after a normal return.
//
// Note [Resume trampoline]: a break function does not call its resume
// function; it returns `(resume, args...)` (the resume function first, a
// function of a code the translator registered as a resume code), and the hook
// that ran it calls resume(*args) itself, in a loop. When that call reaches
// the hook and its entry is again a break function, the request it returns is
// passed up to the loop that is already running instead of starting another
// one. So a frame with N breaks runs at a constant Python and C stack depth,
// and a traceback shows one frame for the user's function, as in eager.
#define Py_BUILD_CORE
#include <Python.h>
#include <internal/pycore_frame.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "xacc's frame hook is written for CPython 3.11 internals; add EvalFrame3XX.cpp for this version"
#endif

#include <mutex>
#include <unordered_set>

#include "xacc/capture/EvalFrame.h"

namespace xacc::capture {

namespace translate {
PyCodeObject* resumeOrigin(PyCodeObject* code, int* prologue);  // translate/Codegen.h
int loopDriverCall(PyCodeObject* code);                          // translate/Codegen.h
}

namespace {

struct CodeExtra {
  PyCodeObject* code = nullptr;  ///< borrowed: the extra dies with the code object
  std::vector<std::shared_ptr<CacheEntry>> entries;  ///< MRU first
  int action = 0;    ///< 0 normal, 1 skip, 2 run-only
  int compiles = 0;
};

Py_ssize_t gExtraIndex = -1;
_PyFrameEvalFunction gPrevEval = nullptr;
bool gInstalled = false;
PyObject* gCallback = nullptr;
int gRecompileLimit = 8;
thread_local CaptureState tState = CaptureState::Off;
/// Set by a trampoline just before it calls a resume function; read and
/// cleared by the first hook call that follows (Note [Resume trampoline]).
thread_local bool tFromTrampoline = false;
std::unordered_set<PyCodeObject*> gCodes;  ///< code objects that carry an extra (GIL-protected)

struct Counters {
  std::atomic<uint64_t> frames{0}, hits{0}, misses{0}, compiles{0}, fallbacks{0};
} gStats;

// CPython calls every registered free function for every code object that has
// any extra at all (code_dealloc does not skip empty slots), so a code object
// that only Dynamo (or another co_extra user) annotated reaches here with null.
void freeExtra(void* p) {
  if (!p) return;
  auto* e = static_cast<CodeExtra*>(p);
  gCodes.erase(e->code);
  delete e;
}

void ensureIndex() {
  if (gExtraIndex < 0) gExtraIndex = _PyEval_RequestCodeExtraIndex(freeExtra);
}

CodeExtra* getExtra(PyCodeObject* code) {
  if (gExtraIndex < 0) return nullptr;
  void* p = nullptr;
  if (_PyCode_GetExtra(reinterpret_cast<PyObject*>(code), gExtraIndex, &p) < 0) {
    PyErr_Clear();
    return nullptr;
  }
  return static_cast<CodeExtra*>(p);
}

CodeExtra* ensureExtra(PyCodeObject* code) {
  ensureIndex();
  CodeExtra* e = getExtra(code);
  if (e) return e;
  e = new CodeExtra();
  e->code = code;
  if (_PyCode_SetExtra(reinterpret_cast<PyObject*>(code), gExtraIndex, e) < 0) {
    PyErr_Clear();
    delete e;
    return nullptr;
  }
  gCodes.insert(code);
  return e;
}

PyObject* defaultEval(PyThreadState* ts, _PyInterpreterFrame* frame, int throwflag) {
  if (gPrevEval) return gPrevEval(ts, frame, throwflag);
  return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}

size_t argSlots(PyCodeObject* code) {
  size_t n = static_cast<size_t>(code->co_argcount + code->co_kwonlyargcount);
  if (code->co_flags & CO_VARARGS) ++n;
  if (code->co_flags & CO_VARKEYWORDS) ++n;
  return n;
}

/// Small-buffer array of resolved sources for one check.
struct Resolved {
  PyObject* small[32];
  std::vector<PyObject*> big;
  PyObject** data = small;
  explicit Resolved(size_t n) {
    if (n > 32) {
      big.resize(n);
      data = big.data();
    }
  }
};

/// Whether `r`, returned by a break function, asks for a resume function to
/// be called (Note [Resume trampoline]).
bool isResumeRequest(PyObject* r) {
  if (!PyTuple_CheckExact(r) || PyTuple_GET_SIZE(r) < 1) return false;
  PyObject* f = PyTuple_GET_ITEM(r, 0);
  return PyFunction_Check(f) &&
         translate::resumeOrigin(reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(f)), nullptr) != nullptr;
}

/// Runs the resume requests in `r` until one returns the frame's result; with
/// `passUp`, hands a request to the trampoline that called this frame.
PyObject* trampoline(PyObject* r, bool passUp) {
  while (r && isResumeRequest(r)) {
    if (passUp) return r;
    PyObject* const* items = &PyTuple_GET_ITEM(r, 0);
    tFromTrampoline = true;
    PyObject* next = PyObject_Vectorcall(items[0], items + 1, static_cast<size_t>(PyTuple_GET_SIZE(r) - 1), nullptr);
    tFromTrampoline = false;
    Py_DECREF(r);
    r = next;
  }
  return r;
}

// Note [Loop driver frames]: a graph break inside a loop runs the loop in the
// break function, which calls a function made of the loop body once per
// iteration (Note [Loop bodies] in translate/CodegenLoops.cpp). Both frames
// carry the user's function's name, so an exception raised in the body would
// show the user's function twice in its traceback (the driver's entry at the
// loop header, then the body's at the right line) where eager shows it once.
// When the break function fails and the traceback's first entry is its own
// frame stopped at its call of the body, that entry is dropped: what remains
// starts at the body's frame, the user's function at the line that raised.
// An exception from the loop itself (its iterator) keeps the driver's entry,
// which is the loop header's line, as in eager.
void dropLoopDriverEntry(PyObject* fn) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (tb && PyTraceBack_Check(tb)) {
    auto* head = reinterpret_cast<PyTracebackObject*>(tb);
    auto* code = reinterpret_cast<PyCodeObject*>(PyFunction_GET_CODE(fn));
    PyCodeObject* at = head->tb_frame ? PyFrame_GetCode(head->tb_frame) : nullptr;
    const bool driver = at == code && head->tb_next && head->tb_lasti == translate::loopDriverCall(code);
    Py_XDECREF(at);
    if (driver) {
      PyObject* next = reinterpret_cast<PyObject*>(head->tb_next);
      Py_INCREF(next);
      Py_DECREF(tb);
      tb = next;
      if (value && PyExceptionInstance_Check(value)) PyException_SetTraceback(value, tb);
    }
  }
  PyErr_Restore(type, value, tb);
}

/// Runs entry `e` for `frame` after its guards passed.
PyObject* runEntry(const CacheEntry& e, PyThreadState* ts, _PyInterpreterFrame* frame,
                   PyObject** resolved, int throwflag, size_t nargs, bool passUp) {
  e.hits.fetch_add(1, std::memory_order_relaxed);
  switch (e.kind) {
    case CacheEntry::Kind::Graph: {
      PyObject* r = e.runGraph(resolved);
      if (!r) raiseAsEager();  // See Note [ATen error translation]
      return r;
    }
    case CacheEntry::Kind::Code: {
      PyObject* r = PyObject_Vectorcall(e.fn, frame->localsplus, nargs, nullptr);
      if (!r) dropLoopDriverEntry(e.fn);
      return trampoline(r, passUp);
    }
    case CacheEntry::Kind::Default: return defaultEval(ts, frame, throwflag);
  }
  return nullptr;
}

/// Looks for an entry whose guards pass; runs it and returns true on a hit.
/// When `failures` is given, collects the first failing guard of each entry.
bool lookupAndRun(CodeExtra* extra, PyThreadState* ts, _PyInterpreterFrame* frame, int throwflag,
                  PyObject*& result, std::vector<std::string>* failures, bool passUp) {
  PyCodeObject* code = frame->f_code;
  size_t nargs = argSlots(code);
  PyObject* closure = frame->f_func ? frame->f_func->func_closure : nullptr;
  for (size_t i = 0; i < extra->entries.size(); ++i) {
    std::shared_ptr<CacheEntry> e = extra->entries[i];
    FrameView v = e->view(frame->localsplus, nargs, frame->f_globals, frame->f_builtins, closure);
    Resolved r(e->guards->size());
    std::string why;
    bool ok = e->guards->check(v, r.data, failures ? &why : nullptr);
    if (!ok) {
      e->guards->release(r.data);
      if (failures) failures->push_back(e->label + ": " + why);
      continue;
    }
    // MRU: move the hit to the front (the list may have changed while guards ran Python).
    if (i > 0 && i < extra->entries.size() && extra->entries[i] == e) {
      extra->entries.erase(extra->entries.begin() + i);
      extra->entries.insert(extra->entries.begin(), e);
    }
    result = runEntry(*e, ts, frame, r.data, throwflag, nargs, passUp);
    e->guards->release(r.data);
    return true;
  }
  return false;
}

PyObject* xaccEvalFrame(PyThreadState* ts, _PyInterpreterFrame* frame, int throwflag) {
  const bool passUp = tFromTrampoline;
  tFromTrampoline = false;
  CaptureState state = tState;
  if (state == CaptureState::Off || throwflag) return defaultEval(ts, frame, throwflag);
  // While a trace or profile function is set (sys.settrace, sys.setprofile:
  // debuggers, coverage, profilers), every frame runs as plain Python so that
  // it sees the call, line and return events eager Python gives, as
  // torch.compile does. Nothing is compiled meanwhile.
  if (ts->c_tracefunc || ts->c_profilefunc) return defaultEval(ts, frame, throwflag);
  PyCodeObject* code = frame->f_code;
  if (code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
    return defaultEval(ts, frame, throwflag);
  CodeExtra* extra = getExtra(code);
  if (extra && extra->action == 1) return defaultEval(ts, frame, throwflag);
  gStats.frames.fetch_add(1, std::memory_order_relaxed);

  PyObject* result = nullptr;
  if (extra && !extra->entries.empty() &&
      lookupAndRun(extra, ts, frame, throwflag, result, nullptr, passUp)) {
    gStats.hits.fetch_add(1, std::memory_order_relaxed);
    return result;
  }
  gStats.misses.fetch_add(1, std::memory_order_relaxed);
  if (state != CaptureState::Compile || !gCallback || !frame->f_func ||
      (extra && extra->action == 2))
    return defaultEval(ts, frame, throwflag);
  extra = ensureExtra(code);
  if (!extra) return defaultEval(ts, frame, throwflag);
  if (extra->compiles >= gRecompileLimit) {
    extra->action = 2;
    return defaultEval(ts, frame, throwflag);
  }

  // Compile: collect why each existing entry failed, then call back with the
  // thread Off so nothing the translator runs is hooked.
  std::vector<std::string> failures;
  if (!extra->entries.empty()) {
    // Guards already failed once; this pass only gathers the reasons.
    for (auto& e : extra->entries) {
      size_t nargs = argSlots(code);
      PyObject* closure = frame->f_func->func_closure;
      FrameView v = e->view(frame->localsplus, nargs, frame->f_globals, frame->f_builtins, closure);
      Resolved r(e->guards->size());
      std::string why;
      if (!e->guards->check(v, r.data, &why)) failures.push_back(e->label + ": " + why);
      e->guards->release(r.data);
    }
  }
  size_t nargs = argSlots(code);
  PyObject* args = PyTuple_New(nargs);
  if (!args) {
    PyErr_Clear();
    return defaultEval(ts, frame, throwflag);
  }
  for (size_t i = 0; i < nargs; ++i) {
    PyObject* a = frame->localsplus[i] ? frame->localsplus[i] : Py_None;
    Py_INCREF(a);
    PyTuple_SET_ITEM(args, i, a);
  }
  PyObject* why = PyList_New(0);
  for (const std::string& f : failures) {
    PyObject* s = PyUnicode_FromString(f.c_str());
    if (s) {
      PyList_Append(why, s);
      Py_DECREF(s);
    }
  }
  extra->compiles++;
  gStats.compiles.fetch_add(1, std::memory_order_relaxed);
  // Keep the pending exception state intact across the callback.
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  tState = CaptureState::Off;
  PyObject* r = PyObject_CallFunctionObjArgs(gCallback, reinterpret_cast<PyObject*>(frame->f_func),
                                             args, why, nullptr);
  tState = state;
  Py_DECREF(args);
  Py_DECREF(why);
  if (r && PyExceptionInstance_Check(r)) {
    // The callback asks for this frame to raise instead of running (fullgraph).
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(r)), r);
    Py_DECREF(r);
    return nullptr;
  }
  Py_XDECREF(r);
  // The callback turns every Exception into a fallback to Python. What else
  // reaches here is the user's: KeyboardInterrupt (a SIGINT while capturing or
  // compiling), SystemExit. It propagates as it would have from eager code, and
  // a signal that arrived while C++ compiled is handled now, before the call
  // can return normally.
  if ((!r && !PyErr_ExceptionMatches(PyExc_Exception)) || (r && PyErr_CheckSignals() < 0)) {
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(etb);
    return nullptr;
  }
  if (!r) PyErr_Clear();
  PyErr_Restore(et, ev, etb);

  extra = getExtra(code);
  if (extra && extra->action != 1 && !extra->entries.empty() &&
      lookupAndRun(extra, ts, frame, throwflag, result, nullptr, passUp))
    return result;
  gStats.fallbacks.fetch_add(1, std::memory_order_relaxed);
  return defaultEval(ts, frame, throwflag);
}

}  // namespace

void installHook() {
  ensureIndex();
  if (gInstalled) return;
  PyInterpreterState* interp = PyThreadState_GET()->interp;
  _PyFrameEvalFunction prev = _PyInterpreterState_GetEvalFrameFunc(interp);
  gPrevEval = prev == _PyEval_EvalFrameDefault ? nullptr : prev;
  _PyInterpreterState_SetEvalFrameFunc(interp, xaccEvalFrame);
  gInstalled = true;
}

void uninstallHook() {
  if (!gInstalled) return;
  PyInterpreterState* interp = PyThreadState_GET()->interp;
  // Another hook installed over ours (Dynamo chains to us as its previous
  // evaluator) stays; ours then falls through to the default evaluator.
  if (_PyInterpreterState_GetEvalFrameFunc(interp) == xaccEvalFrame)
    _PyInterpreterState_SetEvalFrameFunc(interp, gPrevEval ? gPrevEval : _PyEval_EvalFrameDefault);
  gInstalled = false;
}

bool hookInstalled() { return gInstalled; }

CaptureState setState(CaptureState s) {
  CaptureState old = tState;
  tState = s;
  return old;
}
CaptureState state() { return tState; }

void setCallback(PyObject* cb) {
  Py_XINCREF(cb);
  Py_XSETREF(gCallback, cb);
}

void addEntry(PyCodeObject* code, std::shared_ptr<CacheEntry> entry) {
  CodeExtra* e = ensureExtra(code);
  if (e) e->entries.insert(e->entries.begin(), std::move(entry));
}

void markSkip(PyCodeObject* code) {
  if (CodeExtra* e = ensureExtra(code)) e->action = 1;
}

void markRunOnly(PyCodeObject* code) {
  if (CodeExtra* e = ensureExtra(code)) e->action = 2;
}

void clearCode(PyCodeObject* code) {
  if (CodeExtra* e = getExtra(code)) {
    // Entries may own objects whose release runs Python; move them out first.
    std::vector<std::shared_ptr<CacheEntry>> old;
    old.swap(e->entries);
    e->action = 0;
    e->compiles = 0;
  }
}

void clearAll() {
  // Releasing entries can free other code objects (resume functions); hold
  // every code alive until the sweep is done.
  std::vector<PyCodeObject*> codes(gCodes.begin(), gCodes.end());
  for (PyCodeObject* c : codes) Py_INCREF(c);
  for (PyCodeObject* c : codes) clearCode(c);
  for (PyCodeObject* c : codes) Py_DECREF(c);
}

std::vector<std::shared_ptr<CacheEntry>> entries(PyCodeObject* code) {
  CodeExtra* e = getExtra(code);
  return e ? e->entries : std::vector<std::shared_ptr<CacheEntry>>{};
}

int codeAction(PyCodeObject* code) {
  CodeExtra* e = getExtra(code);
  return e ? e->action : 0;
}

void setRecompileLimit(int n) { gRecompileLimit = n; }
int recompileLimit() { return gRecompileLimit; }

HookStats hookStats() {
  HookStats s;
  s.frames = gStats.frames;
  s.hits = gStats.hits;
  s.misses = gStats.misses;
  s.compiles = gStats.compiles;
  s.fallbacks = gStats.fallbacks;
  return s;
}

void resetHookStats() {
  gStats.frames = 0;
  gStats.hits = 0;
  gStats.misses = 0;
  gStats.compiles = 0;
  gStats.fallbacks = 0;
}

}  // namespace xacc::capture
