// Note [Native training runner]
//
// The runner of a training graph (Note [Training runner] in CacheEntry.h,
// xacc/_src/capture/training.py) in C++: the compiled forward graph run inside
// a libtorch custom autograd function (torch::autograd::Function), whose node
// runs the compiled backward graph. It does what the Python
// `CompiledGraphFunction` did, with the same autograd semantics, because the
// wrapping of outputs, non-differentiable marks, saved-variable checks and
// zero-filled missing cotangents are libtorch's own code in both
// (_wrap_outputs, AutogradContext, CppNode_apply_functional):
//
// * forward, grad mode on: the tensor inputs become the node's edges; the
//   forward graph runs with grad mode off; the results that are not
//   differentiable (no cotangent, no input dependence, or not floating point)
//   are marked so; the saved inputs and residuals are saved (tensors as saved
//   variables, the rest as IValues);
// * backward: saved values, one cotangent per differentiable result
//   (contiguous), residuals -> one gradient per input in `wrt`. It runs with no
//   Python at all (the graph's IValue entry, CompiledGraph::runValues), on the
//   engine's thread without the GIL. Under create_graph its results get a
//   DelayedError node: the compiled backward records no history (it reads
//   residuals the forward computed without any), so differentiating it again
//   raises instead of silently missing the second-order terms (the Python
//   runner's once_differentiable did that only when a cotangent required grad:
//   torch.autograd.grad(y, x, create_graph=True) gave a gradient with no
//   history, and a second backward through it dropped x's terms);
// * grad mode off: the forward graph alone, its first n_results values.
//
// Why: the Python runner's interpreter work (Function.apply's argument
// handling, sorting the saved values, the results' metadata, the backward's
// unpacking) is paid per call, and a DDP step pays it once per bucket piece.
// Measured (session 30, one process, the MLP of benchmarks/distributed, one
// thread, medians of 300 interleaved steps, thread CPU above eager's in the
// same process, two processes each): Python runner forward +114/+170 us,
// backward +223/+417 us; this runner forward -7/+9 us, backward +38/+95 us.
// Graphs with a non-tensor result keep the Python runner (training.py decides).

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/python_variable.h>

#include <atomic>
#include <string>
#include <vector>

#include "xacc/capture/Backend.h"
#include "xacc/capture/CacheEntry.h"
#include "xacc/ir/Graph.h"

namespace py = pybind11;
namespace cap = xacc::capture;

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// Runs of the compiled forwards (under grad mode) and backwards of every
/// runner, merged into xacc.jit.counters() (training.py).
std::atomic<uint64_t> gForwardRuns{0}, gBackwardRuns{0};

/// What every call of one runner shares.
struct RunnerState : torch::CustomClassHolder {
  std::shared_ptr<cap::CompiledGraph> fwd, bwd;
  size_t numInputs = 0;
  size_t numResults = 0;
  std::vector<size_t> wrt;      ///< graph inputs that get a gradient
  std::vector<size_t> saved;    ///< graph inputs the backward reads, in its order
  std::vector<int8_t> diff;     ///< per result: has a cotangent and requires grad
  std::vector<size_t> cotIdx;   ///< results with a cotangent, in the backward's order
  std::string name;
};

/// One forward call's Python inputs, and where its tensors sit.
struct Call {
  PyObject* const* inputs = nullptr;
  size_t n = 0;
  std::vector<int> tensorPos;  ///< per input: index among the tensor inputs, or -1
};

/// A failed forward run (the GIL held): the error eager raises for it.
[[noreturn]] void raiseRunFailure(const std::string& error) {
  if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, error.c_str());
  cap::raiseAsEager();  // Note [ATen error translation]
  throw py::error_already_set();
}

/// A failed backward run (no GIL): the op's own exception when one was noted.
[[noreturn]] void throwRunFailure(std::string error, const std::exception_ptr& escaped) {
  if (escaped) std::rethrow_exception(escaped);
  std::string noted;
  if (std::exception_ptr cause = cap::takeRunFailure(noted)) std::rethrow_exception(cause);
  throw std::runtime_error("xacc: the compiled backward failed: " + error);
}

