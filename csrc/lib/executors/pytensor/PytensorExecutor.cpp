// The `pytensor` executor: tensor conversion between Camel and Python in the
// `camel` executable. Camel tensors (ATen executor datums) become the
// torch.Tensor objects that share them and back, without copies, through
// torch's own Python bindings (THPVariable_Wrap/Unpack, libtorch_python). The
// python executor loads it on the first tensor that crosses (PyValues.h:
// tensorBridge); it depends on `python` and `aten`, and imports torch in the
// interpreter so that torch's Python types exist. xacc._C sets the same
// bridge itself (it links torch_python).
#include <torch/csrc/autograd/python_variable.h>

#include "../python/PyValues.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/camel/Executor.h"

namespace xacc::executors::python {
namespace {

}  // namespace
}  // namespace xacc::executors::python

// Looked up with dlsym by the python executor once this executor is loaded
// (so this plugin calls none of that executor's functions).
extern "C" __attribute__((visibility("default"))) bool xacc_pytensor_to_datum(PyObject* o,
                                                                               xacc::ir::Datum& out) {
  if (!THPVariable_Check(o)) return false;
  out = xacc::backend::aten::makeTensorDatum(THPVariable_Unpack(o));
  return true;
}

extern "C" __attribute__((visibility("default"))) PyObject* xacc_pytensor_to_python(
    const xacc::ir::Datum& d) {
  return THPVariable_Wrap(xacc::backend::aten::tensorOf(d));
}

XACC_CAMEL_EXECUTOR(pytensor) {
  using namespace xacc::executors::python;
  if (!ctx->depend("python") || !ctx->depend("aten")) return false;
  {
    Gil gil;
    PyRef torch = PyRef::steal(PyImport_ImportModule("torch"));
    if (!torch) {
      PyErr_Clear();
      ctx->fail("cannot import torch in the embedded interpreter");
      return false;
    }
  }
  return true;
}
