// xacc._C_xpu: captured graphs on xpu devices, without LLVM or MLIR. Imported
// the first time a device "xpuN" is named (Note [Lazy backend modules] in
// csrc/python/lazy_modules.cpp), it registers the "xpu" capture backend:
// graphs captured for xpuN (`xacc.jit(fn, device="xpu0")`, `python -m xjit
// --device xpu0`) are partitioned into kernels and ATen fallback nodes, and
// each kernel is mapped from the disk cache's shared objects (Note [Kernel
// shared objects]). Only a kernel that misses the cache loads the compiler:
// xacc._C_mlir, next to this module, which holds MLIR and LLVM. So a warm run
// never maps libLLVM or libMLIR.
//
// It links xacc._C (DT_NEEDED on its soname), and xacc._C_mlir links it in
// turn: one copy of the backend's code, counters and caches per process.
//
// Python API: set_capture_cache_dir(d), capture_cache_dir(), kernel_totals(),
// _set_cache_hash_check(on), _sha256_hex(data); xacc._C_mlir re-exports them.
#include <dlfcn.h>

#include <filesystem>

#include <pybind11/stl.h>

#include "../Bindings.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/backend/mlir/XpuBackend.h"

#ifdef XACC_CAPTURE_AVAILABLE
#include "../Backends.h"
#include "xacc/capture/Backend.h"
#endif

namespace xacc::backend::mlir {
// KernelCache.cpp (declared in the backend's private Jit.h).
void setKernelCompilerLibrary(const std::string& path);
}  // namespace xacc::backend::mlir

namespace xm = xacc::backend::mlir;
namespace ir = xacc::ir;
namespace support = xacc::support;

namespace {

#ifdef XACC_CAPTURE_AVAILABLE
/// Captured graphs on xpuN: IValues in and out around the xpu executable.
class XpuRunner : public xacc::capture::BackendExecutable {
public:
  XpuRunner(std::unique_ptr<xm::Executable> exe, const ir::Graph& g) : exe_(std::move(exe)) {
    for (size_t i = 0; i < g.numParams(); ++i) paramIsToken_.push_back(g.param(i)->type().isToken());
  }

  bool run(std::vector<c10::IValue>& inputs, std::vector<c10::IValue>& outputs,
           std::string& error) const override {
    std::vector<ir::Datum> in(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (i < paramIsToken_.size() && paramIsToken_[i]) {
        in[i] = ir::Datum::token();
      } else if (!xacc::backend::aten::toDatum(inputs[i], in[i], error)) {
        return false;
      }
    }
    support::DiagnosticEngine diag;
    std::vector<ir::Datum> out;
    if (!exe_->run(in, out, diag)) {
      error = diag.renderAllText();
      xacc::python::noteAtenFailure();  // an ATen fallback op that threw
      return false;
    }
    outputs.assign(out.size(), c10::IValue());
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].kind() != ir::DKind::Token && !xacc::backend::aten::toIValue(out[i], outputs[i], error))
        return false;
    return true;
  }

  std::string describe() const override { return exe_->describe(); }
  std::string profileJson() const override { return exe_->profileJson(); }

private:
  std::unique_ptr<xm::Executable> exe_;
  std::vector<bool> paramIsToken_;
};
#endif

/// The kernel disk cache of captured graphs (written with the GIL held).
std::string& captureCacheDir() {
  static std::string* d = new std::string;
  return *d;
}


/// xacc._C_mlir's file: this module's, with `_C_xpu` replaced by `_C_mlir`
/// (same directory, same ABI suffix).
std::string compilerModulePath() {
  Dl_info info;
  if (!::dladdr(reinterpret_cast<void*>(&compilerModulePath), &info) || !info.dli_fname) return "";
  std::filesystem::path self(info.dli_fname);
  std::string name = self.filename().string();
  if (name.rfind("_C_xpu", 0) != 0) return "";
  return (self.parent_path() / ("_C_mlir" + name.substr(6))).string();
}

}  // namespace

PYBIND11_MODULE(_C_xpu, x) {
  x.doc() = "Captured graphs on xpu devices: kernels from the disk cache, the MLIR compiler on a miss";
  xm::setKernelCompilerLibrary(compilerModulePath());

#ifdef XACC_CAPTURE_AVAILABLE
  xacc::capture::Backend xpu;
  xpu.target = "xpu";
  xpu.name = "mlir";
  xpu.description = "the MLIR code generator: fused native kernels, ATen for what it does not lower";
  xpu.capabilities.nativeCode = true;
  xpu.capabilities.profiles = true;
  xpu.prepare = [](const ir::Graph& g, const std::string& device, const xacc::capture::BackendOptions& options,
                   std::string& error) -> std::unique_ptr<xacc::capture::BackendExecutable> {
    xm::CompileOptions opts;
    opts.device = device;
    opts.cacheDir = captureCacheDir();
    // Profile-guided optimization (docs/pgo.md): "profile" "1" times regions;
    // "aten_regions" lists region keys, one a line, to leave to ATen.
    if (auto it = options.find("profile"); it != options.end()) opts.profile = it->second == "1";
    if (auto it = options.find("aten_regions"); it != options.end()) {
      std::string cur;
      for (char ch : it->second + "\n") {
        if (ch != '\n') {
          cur += ch;
        } else if (!cur.empty()) {
          opts.atenRegions.push_back(cur);
          cur.clear();
        }
      }
    }
    support::DiagnosticEngine diag;
    auto exe = xm::compileGraph(g, opts, diag);
    if (!exe) {
      error = diag.renderAllText();
      return nullptr;
    }
    return std::make_unique<XpuRunner>(std::move(exe), g);
  };
  xacc::capture::registerBackend(std::move(xpu));
#endif

  x.def("set_capture_cache_dir", [](const std::string& d) { captureCacheDir() = d; },
        "Kernel disk cache of graphs captured from now on ('' : $XACC_CACHE_DIR); see docs/aot.md.");
  x.def("capture_cache_dir", [] { return captureCacheDir(); });
  x.def("kernel_totals", [] {
    xm::KernelTotals t = xm::kernelTotals();
    py::dict d;
    d["compiled"] = t.compiled;
    d["disk_hits"] = t.diskHits;
    d["memory_hits"] = t.memoryHits;
    d["compile_seconds"] = t.compileSeconds;
    return d;
  }, "Process-wide kernel counters: compiled, disk_hits, memory_hits, compile_seconds.");
  x.def("_set_cache_hash_check", &xm::setDiskCacheHashCheck, py::arg("on"),
        "Benchmarks only: False skips the SHA-256 check of kernel disk cache entries.");
  x.def("_sha256_hex", [](py::bytes b) { return xm::diskCacheSha256Hex(std::string(b)); }, py::arg("data"),
        "Tests only: the SHA-256 (hex) kernel disk cache entries are checked with.");
}