struct GraphFunction : torch::autograd::Function<GraphFunction> {
  static variable_list forward(AutogradContext* ctx, const c10::intrusive_ptr<RunnerState>& st, Call* call,
                               at::TensorList tensors) {
    std::vector<c10::IValue> outs;
    std::string error;
    if (!st->fwd->run(call->inputs, call->n, outs, error)) raiseRunFailure(error);
    gForwardRuns.fetch_add(1, std::memory_order_relaxed);
    variable_list results, nondiff;
    for (size_t i = 0; i < st->numResults; ++i) {
      const at::Tensor& t = outs[i].toTensor();
      results.push_back(t);
      if (!st->diff[i] || !t.is_floating_point()) nondiff.push_back(t);
    }
    if (!nondiff.empty()) ctx->mark_non_differentiable(nondiff);
    // The backward's leading values (saved inputs), then the residuals.
    variable_list toSave;
    c10::impl::GenericList others(c10::AnyType::get());
    auto keep = [&](c10::IValue v) {
      if (v.isTensor()) {
        toSave.push_back(v.toTensor());
        others.push_back(c10::IValue());
      } else {
        toSave.emplace_back();
        others.push_back(std::move(v));
      }
    };
    for (size_t i : st->saved) {
      if (call->tensorPos[i] >= 0) {
        keep(tensors[call->tensorPos[i]]);
        continue;
      }
      c10::IValue v;
      if (!cap::pythonToIValue(call->inputs[i], v, error)) throw py::value_error(error);
      keep(std::move(v));
    }
    for (size_t i = st->numResults; i < outs.size(); ++i) keep(outs[i]);
    ctx->save_for_backward(toSave);
    ctx->saved_data["s"] = c10::IValue::make_capsule(st);
    ctx->saved_data["o"] = std::move(others);
    std::vector<int64_t> wrtPos;
    for (size_t i : st->wrt) wrtPos.push_back(call->tensorPos[i]);
    ctx->saved_data["w"] = std::move(wrtPos);
    ctx->saved_data["n"] = static_cast<int64_t>(tensors.size());
    return results;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto st = c10::static_intrusive_pointer_cast<RunnerState>(ctx->saved_data["s"].toCapsule());
    variable_list saved = ctx->get_saved_variables();
    c10::List<c10::IValue> others = ctx->saved_data["o"].toList();
    std::vector<int64_t> wrtPos = ctx->saved_data["w"].toIntVector();
    const size_t numSaved = st->saved.size();
    std::vector<c10::IValue> args;
    args.reserve(saved.size() + st->cotIdx.size());
    auto slot = [&](size_t k) {
      if (saved[k].defined()) {
        args.emplace_back(saved[k]);
      } else {
        args.push_back(others.get(k));
      }
    };
    for (size_t k = 0; k < numSaved; ++k) slot(k);
    for (size_t i : st->cotIdx) {  // zero-filled when missing (materialize_grads)
      at::Tensor g = grads[i];
      args.emplace_back(g.is_contiguous() ? g : g.contiguous());
    }
    for (size_t k = numSaved; k < saved.size(); ++k) slot(k);
    bool createGraph = at::GradMode::is_enabled();
    std::vector<c10::IValue> d;
    std::string error;
    std::exception_ptr escaped;
    {
      at::AutoGradMode off(false);
      if (!st->bwd->runValues(std::move(args), d, error, escaped)) throwRunFailure(error, escaped);
    }
    gBackwardRuns.fetch_add(1, std::memory_order_relaxed);
    if (d.size() != st->wrt.size())
      throw std::runtime_error("xacc: the compiled backward of " + st->name + " returned " +
                               std::to_string(d.size()) + " gradients for " + std::to_string(st->wrt.size()) +
                               " inputs");
    // One gradient per forward argument: the state and the call, then the tensors.
    variable_list out(2 + static_cast<size_t>(ctx->saved_data["n"].toInt()));
    for (size_t j = 0; j < d.size(); ++j)
      if (d[j].isTensor() && wrtPos[j] >= 0) out[2 + static_cast<size_t>(wrtPos[j])] = d[j].toTensor();
    if (createGraph) {
      variable_list defined;
      std::vector<size_t> where;
      for (size_t i = 0; i < out.size(); ++i)
        if (out[i].defined()) {  // Python's once_differentiable does the same
          defined.push_back(out[i].detach().requires_grad_(true));
          where.push_back(i);
        }
      auto err = c10::make_intrusive<torch::autograd::DelayedError>(
          "xacc: trying to differentiate twice through a compiled backward (" + st->name +
              "), which records no history",
          static_cast<int64_t>(defined.size()));
      variable_list wrapped = (*err)(std::move(defined));
      for (size_t k = 0; k < where.size(); ++k) out[where[k]] = wrapped[k];
    }
    return out;
  }
};

