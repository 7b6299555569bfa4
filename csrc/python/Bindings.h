// Shared pieces of the xacc._C bindings: error conversion at the boundary and
// datum <-> Python conversion. Optional components register their bindings
// through the weak hooks declared here, so the module builds with or without
// them. The functions marked XACC_PY_EXPORT are also used by the extension
// modules that link xacc._C (xacc._C_mlir; Note [Lazy backend modules]).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Graph.h"
#include "xacc/ir/Parser.h"
#include "xacc/support/Diagnostic.h"

namespace py = pybind11;

/// Exported from xacc._C (pybind11 builds it with hidden visibility) for the
/// extension modules that link it.
#define XACC_PY_EXPORT __attribute__((visibility("default")))

namespace xacc::python {

/// Raises xacc.errors.<kind> carrying the rendered diagnostics.
[[noreturn]] XACC_PY_EXPORT void raiseDiagnostics(const support::DiagnosticEngine& diag,
                                   const char* kind = "CompileError");

/// Python object -> datum (int, float, bool, str, None, list, tuple, dict as
/// struct, torch.Tensor when the ATen component is linked).
XACC_PY_EXPORT bool toDatum(py::handle obj, ir::Datum& out, std::string& error);
XACC_PY_EXPORT py::object fromDatum(const ir::Datum& d);

/// `has_<name>` and the lazily imported attributes of xacc._C (lazy_modules.cpp).
void bindLazyModules(py::module_& m);

/// xacc._C.Module: a GIR module (parsed, or a copy of a captured graph: then
/// `locs` is empty and diagnostics point at the nodes' own locations).
struct PyModule {
  std::unique_ptr<ir::Module> module;
  ir::TextLocations locs;

  /// A deep copy of the module (calls name their callees, so they resolve
  /// within the copy); no text positions.
  std::shared_ptr<PyModule> clone() const {
    auto c = std::make_shared<PyModule>();
    c->module = std::make_unique<ir::Module>();
    for (const auto& g : module->graphs()) c->module->add(g->clone());
    return c;
  }
};

}  // namespace xacc::python

// Hooks defined by optional binding files (weak: null when absent).
void bindCapture(py::module_& m) __attribute__((weak));
void bindCamel(py::module_& m) __attribute__((weak));
void bindAten(py::module_& m) __attribute__((weak));
/// Tensor conversion, provided by the ATen bindings.
bool xaccTensorToDatum(py::handle obj, xacc::ir::Datum& out) __attribute__((weak));
py::object xaccDatumToTensor(const xacc::ir::Datum& d) __attribute__((weak));
