// xacc._C.camel: the Camel language from Python (the camel_lang package is
// the public face). `compile(path)` runs the Camel front end on a module and
// returns a Program whose exported functions Python calls with Python values:
// arguments become datums (tensors shared, not copied) and are conformed to
// the declared parameter types (Interop.h), results come back as Python
// values (structs as dicts, tensors as the same torch.Tensor objects).
// Compile errors raise xacc.CompileError, runtime errors xacc.ExecutionError,
// both with the located diagnostics. The GIL is released while Camel code
// runs; Camel output goes to Python's sys.stdout so it interleaves with
// Python's own prints.
#if defined(XACC_CAMEL_AVAILABLE) && defined(XACC_RUNTIME_AVAILABLE)

#include <pybind11/stl.h>

#include <atomic>
#include <mutex>

#include "Bindings.h"
#include "xacc/camel/Compiler.h"
#include "xacc/camel/Interop.h"
#include "xacc/camel/Stdlib.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/PassManager.h"
#include "xacc/runtime/Runtime.h"

#ifdef XACC_EXEC_PYTHON_IMPL_AVAILABLE
#include "../lib/executors/python/PyValues.h"
#include "xacc/camel/Executor.h"
extern "C" bool xacc_camel_executor_python(xacc::camel::ExecutorContext* ctx);
#endif
#ifdef XACC_EXEC_PYPLOT_IMPL_AVAILABLE
extern "C" bool xacc_camel_executor_pyplot(xacc::camel::ExecutorContext* ctx);
#endif
#ifdef XACC_EXEC_ATEN_IMPL_AVAILABLE
#include "xacc/camel/Executor.h"
extern "C" bool xacc_camel_executor_aten(xacc::camel::ExecutorContext* ctx);
#endif

namespace xacc::python {
namespace {

constexpr const char* kDefaultPasses = "inline,canonicalize,const-fold,cse,dce";

/// A compiled Camel module with a runtime kept for repeated calls.
struct CamelProgram {
  camel::CompiledProgram prog;
  std::string path;
  // One runtime serves calls one at a time; a call made while it is busy (a
  // Python callback calling back into this module, another thread) gets a
  // fresh runtime of its own.
  support::DiagnosticEngine rtDiag;
  std::unique_ptr<runtime::Runtime> rt;
  std::atomic<bool> busy{false};
  std::mutex mu;

