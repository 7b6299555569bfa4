// Minimal MLIR registration for the backend: the dialects kernels use, their
// bufferization/deallocation/to-LLVM interface models, and the passes the
// pipeline names. Kept in its own translation unit because the headers it
// needs (conversion passes) are the most expensive ones to compile.
#pragma once

namespace mlir {
class DialectRegistry;
}

namespace xacc::backend::mlir {

/// Adds the kernel dialects and their external interface models to `r`.
void registerKernelDialects(::mlir::DialectRegistry& r);
/// Registers the passes the pipelines name (idempotent, thread-safe).
void registerKernelPasses();

}  // namespace xacc::backend::mlir
