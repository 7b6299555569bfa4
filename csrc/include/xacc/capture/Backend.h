// Note [Backend interface]: how captured graphs reach the code that runs them.
//
// A backend turns a GIR graph into an executable for one device target: the
// ATen executor serves "cpu" (backend/aten), the MLIR code generator serves
// "xpu" and "xpuN" (backend/mlir). Capture knows backends only through this
// header: it never includes a backend's headers (scripts/check_layers.py checks
// that), and every backend is registered the same way, by the Python extension
// module when it loads (csrc/python/backends.cpp), so that libraries below it
// (capture, the backends themselves, the tools) stay free of each other.
//
// Executables take one IValue per graph parameter (tokens are None) and give
// one per result. `run` must be reentrant: graphs run with the GIL released,
// possibly from several threads at once.
#pragma once

#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ATen/core/ivalue.h>

namespace xacc::ir {
class Graph;
}

namespace xacc::capture {

/// A graph prepared by a backend.
class BackendExecutable {
public:
  virtual ~BackendExecutable() = default;
  /// Returns false with `error` set when the graph fails; a backend whose ATen
  /// op threw also calls noteRunFailure (Note [ATen error translation]).
  virtual bool run(std::vector<c10::IValue>& inputs, std::vector<c10::IValue>& outputs,
                   std::string& error) const = 0;
  /// Human-readable plan (which nodes run natively, which fall back); may be empty.
  virtual std::string describe() const { return {}; }
  /// Profile-guided optimization: what the executable measured when it was
  /// prepared with option `profile=1`, as a JSON array (docs/pgo.md). Empty when not profiling.
  virtual std::string profileJson() const { return {}; }
};

/// Per-compile options ("profile" -> "1", "aten_regions" -> region keys one a
/// line; see docs/pgo.md). A backend ignores the keys it does not know.
using BackendOptions = std::map<std::string, std::string>;

/// What a backend can do, declared when it registers; capture and the Python
/// face consult these instead of testing device names.
struct BackendCapabilities {
  bool nativeCode = false;  ///< compiles kernels to machine code (else runs ops one by one)
  bool profiles = false;    ///< honours BackendOptions "profile" and "aten_regions" (PGO)
};

struct Backend {
  std::string target;       ///< device prefix: "cpu" serves "cpu"; "xpu" serves "xpu" and "xpuN"
  std::string name;         ///< the `backend=` name users give xacc.jit ("aten", "mlir")
  std::string description;  ///< one line, for `xacc.backends()` and logs
  BackendCapabilities capabilities;
  /// Prepares `graph` (which outlives the executable) for `device`; null with
  /// `error` set when it cannot run there.
  std::function<std::unique_ptr<BackendExecutable>(const ir::Graph& graph, const std::string& device,
                                                   const BackendOptions& options, std::string& error)>
      prepare;
};

/// Registers `b` for its target; a later registration of the same target
/// replaces it. Thread-safe.
void registerBackend(Backend b);
/// The backend serving `device` ("xpu0" -> the "xpu" backend), or null.
std::shared_ptr<const Backend> backendFor(std::string_view device);
/// Every registered backend, by target.
std::vector<std::shared_ptr<const Backend>> backends();
/// Whether some registered backend serves `device`.
bool deviceAvailable(std::string_view device);

/// Note [ATen error translation], capture's side: a backend executable whose op
/// threw notes that exception here, on the failing thread, under the error
/// string its `run` reported. raiseAsEager (CacheEntry.h) consumes it.
void noteRunFailure(std::exception_ptr cause, std::string error);
/// The failure noted on this thread (null when none) and its error string; consumed.
std::exception_ptr takeRunFailure(std::string& error);

}  // namespace xacc::capture
