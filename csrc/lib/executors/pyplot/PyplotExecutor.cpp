// The `pyplot` executor: the standard module `pyplot` (spec 15.19),
// `plot(data: number[], filename?: string)`, drawn by matplotlib through the
// python executor's interpreter (it depends on `python`). Plots are rendered
// headless with the Agg backend (selected before pyplot is first imported, so
// no display is needed) and saved to the file, `plot.png` by default; a
// relative file name is relative to the working directory. Each call draws
// one new figure and closes it.
#include "../python/PyValues.h"
#include "StdlibImpl.h"
#include "xacc/camel/Executor.h"

#include <mutex>

namespace xacc::executors::python {
namespace {

using camel::stdlib::Datums;
using camel::stdlib::Def;
using camel::stdlib::Types;
using ir::Datum;
using ir::Interpreter;
using ir::Node;
using ir::Type;

constexpr const char* kDrawPlot =
    "def _camel_plot(data, filename):\n"
    "    import matplotlib\n"
    "    if 'matplotlib.pyplot' not in __import__('sys').modules:\n"
    "        matplotlib.use('Agg')\n"
    "    import matplotlib.pyplot as plt\n"
    "    fig = plt.figure()\n"
    "    try:\n"
    "        plt.plot(data)\n"
    "        fig.savefig(filename)\n"
    "    finally:\n"
    "        plt.close(fig)\n";

bool plotFn(Interpreter& I, const Node& n, Datums& a, Datums& r) {
  std::vector<Datum>* xs = nullptr;
  if (!camel::stdlib::getList(I, n, "pyplot::plot", a[0], xs)) return false;
  std::vector<double> values;
  for (const Datum& d : *xs) {
    double v;
    if (!camel::stdlib::getNum(I, n, "pyplot::plot", d, v)) return false;
    values.push_back(v);
  }
  std::string file = "plot.png";
  if (a.size() > 1) {
    const std::string* s = nullptr;
    if (!camel::stdlib::getStr(I, n, "pyplot::plot", a[1], s)) return false;
    file = *s;
  }
  Gil gil;
  static PyObject* draw = nullptr;
  if (!draw) {
    PyRef ns = PyRef::steal(PyDict_New());
    PyDict_SetItemString(ns.get(), "__builtins__", PyEval_GetBuiltins());
    PyRef ok = PyRef::steal(PyRun_String(kDrawPlot, Py_file_input, ns.get(), ns.get()));
    if (!ok) return camel::runtimeFail(I, n, camel::RuntimeDiag::PythonError, {"pyplot::plot", takePythonError()});
    draw = PyDict_GetItemString(ns.get(), "_camel_plot");
    Py_XINCREF(draw);
  }
  PyRef list = PyRef::steal(PyList_New(Py_ssize_t(values.size())));
  for (size_t i = 0; i < values.size(); ++i)
    PyList_SET_ITEM(list.get(), Py_ssize_t(i), PyFloat_FromDouble(values[i]));
  PyRef res = PyRef::steal(PyObject_CallFunction(draw, "Os", list.get(), file.c_str()));
  if (!res) return camel::runtimeFail(I, n, camel::RuntimeDiag::PythonError, {"pyplot::plot", takePythonError()});
  r.push_back(Datum());
  return true;
}

void registerPyplot() {
  Def plot = camel::stdlib::effectDef("pyplot", "plot", 1, "(data: number[], filename?: string): void",
                                      "draws a line plot with matplotlib and saves it (default plot.png)");
  plot.moreForms = {{0, 2, "(data: number[], filename: string): void"}};
  plot.params = camel::kVariadic;
  plot.infer = [](const Types& a, Types& r, std::string& err) {
    if (a.empty() || a.size() > 2) {
      err = "plot takes the data and an optional file name";
      return false;
    }
    bool listOk = a[0].isAny() || (a[0].kind() == ir::TypeKind::List &&
                                   (camel::stdlib::numLike(a[0].elementType())));
    if (!camel::stdlib::want(listOk, a, 0, "the data", "an array of numbers", err)) return false;
    if (a.size() == 2 && !camel::stdlib::want(camel::stdlib::strLike(a[1]), a, 1, "the file name", "a string", err))
      return false;
    r = {Type::null()};
    return true;
  };
  plot.fn = plotFn;
  camel::stdlib::define(std::move(plot));
}

}  // namespace
}  // namespace xacc::executors::python

XACC_CAMEL_EXECUTOR(pyplot) {
  if (!ctx->depend("python")) return false;
  static std::once_flag once;
  std::call_once(once, xacc::executors::python::registerPyplot);
  ctx->provideModule("pyplot");
  return true;
}
