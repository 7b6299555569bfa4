// Tensor support for xacc._C when the ATen component is linked: torch.Tensor
// <-> tensor datum conversion without copies (the datum shares the tensor and
// its autograd state), and registration of the `aten.*` op family so GIR text
// with tensor ops parses, verifies and interprets from Python.
#ifdef XACC_ATEN_AVAILABLE

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include "Bindings.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/NativeMeta.h"
#include "xacc/backend/aten/TensorDatum.h"

bool xaccTensorToDatum(py::handle obj, xacc::ir::Datum& out) {
  if (!THPVariable_Check(obj.ptr())) return false;
  out = xacc::backend::aten::makeTensorDatum(THPVariable_Unpack(obj.ptr()));
  return true;
}

py::object xaccDatumToTensor(const xacc::ir::Datum& d) {
  const at::Tensor& t = xacc::backend::aten::tensorOf(d);
  return py::reinterpret_steal<py::object>(THPVariable_Wrap(t));
}

void bindAten(py::module_& m) {
  xacc::backend::aten::registerAtenOps();
  m.attr("has_aten") = true;
  // Note [Native meta kernels] (AtenNativeMeta.cpp): the C++ meta result of a
  // common op, or None when the table has no rule for it or these arguments.
  m.def("native_meta_ops", &xacc::backend::aten::nativeMetaOps);
  m.def("native_meta", [](const std::string& name, const std::string& overload, py::tuple args,
                          py::dict kwargs) -> py::object {
    auto op = c10::Dispatcher::singleton().findSchema({name, overload == "default" ? "" : overload});
    if (!op) return py::none();
    torch::jit::Stack stack = torch::jit::createStackForSchema(
        op->schema(), torch::jit::tuple_slice(std::move(args)), py::kwargs(std::move(kwargs)), std::nullopt);
    if (!xacc::backend::aten::runNativeMeta(name, overload, stack)) return py::none();
    return torch::jit::createPyObjectForStack(std::move(stack));
  });
}

#endif  // XACC_ATEN_AVAILABLE
