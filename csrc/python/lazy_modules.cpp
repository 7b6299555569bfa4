// Note [Lazy backend modules]: a backend whose libraries are heavy is an
// extension module of its own, imported the first time it is needed. The MLIR
// backend maps libMLIR and libLLVM, over 100 MB of code and tens of MB of
// resident memory, which `import xacc` and cpu captures never use, so xacc._C
// does not link them. It is two modules: xacc._C_xpu runs captured graphs on
// xpu devices without LLVM (kernels come from the disk cache as shared
// objects) and loads xacc._C_mlir, the compiler and the backend's Python API,
// only when a kernel misses the cache (Note [Kernel shared objects]). A module
// is imported when
//   * a device its backend serves is named to a binding that takes a device
//     (xacc.jit/check_device through capture.device_available, graph compiles,
//     GIR loads: ensureBackend below), which registers its backend before the
//     frame hook can need it
//     (xacc._C_xpu); or
//   * its attribute of xacc._C is read (`xacc._C.mlir`, through the module's
//     __getattr__), the Python API of the backend (xacc._C_mlir).
// `xacc._C.has_<attr>` says whether this build has the module, without loading it.
// The extension module links xacc._C (DT_NEEDED on its soname, see
// csrc/python/CMakeLists.txt), so it shares xacc._C's GIR core, ATen bindings
// and backend registry; xacc._C exports what it uses (XACC_PY_EXPORT).
#include <string>

#include "Backends.h"
#include "Bindings.h"

#ifdef XACC_CAPTURE_AVAILABLE
#include "xacc/capture/Backend.h"
#endif

namespace xacc::python {

namespace {

struct LazyModule {
  const char* attr;    ///< its attribute of xacc._C (and `has_<attr>`)
  const char* target;  ///< the device prefix its backend serves ("": none)
  const char* module;  ///< the extension module to import
  bool built;          ///< whether this build has it
};

#ifdef XACC_MLIR_MODULE_BUILT
constexpr bool kMlirBuilt = true;
#else
constexpr bool kMlirBuilt = false;
#endif

constexpr LazyModule kLazyModules[] = {
    {"xpu", "xpu", "xacc._C_xpu", kMlirBuilt},
    {"mlir", "", "xacc._C_mlir", kMlirBuilt},
};

}  // namespace

bool backendModuleBuilt(const std::string& target) {
  for (const LazyModule& l : kLazyModules)
    if (target == l.target) return l.built;
  return false;
}

#ifdef XACC_CAPTURE_AVAILABLE
void ensureBackend(const std::string& device) {
  if (xacc::capture::deviceAvailable(device)) return;
  std::string target = device.substr(0, device.find_last_not_of("0123456789") + 1);
  for (const LazyModule& l : kLazyModules)
    if (target == l.target && l.built) py::module_::import(l.module);
}
#endif

void bindLazyModules(py::module_& m) {
  for (const LazyModule& l : kLazyModules) m.attr((std::string("has_") + l.attr).c_str()) = l.built;
  // PEP 562: module attributes computed on first access, then cached.
  py::handle self = m;
  m.def("__getattr__", [self](const std::string& name) -> py::object {
    for (const LazyModule& l : kLazyModules) {
      if (name != l.attr || !l.built) continue;
      py::object mod = py::module_::import(l.module);
      py::setattr(self, l.attr, mod);
      return mod;
    }
    throw py::attribute_error("module 'xacc._C' has no attribute '" + name + "'");
  });
}

}  // namespace xacc::python
