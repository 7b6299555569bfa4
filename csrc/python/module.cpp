// xacc._C: the GIR core for Python — parse, print, verify, run passes,
// interpret, DOT export — plus hooks through which the optional components
// (ATen, capture, Camel) add their bindings. Exceptions are raised only here,
// at the boundary, as xacc.errors.* carrying located diagnostics.
#include <pybind11/stl.h>

#include <functional>
#include <set>

#include "Bindings.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/List.h"
#include "xacc/ir/Parser.h"
#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/Autodiff.h"
#include "xacc/passes/MixedPrecision.h"
#include "xacc/passes/PassManager.h"
#include "xacc/support/CoreDiags.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::python {

/// Diagnostics quote user input, which may not be valid UTF-8: decode with
/// replacement characters rather than failing while reporting the failure.
static py::str lossyStr(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

void raiseDiagnostics(const support::DiagnosticEngine& diag, const char* kind) {
  py::object errors = py::module_::import("xacc.errors");
  py::list items;
  for (const support::Diagnostic& d : diag.diagnostics()) {
    py::dict item;
    item["severity"] = support::severityName(d.severity);
    item["code"] = d.code;
    item["file"] = lossyStr(d.loc.file ? *d.loc.file : std::string());
    item["line"] = d.loc.line;
    item["col"] = d.loc.col;
    item["message"] = lossyStr(d.message);
    items.append(item);
  }
  py::object exc = errors.attr(kind)(lossyStr(diag.renderAllText()), items);
  PyErr_SetObject(exc.get_type().ptr(), exc.ptr());
  throw py::error_already_set();
}

bool toDatum(py::handle obj, ir::Datum& out, std::string& error) {
  if (obj.is_none()) {
    out = ir::Datum();
  } else if (PyBool_Check(obj.ptr())) {
    out = ir::Datum::boolean(obj.cast<bool>());
  } else if (PyLong_Check(obj.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow) {
      error = "integer does not fit in 64 bits";
      return false;
    }
    out = ir::Datum::integer(v);
  } else if (PyFloat_Check(obj.ptr())) {
    out = ir::Datum::real(obj.cast<double>());
  } else if (PyUnicode_Check(obj.ptr())) {
    out = ir::Datum::string(obj.cast<std::string>());
  } else if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    std::vector<ir::Datum> items;
    for (py::handle h : obj) {
      ir::Datum d;
      if (!toDatum(h, d, error)) return false;
      items.push_back(std::move(d));
    }
    out = PyList_Check(obj.ptr()) ? ir::Datum::list(std::move(items)) : ir::Datum::tuple(std::move(items));
  } else if (PyDict_Check(obj.ptr())) {
    std::vector<std::string> names;
    std::vector<ir::Datum> fields;
    for (auto item : obj.cast<py::dict>()) {
      if (!PyUnicode_Check(item.first.ptr())) {
        error = "struct keys must be strings";
        return false;
      }
      names.push_back(item.first.cast<std::string>());
      ir::Datum d;
      if (!toDatum(item.second, d, error)) return false;
      fields.push_back(std::move(d));
    }
    out = ir::Datum::structure(std::move(names), std::move(fields));
  } else if (xaccTensorToDatum && xaccTensorToDatum(obj, out)) {
    return true;
  } else {
    error = "cannot convert a Python '" + std::string(Py_TYPE(obj.ptr())->tp_name) + "' to a GIR value";
    return false;
  }
  return true;
}

py::object fromDatum(const ir::Datum& d) {
  switch (d.kind()) {
    case ir::DKind::Null:
    case ir::DKind::Token: return py::none();
    case ir::DKind::Int: return py::int_(d.asInt());
    case ir::DKind::Float: return py::float_(d.asFloat());
    case ir::DKind::Bool: return py::bool_(d.asBool());
    case ir::DKind::Str: return py::str(d.asStr());
    case ir::DKind::List: {
      py::list l;
      ir::ListView items(d);
      for (const ir::Datum& e : *items) l.append(fromDatum(e));
      return std::move(l);
    }
    case ir::DKind::Tuple: {
      py::tuple t(d.tupleItems().size());
      for (size_t i = 0; i < d.tupleItems().size(); ++i) t[i] = fromDatum(d.tupleItems()[i]);
      return std::move(t);
    }
    case ir::DKind::Struct: {
      py::dict dict;
      for (size_t i = 0; i < d.structNames().size(); ++i)
        dict[py::str(d.structNames()[i])] = fromDatum(d.structFields()[i]);
      return std::move(dict);
    }
    case ir::DKind::Tensor:
      if (xaccDatumToTensor) return xaccDatumToTensor(d);
      break;
    default: break;
  }
  return py::str(d.repr(false));
}

