// CPython 3.12's frame internals for the eval-frame hook (EvalFrameImpl.inc);
// see Note [Frame access] in EvalFrame311.cpp. What differs from 3.11
// (Include/internal/pycore_frame.h of 3.12): the frame holds its function as
// f_funcobj (a PyObject*), co_extra and the extra index have PyUnstable_*
// names, and a frame is cleared and popped by the evaluator that runs it, not
// by _PyEval_Vector: a frame the hook answers without evaluating must be
// released here. 3.12.1's libpython keeps the functions that do it
// (_PyEval_FrameClearAndPop, _PyFrame_ClearExceptCode, _PyThreadState_PopFrame)
// local, so releaseUnevaluated does what they do for a frame that never ran:
// drop the references it holds (its local slots up to stacktop, f_locals, the
// function, the code) and give its space back to the thread's data stack (the
// whole chunk when the frame is the chunk's first, freed through the public
// arena allocator the chunk came from).
#define Py_BUILD_CORE
#include <Python.h>
#include <internal/pycore_frame.h>

#if PY_VERSION_HEX < 0x030C0000 || PY_VERSION_HEX >= 0x030D0000
#error "EvalFrame312.cpp describes CPython 3.12 internals; CMake picks EvalFrame3XX.cpp by version"
#endif

namespace xacc::capture::pyframe {

inline PyCodeObject* code(_PyInterpreterFrame* f) { return f->f_code; }
inline PyFunctionObject* function(_PyInterpreterFrame* f) {
  return f->f_funcobj && PyFunction_Check(f->f_funcobj) ? reinterpret_cast<PyFunctionObject*>(f->f_funcobj)
                                                         : nullptr;
}
inline PyObject** localsplus(_PyInterpreterFrame* f) { return f->localsplus; }
inline PyObject* globals(_PyInterpreterFrame* f) { return f->f_globals; }
inline PyObject* builtins(_PyInterpreterFrame* f) { return f->f_builtins; }
inline _PyInterpreterFrame* running(PyThreadState* ts) { return ts->cframe->current_frame; }
inline bool tracing(PyThreadState* ts) { return ts->c_tracefunc || ts->c_profilefunc; }

inline Py_ssize_t requestCodeExtraIndex(freefunc f) { return PyUnstable_Eval_RequestCodeExtraIndex(f); }
inline int getCodeExtra(PyCodeObject* c, Py_ssize_t i, void** p) {
  return PyUnstable_Code_GetExtra(reinterpret_cast<PyObject*>(c), i, p);
}
inline int setCodeExtra(PyCodeObject* c, Py_ssize_t i, void* p) {
  return PyUnstable_Code_SetExtra(reinterpret_cast<PyObject*>(c), i, p);
}
inline _PyFrameEvalFunction getEvalFrameFunc(PyInterpreterState* i) { return _PyInterpreterState_GetEvalFrameFunc(i); }
inline void setEvalFrameFunc(PyInterpreterState* i, _PyFrameEvalFunction f) {
  _PyInterpreterState_SetEvalFrameFunc(i, f);
}
/// 3.12: the evaluator clears and pops the frame it ran; one the hook answered
/// otherwise (a graph, a break function, a raise) is cleared and popped here,
/// as its return would have. Such a frame was never linked into the frame
/// chain, so nothing can have made a frame object for it; if one exists anyway
/// it is left alone (a leak, never a dangling frame).
inline void releaseUnevaluated(PyThreadState* ts, _PyInterpreterFrame* f) {
  if (f->frame_obj) return;
  for (int i = 0; i < f->stacktop; ++i) Py_XDECREF(f->localsplus[i]);
  Py_XDECREF(f->f_locals);
  Py_DECREF(f->f_funcobj);
  Py_DECREF(reinterpret_cast<PyObject*>(f->f_code));
  PyObject** base = reinterpret_cast<PyObject**>(f);
  _PyStackChunk* chunk = ts->datastack_chunk;
  if (base == &chunk->data[0]) {
    _PyStackChunk* prev = chunk->previous;  // the root chunk is never popped
    ts->datastack_chunk = prev;
    ts->datastack_top = &prev->data[prev->top];
    ts->datastack_limit = reinterpret_cast<PyObject**>(reinterpret_cast<char*>(prev) + prev->size);
    PyObjectArenaAllocator arena;
    PyObject_GetArenaAllocator(&arena);
    arena.free(arena.ctx, chunk, chunk->size);
  } else {
    ts->datastack_top = base;
  }
}

}  // namespace xacc::capture::pyframe

#include "EvalFrameImpl.inc"
