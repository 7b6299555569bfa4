// The backends of captured graphs, registered by this extension module when it
// loads (Note [Backend interface] in xacc/capture/Backend.h): "cpu" here
// (backends.cpp), "xpu" in mlir_bindings.cpp when the MLIR backend is built.
#pragma once

namespace xacc::python {

/// Registers the ATen executor as the "cpu" backend.
void registerAtenBackend();
/// After a backend executable failed: hands the exception of the ATen op that
/// threw, if one did, to capture (Note [ATen error translation]).
void noteAtenFailure();

}  // namespace xacc::python
