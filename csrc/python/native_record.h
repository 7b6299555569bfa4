// Torch calls the translator records without calling the Python host: see
// Note [Records made in C++] in native_record.cpp.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <memory>

namespace xacc::python {

/// The C++ recording path of one translation (one per PyHost). It reads the
/// recorder's objects of `host` (xacc/_src/capture/host.py's Host) once, and
/// the state a host call may change again after `invalidate`.
class NativeRecorder {
public:
  explicit NativeRecorder(PyObject* host);
  ~NativeRecorder();
  NativeRecorder(const NativeRecorder&) = delete;
  NativeRecorder& operator=(const NativeRecorder&) = delete;

  /// The result of `fn(*args, **kwargs)` recorded in C++ (a new reference: the
  /// meta tensor, bound to its graph value in the recorder's table), or null,
  /// with no Python error set, when the call is not one this path reproduces
  /// exactly: the caller then calls `Host.record` as before. `file`/`line`:
  /// the location of the nodes.
  PyObject* call(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* file, int line);
  /// The value id `Recorder.vids` binds `meta` to; -1 when none.
  int bound(PyObject* meta);
  /// A host call ran that may have changed the recorder's regions or replaced
  /// its table (set_grad, set_inference, restore_binds, ...).
  void invalidate() { fresh_ = false; }

  struct State;

private:
  void refresh();
  bool ready();
  PyObject* record(PyObject* fn, PyObject* args, PyObject* kwargs, PyObject* file, int line);

  PyObject* host_;
  std::unique_ptr<State> s_;
  bool fresh_ = false;
};

/// xacc._C.capture.native_record(enabled=None): the switch of the C++ path
/// (on by default), for tests comparing it with the Python path.
void bindNativeRecord(pybind11::module_& c);

}  // namespace xacc::python
