// CPython 3.13's frame internals for the eval-frame hook (EvalFrameImpl.inc);
// see Note [Frame access] in EvalFrame311.cpp. What differs from 3.12
// (Include/internal/pycore_frame.h of 3.13): the frame names its code object
// f_executable (a PyObject*: a code object for every frame that reaches the
// hook, which only Python functions' frames do), the thread holds the running
// frame itself (current_frame; 3.12's _PyCFrame is gone), and the function
// that clears and pops a frame, _PyEval_FrameClearAndPop, is exported
// (PyAPI_FUNC in internal/pycore_ceval.h), so a frame the hook answers without
// evaluating is released by the interpreter's own code, frame object included.
#define Py_BUILD_CORE
#include <Python.h>
#include <internal/pycore_ceval.h>
#include <internal/pycore_frame.h>

#if PY_VERSION_HEX < 0x030D0000 || PY_VERSION_HEX >= 0x030E0000
#error "EvalFrame313.cpp describes CPython 3.13 internals; CMake picks EvalFrame3XX.cpp by version"
#endif

namespace xacc::capture::pyframe {

inline PyCodeObject* code(_PyInterpreterFrame* f) { return reinterpret_cast<PyCodeObject*>(f->f_executable); }
inline PyFunctionObject* function(_PyInterpreterFrame* f) {
  return f->f_funcobj && PyFunction_Check(f->f_funcobj) ? reinterpret_cast<PyFunctionObject*>(f->f_funcobj)
                                                         : nullptr;
}
inline PyObject** localsplus(_PyInterpreterFrame* f) { return f->localsplus; }
inline PyObject* globals(_PyInterpreterFrame* f) { return f->f_globals; }
inline PyObject* builtins(_PyInterpreterFrame* f) { return f->f_builtins; }
inline _PyInterpreterFrame* running(PyThreadState* ts) { return ts->current_frame; }
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
/// 3.13: as on 3.12 the evaluator clears and pops the frame it ran; one the
/// hook answered otherwise is cleared and popped by CPython's own function.
inline void releaseUnevaluated(PyThreadState* ts, _PyInterpreterFrame* f) { _PyEval_FrameClearAndPop(ts, f); }

}  // namespace xacc::capture::pyframe

#include "EvalFrameImpl.inc"
