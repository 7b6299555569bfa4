// A co_extra slot of code objects, through the API of the CPython version
// xacc is built against (Note [Frame access]: 3.11's _PyCode_GetExtra family,
// 3.12's and 3.13's PyUnstable_Code_GetExtra family). Defined in
// EvalFrameImpl.inc from that version's EvalFrame3XX.cpp, so code outside
// those files names no version's spelling (tests/python/test_frame_access.py).
// Same contracts as CPython's functions: -1 with an exception set on failure.
#pragma once

#include <Python.h>

namespace xacc::capture {

Py_ssize_t requestCodeExtraIndex(freefunc free);
int getCodeExtra(PyCodeObject* code, Py_ssize_t index, void** extra);
int setCodeExtra(PyCodeObject* code, Py_ssize_t index, void* extra);

}  // namespace xacc::capture
