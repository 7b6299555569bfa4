// Torch calls the translator records without calling the Python host: see
// Note [Records made in C++] in native_record.cpp.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

namespace xacc::python {

/// The result of `fn(*args, **kwargs)` recorded in C++ (a new reference: the
/// meta tensor, bound to its graph value in the recorder's table), or null,
/// with no Python error set, when the call is not one this path reproduces
/// exactly: the caller then calls `Host.record` as before. `host`: the
/// xacc/_src/capture/host.py Host; `file`/`line`: the location of the node.
PyObject* nativeRecord(PyObject* host, PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* file, int line);

/// xacc._C.capture.native_record(enabled=None): the switch of the C++ path
/// (on by default), for tests comparing it with the Python path.
void bindNativeRecord(pybind11::module_& c);

}  // namespace xacc::python
