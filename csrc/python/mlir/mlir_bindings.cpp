// xacc._C_mlir: the xpu target (MLIR backend) from Python, and the kernel
// compiler. A separate extension module that maps LLVM/MLIR, imported when
// `xacc._C.mlir` is read (Note [Lazy backend modules]), and loaded by
// xacc._C_xpu (which runs captured graphs on xpuN) the first time a kernel
// misses the disk cache (Note [Kernel shared objects]); loading it installs
// the compiler (Jit.cpp's static initialiser).
//
// It links xacc._C and xacc._C_xpu (DT_NEEDED on their sonames): the GIR core,
// ATen, the backend registry and the backend's executables, caches and
// counters are the ones those modules loaded, never second copies.
//
// Python API (documented in docs/backend-xpu.md, "From Python"; also reachable
// as xacc._C.mlir, which imports this module):
//   available() -> bool
//   lowered_ops() -> list[str]
//   compile(gir_text, graph=None, device="xpu0", **opts) -> Executable
//   emit(gir_text, stage="kernel", graph=None, **opts) -> str
//   Executable.run(inputs) -> list, Executable(*inputs) -> tuple,
//   .stats() -> dict, .describe() -> str, .emit(stage) -> str, .gir -> str
#include <pybind11/stl.h>

#include "../Bindings.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/backend/mlir/XpuBackend.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Printer.h"
#include "xacc/support/CoreDiags.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xm = xacc::backend::mlir;
namespace ir = xacc::ir;
namespace support = xacc::support;

namespace {

xm::EmitStage stageFromName(const std::string& s) {
  if (s == "kernel" || s == "mlir") return xm::EmitStage::Kernel;
  if (s == "bufferized") return xm::EmitStage::Bufferized;
  if (s == "llvm") return xm::EmitStage::Llvm;
  throw py::value_error("unknown MLIR stage '" + s + "' (expected 'kernel', 'bufferized' or 'llvm')");
}

xm::CompileOptions makeOptions(const std::string& device, int optLevel, bool fastMath, bool parallel,
                               const std::string& cacheDir, bool disableLowering) {
  xm::CompileOptions o;
  o.device = device;
  o.optLevel = optLevel;
  o.fastMath = fastMath;
  o.parallel = parallel;
  o.cacheDir = cacheDir;
  o.disableLowering = disableLowering;
  return o;
}

/// Parses GIR text and picks `graph` (default: the first graph). The module
/// is kept alive by the caller: graphs may call other graphs of it.
struct Parsed {
  std::shared_ptr<ir::Module> module;
  const ir::Graph* graph = nullptr;
};

Parsed parseGir(const std::string& text, const std::optional<std::string>& graph) {
  xacc::backend::aten::registerAtenOps();
  support::DiagnosticEngine diag;
  Parsed p;
  p.module = std::shared_ptr<ir::Module>(ir::parseModule(text, "<gir>", diag).release());
  if (!p.module) xacc::python::raiseDiagnostics(diag);
  if (graph) {
    p.graph = p.module->lookup(*graph);
    if (!p.graph) {
      diag.error(coreCode(CoreDiag::UnknownGraph), {}, "no graph @" + *graph);
      xacc::python::raiseDiagnostics(diag);
    }
  } else {
    if (p.module->graphs().empty()) {
      diag.error(coreCode(CoreDiag::UnknownGraph), {}, "the GIR text has no graph");
      xacc::python::raiseDiagnostics(diag);
    }
    p.graph = p.module->graphs().front().get();
  }
  return p;
}

/// A compiled graph from Python: inputs and outputs exclude token values.
struct PyExecutable {
  Parsed parsed;
  xm::CompileOptions opts;
  std::unique_ptr<xm::Executable> exe;

  std::vector<ir::Datum> run(py::handle args) {
    std::vector<ir::Datum> in;
    size_t k = 0, n = py::len(args);
    std::vector<py::handle> items;
    for (py::handle h : args) items.push_back(h);
    for (size_t i = 0; i < parsed.graph->numParams(); ++i) {
      if (parsed.graph->param(i)->type().isToken()) {
        in.push_back(ir::Datum::token());
        continue;
      }
      if (k >= n) break;
      ir::Datum d;
      std::string err;
      if (!xacc::python::toDatum(items[k++], d, err)) throw py::type_error(err);
      in.push_back(std::move(d));
    }
    if (k != n || in.size() != parsed.graph->numParams())
      throw py::type_error("graph @" + parsed.graph->name() + " expects " + std::to_string(numInputs()) +
                           " inputs, got " + std::to_string(n));
    support::DiagnosticEngine diag;
    std::vector<ir::Datum> out;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = exe->run(in, out, diag);
    }
    if (!ok) xacc::python::raiseDiagnostics(diag, "ExecutionError");
    std::vector<ir::Datum> results;
    for (ir::Datum& d : out)
      if (d.kind() != ir::DKind::Token) results.push_back(std::move(d));
    return results;
  }

  size_t numInputs() const {
    size_t n = 0;
    for (size_t i = 0; i < parsed.graph->numParams(); ++i) n += !parsed.graph->param(i)->type().isToken();
    return n;
  }
};

