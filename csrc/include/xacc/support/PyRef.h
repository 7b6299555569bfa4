// An owned reference to a Python object, for the C++ that talks to CPython
// (the capture translator, the python executor). Header-only; include it only
// from code that already includes <Python.h> and holds the GIL when a PyRef is
// copied or destroyed.
#pragma once

#include <Python.h>

#include <utility>

namespace xacc::support {

/// A strong reference (null allowed): copying adds a reference, destruction
/// drops one.
class PyRef {
public:
  PyRef() = default;
  /// Takes ownership of a new reference.
  static PyRef steal(PyObject* o) { return PyRef(o); }
  /// Adds a reference to a borrowed one.
  static PyRef borrow(PyObject* o) {
    Py_XINCREF(o);
    return PyRef(o);
  }
  PyRef(const PyRef& o) : p_(o.p_) { Py_XINCREF(p_); }
  PyRef(PyRef&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  PyRef& operator=(PyRef o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~PyRef() { Py_XDECREF(p_); }
  PyObject* get() const { return p_; }
  /// Gives up ownership without dropping the reference.
  PyObject* release() { return std::exchange(p_, nullptr); }
  explicit operator bool() const { return p_ != nullptr; }

private:
  explicit PyRef(PyObject* o) : p_(o) {}
  PyObject* p_ = nullptr;
};

}  // namespace xacc::support
