// The MLIR half of the backend behind an MLIR-free interface: kernel text ->
// parsed module -> bufferization and lowering pipeline -> LLVM -> native code
// for the host (mlir::ExecutionEngine with a host TargetMachine), and the
// on-disk object cache that lets a later process skip all of that.
#pragma once

#include <memory>
#include <string>

#include "xacc/backend/mlir/XpuBackend.h"

namespace xacc::backend::mlir {

struct JitOptions {
  int optLevel = 3;
  bool fastMath = true;
  std::string cacheDir;  ///< empty: no disk cache
  /// Scalar code (ScalarLowering.h): no tensors, so no bufferization or linalg
  /// passes (the deallocation pipeline rejects the stack check's llvm ops).
  bool scalarOnly = false;
};

/// A compiled kernel: `call` takes the packed arguments of the function (one
/// pointer per LLVM-level argument: for each memref, allocated pointer,
/// aligned pointer, offset, sizes, strides; for each scalar, its value).
class CompiledKernel {
public:
  virtual ~CompiledKernel() = default;
  virtual void call(void** packedArgs) const = 0;
};

/// How a kernel was obtained.
enum class KernelSource { Compiled, DiskCache };

/// Compiles function `funcName` of the module in `mlirText`. Thread-safe.
std::shared_ptr<CompiledKernel> compileKernel(const std::string& mlirText, const std::string& funcName,
                                              const JitOptions& opts, KernelSource& source,
                                              std::string& error);

/// Runs the pipeline up to `stage` and prints the result (MLIR or LLVM IR).
bool lowerKernelText(const std::string& mlirText, EmitStage stage, const JitOptions& opts,
                     std::string& out, std::string& error);

/// The pass pipelines, as text (for docs and --help).
std::string pipelineText(bool fastMath);

}  // namespace xacc::backend::mlir
