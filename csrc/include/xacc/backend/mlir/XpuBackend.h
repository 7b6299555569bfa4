// The MLIR backend, device target `xpu` (`xpu0` is device 0; out of the box it
// generates code for the host CPU). `compileGraph` turns a GIR graph into an
// Executable: the partitioner groups the nodes the backend can lower into
// regions, each region becomes one MLIR function (linalg on tensors,
// one-shot bufferized into the caller's buffers, lowered to LLVM and JIT
// compiled for the host), and every other node runs through its registered
// `interp` rule (for `aten.*`, one boxed ATen call) inside the same
// executable. Lowering failures never fail the program: the region falls back
// to the ATen path and the reason is recorded (`Executable::stats()`, and the
// `XACC_LOG=mlir` channel).
//
// This header has no MLIR, LLVM or ATen types in it: MLIR stays inside the
// backend library (see docs/backend-xpu.md for the device interface).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Graph.h"
#include "xacc/support/Diagnostic.h"

namespace xacc::backend::mlir {

/// Knobs of one compilation. Defaults come from the environment where noted.
struct CompileOptions {
  /// Target device name; "xpu0" and "xpu" are the host code generator.
  std::string device = "xpu0";
  /// LLVM optimisation level for the JIT (0-3).
  int optLevel = 3;
  /// Replace transcendental math (exp, tanh, log, erf...) by polynomial
  /// approximations that vectorise (a few ulp of error, as in most DL compilers).
  bool fastMath = true;
  /// Split kernels over the outermost dimension across the ATen thread pool
  /// when their estimated work (bytes moved and FP operations per element)
  /// is at least that of copying `parallelThreshold` f32 elements.
  bool parallel = true;
  int64_t parallelThreshold = 1 << 16;
  /// Directory of the on-disk kernel cache; empty: `$XACC_CACHE_DIR`, and no
  /// disk cache when that is unset too.
  std::string cacheDir;
  /// Lower nothing: every node runs through the ATen path (for comparison).
  bool disableLowering = false;
  /// Profile-guided optimization (docs/pgo.md). `profile`: time every region
  /// step both as its kernel and as its ATen ops (the kernel's results are the
  /// ones kept) and every fallback op; `Executable::profileJson()` reports it.
  /// Off, runs pay nothing for it.
  bool profile = false;
  /// Keys (regionKey, "r<index>:<hash>") of regions to leave to ATen.
  std::vector<std::string> atenRegions;
};

/// What a compilation did, for tests, logs and benchmarks.
struct CompileStats {
  int regions = 0;           ///< regions lowered to MLIR kernels
  int loweredNodes = 0;      ///< GIR nodes inside those regions
  int fallbackNodes = 0;     ///< nodes executed through their interp rule
  int kernelsCompiled = 0;   ///< MLIR -> LLVM -> object compilations done
  int memoryCacheHits = 0;   ///< kernels found in the in-process cache
  int diskCacheHits = 0;     ///< kernels loaded from the disk cache (no MLIR run)
  int contiguousCopies = 0;  ///< inputs made contiguous before a kernel call
  double compileSeconds = 0; ///< wall time spent compiling kernels
  /// Run-time counters (all runs so far): region steps executed as a compiled
  /// kernel, and region steps that ran node by node through ATen instead
  /// (their input signature did not lower, or autograd needed the ATen path).
  int64_t kernelLaunches = 0;
  int64_t regionFallbackRuns = 0;
  /// Kernel launches that ran as more than one chunk across the ATen thread
  /// pool (split over dim 0: the decision is logged under XACC_LOG=mlir).
  int64_t splitRuns = 0;
  /// addmm/mm steps run as MKL's packed GEMM on a weight packed once, and
  /// weights packed (Note [Packed GEMM weights] in Executable.cpp).
  int64_t packedGemmRuns = 0;
  int64_t weightsPacked = 0;
  /// Steps whose values do not depend on the inputs, computed on the first
  /// call only, and the step runs later calls skipped (Note [Input-independent
  /// steps] in ExecutableConstants.cpp).
  int constantSteps = 0;
  int64_t constantStepsSkipped = 0;
  /// One line per node or region that fell back, with the reason (including
  /// regions whose kernel for a run-time input signature failed to build).
  std::vector<std::string> fallbackReasons;
};

/// Process-wide kernel counters over every executable (benchmarks, AOT checks).
struct KernelTotals {
  int64_t compiled = 0;    ///< MLIR -> LLVM -> object compilations
  int64_t diskHits = 0;    ///< kernels loaded from a disk cache (no MLIR run)
  int64_t memoryHits = 0;  ///< kernels found in the in-process cache
  double compileSeconds = 0;  ///< wall time of compilations and disk loads
};
KernelTotals kernelTotals();

/// Benchmarks only (benchmarks/backend/cache_verify.py): `false` skips the
/// SHA-256 check of kernel disk cache entries (their other header checks still
/// run), to time what the check costs. Never off in normal use.
void setDiskCacheHashCheck(bool on);

/// The SHA-256 (hex) that kernel disk cache entries are checked with (tests
/// compare it with other implementations).
std::string diskCacheSha256Hex(const std::string& data);

/// A compiled graph. `run` is reentrant (kernels compiled for new shapes are
/// added under a lock).
class Executable {
public:
  virtual ~Executable() = default;
  /// One datum per graph parameter in, one per graph result out. On failure
  /// reports a located runtime error into `diag` and returns false.
  virtual bool run(const std::vector<ir::Datum>& inputs, std::vector<ir::Datum>& outputs,
                   support::DiagnosticEngine& diag) = 0;
  virtual const CompileStats& stats() const = 0;
  /// Human-readable plan: the steps in order, which nodes each region holds.
  virtual std::string describe() const = 0;
  /// With CompileOptions::profile: a JSON object {"regions": [...],
  /// "fallback_ops": [...], "aten_regions": [...]} of the times measured so far
  /// (schema in docs/pgo.md); "{}" otherwise.
  virtual std::string profileJson() const { return "{}"; }
};

/// True when the backend was built with MLIR and can JIT for the host.
bool isAvailable();

/// Compiles `g` (the graph is cloned; the caller may drop it). Never returns
/// null for a well-formed graph: nodes that cannot be lowered fall back. Returns
/// null, with diagnostics, only when the graph itself cannot be executed.
std::unique_ptr<Executable> compileGraph(const ir::Graph& g, const CompileOptions& opts,
                                         support::DiagnosticEngine& diag);

/// What `emitMlir`/`emitLlvm` print.
enum class EmitStage { Kernel, Bufferized, Llvm };

/// The MLIR of every region of `g` (one `module` per region, each preceded by
/// a `// region N: ...` comment listing its GIR nodes), at `stage`:
/// `Kernel` is linalg on tensors as generated, `Bufferized` after one-shot
/// bufferization, `Llvm` the LLVM IR handed to the JIT. Nodes that do not lower
/// are listed as `// fallback: <node>: <reason>`. Never fails.
std::string emitMlir(const ir::Graph& g, EmitStage stage = EmitStage::Kernel,
                     const CompileOptions& opts = {});

/// Names of the `aten.*` ops the backend lowers (for docs and coverage tests).
std::vector<std::string> loweredOps();

}  // namespace xacc::backend::mlir
