// The backends of captured graphs, registered by the extension modules when
// they load (Note [Backend interface] in xacc/capture/Backend.h): "cpu" by
// xacc._C (backends.cpp), "xpu" by xacc._C_mlir (mlir/mlir_bindings.cpp), which
// is imported the first time an xpu device is named (Note [Lazy backend modules]).
#pragma once

#include <string>

#include "Bindings.h"

namespace xacc::python {

/// Registers the ATen executor as the "cpu" backend.
void registerAtenBackend();
/// After a backend executable failed: hands the exception of the ATen op that
/// threw, if one did, to capture (Note [ATen error translation]).
XACC_PY_EXPORT void noteAtenFailure();
/// Imports the extension module of `device`'s backend unless a backend already
/// serves it (Note [Lazy backend modules]). Needs the GIL. Raises the module's
/// ImportError when it exists but fails to load; a build without it is not an error.
void ensureBackend(const std::string& device);
/// Whether this build has the extension module serving `target` ("xpu"), loaded or not.
bool backendModuleBuilt(const std::string& target);

}  // namespace xacc::python
