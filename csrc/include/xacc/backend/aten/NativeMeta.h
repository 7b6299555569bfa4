// Meta results of common ATen ops from libtorch's C++ kernels, bypassing the
// Python meta kernels torch registers over them; see Note [Native meta kernels]
// in AtenNativeMeta.cpp.
#pragma once

#include <ATen/core/stack.h>

#include <string>
#include <vector>

namespace xacc::backend::aten {

/// Runs `op` ("aten::add", overload "Tensor"; "" for the default overload) on
/// the meta tensors of `stack` (its arguments in schema order, as the boxed
/// calling convention has them) through its C++ meta computation, leaving the
/// results on the stack. False, with the stack untouched, when `op` has no rule
/// here or its arguments are outside the cases the rule reproduces exactly.
/// Errors of the op (a shape mismatch, ...) are thrown as c10::Error.
bool runNativeMeta(const std::string& name, const std::string& overload, torch::jit::Stack& stack);

/// The ops with a rule, as "aten::name.overload" ("default" for the default).
std::vector<std::string> nativeMetaOps();

}  // namespace xacc::backend::aten