namespace {


std::shared_ptr<PyModule> parse(const std::string& text, const std::string& filename) {
  support::DiagnosticEngine diag;
  auto pm = std::make_shared<PyModule>();
  pm->module = ir::parseModule(text, filename, diag, &pm->locs);
  if (!pm->module) raiseDiagnostics(diag);
  return pm;
}

void verify(PyModule& pm) {
  support::DiagnosticEngine diag;
  if (!ir::verifyModule(*pm.module, diag, &pm.locs)) raiseDiagnostics(diag);
}

py::dict runPasses(PyModule& pm, const std::string& pipeline, bool verifyEach,
                   const std::map<std::string, std::string>& options) {
  support::DiagnosticEngine diag;
  passes::PassManager mgr(diag);
  mgr.setVerifyEach(verifyEach);
  for (auto& [k, v] : options) mgr.setOption(k, v);
  mgr.setTextLocations(&pm.locs);
  if (!mgr.addPipeline(pipeline) || !mgr.run(*pm.module)) raiseDiagnostics(diag);
  py::dict stats;
  for (auto& [k, v] : mgr.stats()) stats[py::str(k)] = v;
  return stats;
}

/// The amp pass's regions of @graph (Note [AMP regions]): per region its id,
/// op names, source locations and number of outputs; plus the ops the policy
/// keeps in float32.
py::dict ampRegions(PyModule& pm, const std::string& graph) {
  const ir::Graph* g = pm.module->lookup(graph);
  if (!g) throw py::value_error("no graph @" + graph);
  passes::AmpPlan plan = passes::planMixedPrecision(*g);
  py::list regions;
  for (const passes::AmpRegion& r : plan.regions) {
    py::dict d;
    d["id"] = r.id;
    py::list ops, locs;
    for (const ir::Node* n : r.nodes) {
      ops.append(n->opName());
      locs.append(n->loc().valid() ? n->loc().str() : std::string());
    }
    d["ops"] = ops;
    d["locs"] = locs;
    d["num_outputs"] = r.outputs.size();
    regions.append(d);
  }
  py::list kept;
  for (const ir::Node* n : plan.keptF32) kept.append(n->opName());
  py::dict out;
  out["regions"] = regions;
  out["kept_f32"] = kept;
  return out;
}

/// Adds the gradient graph of @graph (see Note [Gradient graphs]); returns its name.
std::string grad(PyModule& pm, const std::string& graph, py::list wrt, bool seedParams,
                 const std::string& name) {
  support::DiagnosticEngine diag;
  const ir::Graph* g = pm.module->lookup(graph);
  if (!g) {
    diag.error(coreCode(CoreDiag::UnknownGraph), {}, "no graph @" + graph);
    raiseDiagnostics(diag);
  }
  passes::GradOptions opts;
  opts.seedParams = seedParams;
  opts.name = name;
  for (py::handle w : wrt) {
    std::string spec = py::isinstance<py::int_>(w) ? std::to_string(w.cast<size_t>()) : w.cast<std::string>();
    std::vector<size_t> idx;
    std::string err;
    if (!passes::parseWrtList(*g, spec, idx, err)) {
      diag.error(coreCode(CoreDiag::AutodiffError), {}, err);
      raiseDiagnostics(diag);
    }
    opts.wrt.insert(opts.wrt.end(), idx.begin(), idx.end());
  }
  // Report where the op came from (a .cml or Python line) when the node says so.
  opts.locOf = [&pm](const ir::Node& n) { return n.loc().file ? n.loc() : pm.locs.of(n); };
  auto dg = passes::buildGradGraph(*g, opts, diag);
  if (!dg) raiseDiagnostics(diag);
  if (pm.module->lookup(dg->name())) pm.module->erase(dg->name());
  std::string out = dg->name();
  pm.module->add(std::move(dg));
  return out;
}

py::object interpret(PyModule& pm, const std::string& graph, py::list args) {
  const ir::Graph* g = pm.module->lookup(graph);
  support::DiagnosticEngine diag;
  if (!g) {
    diag.error(coreCode(CoreDiag::UnknownGraph), {}, "no graph @" + graph);
    raiseDiagnostics(diag);
  }
  // Token parameters take a fresh token: pass either one argument per non-token
  // parameter, or one per parameter with None at the token positions.
  size_t nonToken = 0;
  for (size_t i = 0; i < g->numParams(); ++i) nonToken += !g->param(i)->type().isToken();
  bool skipTokens = args.size() == nonToken && nonToken != g->numParams();
  std::vector<ir::Datum> in;
  size_t k = 0;
  for (size_t i = 0; i < g->numParams() || k < args.size(); ++i) {
    bool tok = i < g->numParams() && g->param(i)->type().isToken();
    if (tok && (skipTokens || (k < args.size() && py::handle(args[k]).is_none()))) {
      in.push_back(ir::Datum::token());
      if (!skipTokens) ++k;
      continue;
    }
    if (k >= args.size()) break;
    ir::Datum d;
    std::string err;
    if (!toDatum(args[k++], d, err)) throw py::type_error(err);
    in.push_back(std::move(d));
  }
  std::string printed;
  ir::Interpreter interp(diag, pm.module.get());
  interp.setOutput([&](std::string_view s) { printed.append(s); });
  std::vector<ir::Datum> results;
  bool ok;
  {
    py::gil_scoped_release release;
    ok = interp.run(*g, in, results);
  }
  if (!ok) raiseDiagnostics(diag, "ExecutionError");
  py::list out;
  for (const ir::Datum& r : results)
    if (r.kind() != ir::DKind::Token) out.append(fromDatum(r));
  return py::make_tuple(out, printed);
}

}  // namespace

}  // namespace xacc::python