/// The runner: called with the graph's inputs, returns the tuple of its results.
class TrainingRunner {
public:
  explicit TrainingRunner(c10::intrusive_ptr<RunnerState> st) : st_(std::move(st)) {}

  py::tuple call(py::args args) const {
    const size_t n = args.size();
    if (n != st_->numInputs)
      throw py::type_error("xacc: the training runner of " + st_->name + " takes " +
                           std::to_string(st_->numInputs) + " inputs, got " + std::to_string(n));
    Call call;
    std::vector<PyObject*> in(n);
    for (size_t i = 0; i < n; ++i) in[i] = args[i].ptr();
    call.inputs = in.data();
    call.n = n;
    if (!at::GradMode::is_enabled()) {  // guards key entries on grad mode; kept for direct calls
      std::vector<c10::IValue> outs;
      std::string error;
      if (!st_->fwd->run(call.inputs, n, outs, error)) raiseRunFailure(error);
      outs.resize(st_->numResults);
      return toTuple(outs);
    }
    std::vector<at::Tensor> tensors;
    call.tensorPos.assign(n, -1);
    for (size_t i = 0; i < n; ++i)
      if (THPVariable_Check(in[i])) {
        call.tensorPos[i] = static_cast<int>(tensors.size());
        tensors.push_back(THPVariable_Unpack(in[i]));
      }
    variable_list results = GraphFunction::apply(st_, &call, at::TensorList(tensors));
    py::tuple t(st_->numResults);
    for (size_t i = 0; i < st_->numResults; ++i)
      t[i] = py::reinterpret_steal<py::object>(THPVariable_Wrap(results[i]));
    return t;
  }

  const c10::intrusive_ptr<RunnerState>& state() const { return st_; }

private:
  static py::tuple toTuple(const std::vector<c10::IValue>& outs) {
    py::tuple t(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      PyObject* o = cap::ivalueToPython(outs[i]);
      if (!o) throw py::error_already_set();
      t[i] = py::reinterpret_steal<py::object>(o);
    }
    return t;
  }

  c10::intrusive_ptr<RunnerState> st_;
};

}  // namespace

void bindTrainingRunner(py::module_& c) {
  py::class_<TrainingRunner>(c, "TrainingRunner",
                             "The runner of a training graph in C++ (Note [Native training runner]).")
      .def(py::init([](std::shared_ptr<cap::CompiledGraph> fwd, std::shared_ptr<cap::CompiledGraph> bwd,
                       size_t numInputs, std::vector<size_t> wrt, size_t numResults, std::vector<size_t> saved,
                       std::vector<bool> cot, std::vector<bool> req, std::string name) {
             size_t k = 0;
             for (xacc::ir::Value* v : fwd->graph().results()) {
               if (v->type().isToken()) continue;
               if (k++ < numResults && !v->type().isTensor())
                 throw py::value_error("a result of type " + v->type().str() + " (the Python runner handles it)");
             }
             auto st = c10::make_intrusive<RunnerState>();
             st->fwd = std::move(fwd);
             st->bwd = std::move(bwd);
             st->numInputs = numInputs;
             st->numResults = numResults;
             st->wrt = std::move(wrt);
             st->saved = std::move(saved);
             for (size_t i = 0; i < cot.size(); ++i) {
               st->diff.push_back(cot[i] && i < req.size() && req[i]);
               if (cot[i]) st->cotIdx.push_back(i);
             }
             st->name = std::move(name);
             return TrainingRunner(std::move(st));
           }),
           py::arg("forward"), py::arg("backward"), py::arg("num_inputs"), py::arg("wrt"), py::arg("num_results"),
           py::arg("saved"), py::arg("cot"), py::arg("req"), py::arg("name"))
      .def("__call__", &TrainingRunner::call)
      .def_property_readonly("forward_graph", [](const TrainingRunner& r) { return r.state()->fwd; })
      .def_property_readonly("backward_graph", [](const TrainingRunner& r) { return r.state()->bwd; })
      .def_property_readonly("name", [](const TrainingRunner& r) { return r.state()->name; });
  c.def("training_runner_runs", [] { return py::make_tuple(gForwardRuns.load(), gBackwardRuns.load()); },
        "(compiled forward runs, compiled backward runs) of every TrainingRunner since the last reset.");
  c.def("reset_training_runner_runs", [] {
    gForwardRuns = 0;
    gBackwardRuns = 0;
  });
}
