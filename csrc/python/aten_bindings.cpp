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
#include "xacc/backend/aten/SkinnyGemm.h"
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
  // Note [Skinny matrix products] (SkinnyGemm.cpp): the kernels' result for
  // addmm (bias given) or mm, or None where the call keeps ATen's; for tests
  // and benchmarks/models/skinny_gemm.py.
  m.def(
      "skinny_gemm",
      [](py::handle a, py::handle b, py::handle bias, double beta, double alpha) -> py::object {
        if (!THPVariable_Check(a.ptr()) || !THPVariable_Check(b.ptr()) ||
            (!bias.is_none() && !THPVariable_Check(bias.ptr())))
          throw py::type_error("skinny_gemm: a, b (and bias) must be tensors");
        const at::Tensor& ta = THPVariable_Unpack(a.ptr());
        const at::Tensor& tb = THPVariable_Unpack(b.ptr());
        at::Tensor y = bias.is_none()
                           ? xacc::backend::aten::skinnyMm(ta, tb)
                           : xacc::backend::aten::skinnyAddmm(THPVariable_Unpack(bias.ptr()), ta, tb, beta, alpha);
        if (!y.defined()) return py::none();
        return py::reinterpret_steal<py::object>(THPVariable_Wrap(y));
      },
      py::arg("a"), py::arg("b"), py::arg("bias") = py::none(), py::arg("beta") = 1.0, py::arg("alpha") = 1.0);
  m.def("skinny_available", &xacc::backend::aten::skinnyAvailable);
  m.def("native_meta", [](const std::string& name, const std::string& overload, py::tuple args,
                          py::dict kwargs) -> py::object {
    auto op = c10::Dispatcher::singleton().findSchema({name, overload == "default" ? "" : overload});
    if (!op) return py::none();
    // A Python number passed for a Tensor argument (`x * 2.0` reaches a
    // dispatch mode as mul.Tensor(x, 2.0)) becomes what torch makes of it: a
    // 0-dim wrapped-number tensor (double, long or bool), here on meta.
    const auto& schema = op->schema();
    auto wrap = [](py::handle v) -> py::object {
      if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) {
        at::Scalar s = PyBool_Check(v.ptr())   ? at::Scalar(v.cast<bool>())
                       : PyLong_Check(v.ptr()) ? at::Scalar(v.cast<int64_t>())
                                               : at::Scalar(v.cast<double>());
        at::Tensor t = at::scalar_tensor(s, at::TensorOptions().dtype(s.type()).device(c10::kMeta));
        t.unsafeGetTensorImpl()->set_wrapped_number(true);
        return py::reinterpret_steal<py::object>(THPVariable_Wrap(t));
      }
      return py::reinterpret_borrow<py::object>(v);
    };
    auto isTensorArg = [](const c10::Argument& a) { return a.type()->kind() == c10::TypeKind::TensorType; };
    py::list pos;
    for (size_t i = 0; i < args.size(); ++i)
      pos.append(i < schema.arguments().size() && isTensorArg(schema.arguments()[i]) ? wrap(args[i]) : args[i]);
    py::dict kw;
    for (auto [k, v] : kwargs) {
      auto idx = schema.argumentIndexWithName(k.cast<std::string>());
      kw[k] = idx && isTensorArg(schema.arguments()[*idx]) ? wrap(v) : py::reinterpret_borrow<py::object>(v);
    }
    torch::jit::Stack stack;
    try {
      stack = torch::jit::createStackForSchema(schema, torch::jit::tuple_slice(py::tuple(pos)), py::kwargs(kw),
                                               std::nullopt);
    } catch (const std::exception&) {
      return py::none();  // arguments this conversion does not read: torch's kernel runs
    }
    if (!xacc::backend::aten::runNativeMeta(name, overload, stack)) return py::none();
    return torch::jit::createPyObjectForStack(std::move(stack));
  });
}

#endif  // XACC_ATEN_AVAILABLE