PYBIND11_MODULE(_C, m) {
  using namespace xacc;
  using xacc::python::PyModule;
  m.doc() = "xacc core: graph IR, passes, interpreter";

  py::class_<PyModule, std::shared_ptr<PyModule>>(m, "Module")
      .def("print", [](const PyModule& pm, bool locs) { return ir::printModule(*pm.module, {locs}); },
           py::arg("locations") = true)
      .def("__str__", [](const PyModule& pm) { return ir::printModule(*pm.module); })
      .def("verify", &python::verify)
      .def("run_passes", &python::runPasses, py::arg("pipeline"), py::arg("verify_each") = false,
           py::arg("options") = std::map<std::string, std::string>{})
      .def("amp_regions", &python::ampRegions, py::arg("graph"))
      .def("to_dot", [](const PyModule& pm) { return ir::printDot(*pm.module); })
      .def("clone", &PyModule::clone)
      .def("interpret", &python::interpret, py::arg("graph"), py::arg("args") = py::list())
      .def("grad", &python::grad, py::arg("graph"), py::arg("wrt") = py::list(),
           py::arg("seed_params") = false, py::arg("name") = "")
      .def_property_readonly("graph_names",
                             [](const PyModule& pm) {
                               std::vector<std::string> names;
                               for (auto& g : pm.module->graphs()) names.push_back(g->name());
                               return names;
                             })
      .def_property_readonly("num_nodes", [](const PyModule& pm) { return pm.module->totalNodes(); })
      .def_property_readonly("op_names", [](const PyModule& pm) {
        // Every node's op, regions included (ctrl.if arms, loop bodies).
        std::set<std::string> names;
        std::function<void(const ir::Graph&)> visit = [&](const ir::Graph& g) {
          for (ir::Node* n : g) {
            names.insert(std::string(n->opName()));
            for (const auto& r : n->regions()) visit(*r);
          }
        };
        for (const auto& g : pm.module->graphs()) visit(*g);
        return std::vector<std::string>(names.begin(), names.end());
      });

  m.def("parse", &python::parse, py::arg("text"), py::arg("filename") = "<string>",
        "Parse GIR text; raises xacc.CompileError with located diagnostics.");
  m.def("parse_type", [](const std::string& text) {
    std::string err;
    ir::Type t = ir::parseType(text, &err);
    if (!t) throw py::value_error(err);
    return t.str();
  });
  m.def("ops", []() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const ir::OpInfo* op : ir::OpRegistry::get().all()) out.emplace_back(op->name, op->summary);
    return out;
  });
  m.def("passes", []() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const passes::PassInfo& p : passes::passRegistry()) out.emplace_back(p.name, p.description);
    return out;
  });

  m.attr("has_aten") = false;
  python::bindLazyModules(m);  // has_mlir, xacc._C.mlir (Note [Lazy backend modules])
  if (bindAten) bindAten(m);
  if (bindCapture) bindCapture(m);
  if (bindCamel) bindCamel(m);
}
