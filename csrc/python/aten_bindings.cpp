// Tensor support for xacc._C when the ATen component is linked: torch.Tensor
// <-> tensor datum conversion without copies (the datum shares the tensor and
// its autograd state), and registration of the `aten.*` op family so GIR text
// with tensor ops parses, verifies and interprets from Python.
#ifdef XACC_ATEN_AVAILABLE

#include <torch/csrc/autograd/python_variable.h>

#include "Bindings.h"
#include "xacc/backend/aten/AtenOps.h"
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
}

#endif  // XACC_ATEN_AVAILABLE
