// The `tensor` module of the ATen executor (spec 15.17). See TensorModule.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <string_view>

#include "xacc/ir/Datum.h"
#include "xacc/ir/Interpreter.h"

namespace xacc::exec::aten {

/// Registers type `Tensor`, the module's builtins and the tensor rendering.
void registerTensorModule();

/// A tensor operand: a tensor datum, a number (0-d) or nested arrays of
/// numbers (float64); reports a located error otherwise.
bool toTensor(ir::Interpreter& I, const ir::Node& n, std::string_view fn, const ir::Datum& d,
              at::Tensor& out);
/// A Camel tensor value: float64 (other dtypes are converted) or bool.
ir::Datum wrap(at::Tensor t);
/// Spec 7.3: nested rows, `[[1, 2], [3, 4]]`, numbers like Camel floats.
std::string tensorRows(const ir::Datum& d);

}  // namespace xacc::exec::aten