py::dict statsDict(const xm::CompileStats& s) {
  py::dict d;
  d["regions"] = s.regions;
  d["lowered_nodes"] = s.loweredNodes;
  d["fallback_nodes"] = s.fallbackNodes;
  d["kernels_compiled"] = s.kernelsCompiled;
  d["memory_cache_hits"] = s.memoryCacheHits;
  d["disk_cache_hits"] = s.diskCacheHits;
  d["contiguous_copies"] = s.contiguousCopies;
  d["compile_seconds"] = s.compileSeconds;
  d["fallback_reasons"] = s.fallbackReasons;
  d["kernel_launches"] = s.kernelLaunches;
  d["region_fallback_runs"] = s.regionFallbackRuns;
  d["split_runs"] = s.splitRuns;
  d["packed_gemm_runs"] = s.packedGemmRuns;
  d["weights_packed"] = s.weightsPacked;
  d["constant_steps"] = s.constantSteps;
  d["constant_steps_skipped"] = s.constantStepsSkipped;
  return d;
}

}  // namespace

PYBIND11_MODULE(_C_mlir, x) {
  x.doc() = "The xpu target: GIR -> MLIR -> native kernels (+ ATen fallback)";

  // The capture backend, the kernel cache's settings and counters live in
  // xacc._C_xpu, which this module links (one copy of each per process).
  py::module_ xpu = py::module_::import("xacc._C_xpu");
  for (const char* name : {"set_capture_cache_dir", "capture_cache_dir", "kernel_totals", "_set_cache_hash_check",
                           "_sha256_hex"})
    x.attr(name) = xpu.attr(name);
  x.def("available", &xm::isAvailable, "True when the backend can JIT kernels for the host.");
  x.def("lowered_ops", &xm::loweredOps, "Names of the aten.* ops the backend lowers to MLIR.");

  py::class_<PyExecutable, std::shared_ptr<PyExecutable>>(x, "Executable",
                                                          "A GIR graph compiled for an xpu device.")
      .def("run", [](PyExecutable& e, py::sequence inputs) {
        py::list out;
        for (const ir::Datum& d : e.run(inputs)) out.append(xacc::python::fromDatum(d));
        return out;
      }, py::arg("inputs"), "Runs the graph on a list of inputs (tensors zero-copy); returns a list.")
      .def("__call__", [](PyExecutable& e, py::args args) {
        std::vector<ir::Datum> r = e.run(args);
        py::tuple t(r.size());
        for (size_t i = 0; i < r.size(); ++i) t[i] = xacc::python::fromDatum(r[i]);
        return t;
      })
      .def("stats", [](const PyExecutable& e) { return statsDict(e.exe->stats()); },
           "regions, lowered/fallback nodes, kernels compiled, cache hits, compile seconds, fallback reasons.")
      .def("describe", [](const PyExecutable& e) { return e.exe->describe(); }, "The plan, one step a line.")
      .def("emit", [](const PyExecutable& e, const std::string& stage) {
        return xm::emitMlir(*e.parsed.graph, stageFromName(stage), e.opts);
      }, py::arg("stage") = "kernel", "MLIR of every region at 'kernel', 'bufferized' or 'llvm'.")
      .def_property_readonly("gir", [](const PyExecutable& e) { return ir::printGraph(*e.parsed.graph); })
      .def_property_readonly("device", [](const PyExecutable& e) { return e.opts.device; })
      .def_property_readonly("num_inputs", &PyExecutable::numInputs);

  x.def("compile",
        [](const std::string& text, std::optional<std::string> graph, const std::string& device, int optLevel,
           bool fastMath, bool parallel, const std::string& cacheDir, bool disableLowering) {
          auto e = std::make_shared<PyExecutable>();
          e->parsed = parseGir(text, graph);
          e->opts = makeOptions(device, optLevel, fastMath, parallel, cacheDir, disableLowering);
          support::DiagnosticEngine diag;
          e->exe = xm::compileGraph(*e->parsed.graph, e->opts, diag);
          if (!e->exe) xacc::python::raiseDiagnostics(diag, "BackendError");
          return e;
        },
        py::arg("gir_text"), py::arg("graph") = py::none(), py::arg("device") = "xpu0", py::arg("opt_level") = 3,
        py::arg("fast_math") = true, py::arg("parallel") = true, py::arg("cache_dir") = "",
        py::arg("disable_lowering") = false,
        "Compiles a graph of GIR text (default: its first graph) for an xpu device.");

  x.def("emit",
        [](const std::string& text, const std::string& stage, std::optional<std::string> graph, int optLevel,
           bool fastMath, bool disableLowering) {
          Parsed p = parseGir(text, graph);
          xm::CompileOptions o = makeOptions("xpu0", optLevel, fastMath, true, "", disableLowering);
          xm::EmitStage st = stageFromName(stage);
          py::gil_scoped_release release;
          return xm::emitMlir(*p.graph, st, o);
        },
        py::arg("gir_text"), py::arg("stage") = "kernel", py::arg("graph") = py::none(), py::arg("opt_level") = 3,
        py::arg("fast_math") = true, py::arg("disable_lowering") = false,
        "The MLIR of every region of a graph at a stage: 'kernel' (linalg on tensors), 'bufferized', "
        "'llvm' (LLVM IR); fallback nodes are listed as comments.");
}
