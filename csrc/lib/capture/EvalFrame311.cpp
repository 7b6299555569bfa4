// CPython 3.11's frame internals for the eval-frame hook (EvalFrameImpl.inc):
// the only place, with EvalFrame3XX.cpp of the other versions, that includes
// CPython internals. CMake compiles the file of the Python it builds against.
//
// Note [Frame access]: each supported version has one EvalFrame3XX.cpp that
// defines namespace pyframe (how the hook reaches a frame's code, function,
// local slots, globals and builtins, the thread's trace state, co_extra and the
// PEP 523 API of that version) behind a version tripwire, then includes the
// version-neutral hook. A version difference is a line here, never an #if in
// the hook.
#define Py_BUILD_CORE
#include <Python.h>
#include <internal/pycore_frame.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "EvalFrame311.cpp describes CPython 3.11 internals; CMake picks EvalFrame3XX.cpp by version"
#endif

namespace xacc::capture::pyframe {

inline PyCodeObject* code(_PyInterpreterFrame* f) { return f->f_code; }
inline PyFunctionObject* function(_PyInterpreterFrame* f) { return f->f_func; }
inline PyObject** localsplus(_PyInterpreterFrame* f) { return f->localsplus; }
inline PyObject* globals(_PyInterpreterFrame* f) { return f->f_globals; }
inline PyObject* builtins(_PyInterpreterFrame* f) { return f->f_builtins; }
inline _PyInterpreterFrame* running(PyThreadState* ts) { return ts->cframe->current_frame; }
inline bool tracing(PyThreadState* ts) { return ts->c_tracefunc || ts->c_profilefunc; }

inline Py_ssize_t requestCodeExtraIndex(freefunc f) { return _PyEval_RequestCodeExtraIndex(f); }
inline int getCodeExtra(PyCodeObject* c, Py_ssize_t i, void** p) {
  return _PyCode_GetExtra(reinterpret_cast<PyObject*>(c), i, p);
}
inline int setCodeExtra(PyCodeObject* c, Py_ssize_t i, void* p) {
  return _PyCode_SetExtra(reinterpret_cast<PyObject*>(c), i, p);
}
inline _PyFrameEvalFunction getEvalFrameFunc(PyInterpreterState* i) { return _PyInterpreterState_GetEvalFrameFunc(i); }
inline void setEvalFrameFunc(PyInterpreterState* i, _PyFrameEvalFunction f) {
  _PyInterpreterState_SetEvalFrameFunc(i, f);
}
/// 3.11: _PyEval_Vector clears and pops the frame after the hook returns,
/// whether or not it was evaluated.
inline void releaseUnevaluated(PyThreadState*, _PyInterpreterFrame*) {}

}  // namespace xacc::capture::pyframe

#include "EvalFrameImpl.inc"
