// Note [Skinny matrix products] (SkinnyGemm.cpp): float32 matrix products whose
// left operand has a few rows, written to stream the right operand at memory
// bandwidth.
#pragma once

#include <ATen/core/Tensor.h>

namespace xacc::backend::aten {

/// Most rows of the left operand the skinny kernels take (see skinnyShape in the .cpp
/// for the rule by layout); above it ATen's GEMM is faster.
inline constexpr int64_t kSkinnyMaxRows = 128;

/// a @ b, or an undefined tensor when the call is not one the skinny kernels
/// take (the caller then calls ATen): see the Note for the conditions.
at::Tensor skinnyMm(const at::Tensor& a, const at::Tensor& b);

/// beta * bias + alpha * (a @ b), as at::addmm, or an undefined tensor.
at::Tensor skinnyAddmm(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b, const c10::Scalar& beta,
                       const c10::Scalar& alpha);

/// Whether this CPU runs the skinny kernels (they need AVX-512F).
bool skinnyAvailable();

}  // namespace xacc::backend::aten
