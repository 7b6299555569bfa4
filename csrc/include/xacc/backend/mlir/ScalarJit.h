// Native code for a ScalarPlan: the plan's MLIR module JIT compiled (or loaded
// from the disk cache) and called through its dispatcher with the bail-out
// protocol of ScalarLowering.h. No MLIR or LLVM types here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "xacc/backend/mlir/ScalarLowering.h"

namespace xacc::backend::mlir {

struct ScalarJitOptions {
  int optLevel = 3;
  /// On-disk object cache; empty: none.
  std::string cacheDir;
};

/// The disk cache directory: $XACC_CACHE_DIR, else $XDG_CACHE_HOME/xacc, else
/// ~/.cache/xacc ("" when none of them can be determined, or XACC_CACHE_DIR is
/// "off": no disk cache).
std::string defaultCacheDir();

struct ScalarCompileInfo {
  bool fromDiskCache = false;  ///< loaded an object file: no MLIR ran
  double seconds = 0;          ///< wall time of compile or load
};

class ScalarModule {
public:
  virtual ~ScalarModule() = default;
  /// Runs function `fn` of the plan on `args` (one 8-byte slot per parameter:
  /// i64, f64 bits, 0/1) and writes its result slot. Returns 0, or the
  /// ScalarAbi::Bail code when the native code gave up (the caller then runs
  /// the graph on the runtime). Thread-safe.
  virtual int call(uint32_t fn, const uint64_t* args, uint64_t* result) const = 0;
};

/// Compiles `plan.mlir`. Null with `error` set on failure.
std::unique_ptr<ScalarModule> compileScalarPlan(const ScalarPlan& plan, const ScalarJitOptions& opts,
                                                ScalarCompileInfo& info, std::string& error);

/// The module after the LLVM pipeline, as LLVM IR text (for tests and --emit).
bool scalarPlanToLlvm(const ScalarPlan& plan, std::string& out, std::string& error);

}  // namespace xacc::backend::mlir