  const camel::ExportedFunction* pick(const std::string& name, std::vector<ir::Datum>& with,
                                      std::vector<ir::Datum>& args, std::string& error) const;
};

void writeToPythonStdout(std::string_view s) {
  py::gil_scoped_acquire gil;
  py::object out = py::module_::import("sys").attr("stdout");
  out.attr("write")(py::str(s.data(), s.size()));
}

std::vector<ir::Datum> toDatums(const py::sequence& seq, const char* what) {
  std::vector<ir::Datum> out;
  for (size_t i = 0; i < seq.size(); ++i) {
    ir::Datum d;
    std::string err;
    if (!toDatum(seq[i], d, err))
      throw py::type_error(std::string(what) + " " + std::to_string(i) + ": " + err);
    out.push_back(std::move(d));
  }
  return out;
}

const camel::ExportedFunction* CamelProgram::pick(const std::string& name,
                                                  std::vector<ir::Datum>& with,
                                                  std::vector<ir::Datum>& args,
                                                  std::string& error) const {
  std::vector<const camel::ExportedFunction*> cands;
  for (const auto& e : prog.exports)
    if (e.name == name) cands.push_back(&e);
  if (cands.empty()) {
    error = "module '" + path + "' exports no function '" + name + "'";
    return nullptr;
  }
  std::string firstError;
  for (const camel::ExportedFunction* e : cands) {
    if (e->params.size() != args.size() || e->withParams.size() != with.size()) {
      if (firstError.empty())
        firstError = name + "() takes " + std::to_string(e->params.size()) + " argument" +
                     (e->params.size() == 1 ? "" : "s") +
                     (e->withParams.empty()
                          ? std::string()
                          : " and " + std::to_string(e->withParams.size()) + " with-argument" +
                                (e->withParams.size() == 1 ? "" : "s")) +
                     ", got " + std::to_string(args.size()) +
                     (with.empty() ? std::string() : " and " + std::to_string(with.size()));
      continue;
    }
    std::vector<ir::Datum> w = with, a = args;
    std::string err;
    bool ok = true;
    for (size_t i = 0; ok && i < w.size(); ++i)
      if (!camel::conformDatum(w[i], e->withTypes[i], err)) {
        err = "with-argument '" + e->withParams[i] + "' of " + name + "(): " + err;
        ok = false;
      }
    for (size_t i = 0; ok && i < a.size(); ++i)
      if (!camel::conformDatum(a[i], e->paramTypes[i], err)) {
        err = "argument '" + e->params[i] + "' of " + name + "(): " + err;
        ok = false;
      }
    if (!ok) {
      if (firstError.empty()) firstError = err;
      continue;
    }
    if (e->graph.empty()) {
      error = name + "() is decorated: calling decorated Camel functions from Python is not supported";
      return nullptr;
    }
    with = std::move(w);
    args = std::move(a);
    return e;
  }
  error = firstError;
  return nullptr;
}

std::shared_ptr<CamelProgram> compile(const std::string& path, std::vector<std::string> includeDirs,
                                      const std::string& passes, bool requireMain) {
  camel::registerCamelStdlib();
  auto p = std::make_shared<CamelProgram>();
  p->path = path;
  support::DiagnosticEngine diags;
  camel::CompileOptions opts;
  opts.includeDirs = std::move(includeDirs);
  opts.requireMain = requireMain;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = camel::compileProgram(path, opts, diags, p->prog) && ir::verifyModule(*p->prog.module, diags);
    if (ok && !passes.empty() && passes != "none") {
      passes::PassManager pm(diags);
      ok = pm.addPipeline(passes) && pm.run(*p->prog.module) && ir::verifyModule(*p->prog.module, diags);
    }
  }
  if (!ok) raiseDiagnostics(diags, "CompileError");
  return p;
}

/// Runs graph `graph` of `p` with `in` (token first when `takesToken`);
/// returns the results without the token.
std::vector<ir::Datum> runGraph(CamelProgram& p, const std::string& graph, bool takesToken,
                                std::vector<ir::Datum> in) {
  if (takesToken) in.insert(in.begin(), ir::Datum::token());
  std::vector<ir::Datum> results;
  support::DiagnosticEngine diags;
  bool ok;
  int exitStatus = 0;
  bool exited = false;
  {
    py::gil_scoped_release release;
    bool expected = false;
    if (p.busy.compare_exchange_strong(expected, true)) {
      // The shared runtime: reports go to its own engine, copied out below.
      std::lock_guard<std::mutex> lock(p.mu);
      if (!p.rt) {
        p.rt = std::make_unique<runtime::Runtime>(p.rtDiag, *p.prog.module);
        p.rt->setOutput(writeToPythonStdout);
      }
      ok = p.rt->call(graph, in, results);
      if (!ok) {
        for (const auto& d : p.rtDiag.diagnostics()) {
          auto& n = diags.report(d.severity, d.code, d.loc, d.message);
          n.notes = d.notes;
          n.suggestion = d.suggestion;
        }
        p.rtDiag.clear();
      }
      p.busy = false;
    } else {
      runtime::Runtime rt(diags, *p.prog.module);
      rt.setOutput(writeToPythonStdout);
      ok = rt.call(graph, in, results);
    }
    exited = camel::ExitRequest::take(exitStatus);
  }
  if (exited) throw py::value_error("Camel code called exit(" + std::to_string(exitStatus) + ")");
  if (!ok) raiseDiagnostics(diags, "ExecutionError");
  if (takesToken && !results.empty()) results.erase(results.begin());
  return results;
}

py::object call(CamelProgram& p, const std::string& name, py::sequence args, py::sequence with) {
  std::vector<ir::Datum> a = toDatums(args, "argument"), w = toDatums(with, "with-argument");
  std::string error;
  const camel::ExportedFunction* e = p.pick(name, w, a, error);
  if (!e) throw py::type_error(error);
  std::vector<ir::Datum> in = std::move(w);
  for (auto& d : a) in.push_back(std::move(d));
  std::vector<ir::Datum> results = runGraph(p, e->graph, e->takesToken, std::move(in));
  if (results.empty()) return py::none();
  if (results.size() == 1) return fromDatum(results[0]);
  // Value, then the final values of `var` parameters.
  py::tuple t(results.size());
  for (size_t i = 0; i < results.size(); ++i) t[i] = fromDatum(results[i]);
  return std::move(t);
}

int runMain(CamelProgram& p) {
  if (p.prog.mainGraph.empty()) throw py::value_error("module '" + p.path + "' has no runnable main");
  std::vector<ir::Datum> results = runGraph(p, p.prog.mainGraph, p.prog.mainTakesToken, {});
  if (results.empty()) return 0;
  const ir::Datum& r = results[0];
  if (r.kind() == ir::DKind::Int) return int(r.asInt() & 0xff);
  if (r.kind() == ir::DKind::Bool) return r.asBool() ? 1 : 0;
  return 0;
}

py::list exportsOf(const CamelProgram& p) {
  py::list out;
  for (const auto& e : p.prog.exports) {
    py::dict d;
    d["name"] = e.name;
    d["params"] = e.params;
    d["with_params"] = e.withParams;
    std::vector<std::string> pt, wt;
    for (ir::Type t : e.paramTypes) pt.push_back(camel::camelTypeName(t));
    for (ir::Type t : e.withTypes) wt.push_back(camel::camelTypeName(t));
    d["param_types"] = pt;
    d["with_types"] = wt;
    d["result"] = e.result ? camel::camelTypeName(e.result) : std::string("void");
    d["effectful"] = e.takesToken;
    d["graph"] = e.graph;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace xacc::python

void bindCamel(py::module_& m) {
  using namespace xacc::python;
  // Camel code run from Python uses this interpreter: the python executors
  // are linked in, never loaded as plugins (which would embed a second one).
#ifdef XACC_EXEC_PYTHON_IMPL_AVAILABLE
  xacc::camel::ExecutorRegistry::get().addStatic("python", &xacc_camel_executor_python);
  xacc::executors::python::TensorBridge bridge;
  bridge.toDatum = [](PyObject* o, xacc::ir::Datum& out) {
    return xaccTensorToDatum != nullptr && xaccTensorToDatum(py::handle(o), out);
  };
  bridge.toPython = [](const xacc::ir::Datum& d) -> PyObject* {
    if (!xaccDatumToTensor) {
      PyErr_SetString(PyExc_TypeError, "xacc._C was built without tensor support");
      return nullptr;
    }
    return xaccDatumToTensor(d).release().ptr();
  };
  xacc::executors::python::setTensorBridge(bridge);
#endif
#ifdef XACC_EXEC_PYPLOT_IMPL_AVAILABLE
  xacc::camel::ExecutorRegistry::get().addStatic("pyplot", &xacc_camel_executor_pyplot);
#endif
#ifdef XACC_EXEC_ATEN_IMPL_AVAILABLE
  // Tensors of Camel code run from Python are this process's torch tensors.
  xacc::camel::ExecutorRegistry::get().addStatic("aten", &xacc_camel_executor_aten);
#endif
  py::module_ c = m.def_submodule("camel", "The Camel language: compile modules, call their functions");
  py::class_<CamelProgram, std::shared_ptr<CamelProgram>>(c, "Program")
      .def_readonly("path", &CamelProgram::path)
      .def_property_readonly("exports", &exportsOf)
      .def_property_readonly("main_graph", [](const CamelProgram& p) { return p.prog.mainGraph; })
      .def_property_readonly("gir", [](const CamelProgram& p) { return xacc::ir::printModule(*p.prog.module); })
      .def("call", &call, py::arg("name"), py::arg("args") = py::tuple(), py::arg("with_args") = py::tuple(),
           "Calls exported function `name`; raises TypeError on arguments that do not fit its "
           "signature and xacc.ExecutionError on a Camel runtime error.")
      .def("run_main", &runMain, "Runs main(); returns its exit status (spec 11.9).");
  c.def("compile", &compile, py::arg("path"), py::arg("include_dirs") = std::vector<std::string>(),
        py::arg("passes") = kDefaultPasses, py::arg("require_main") = false,
        "Compiles the Camel module at `path` (and its imports); raises xacc.CompileError.");
}

#endif
