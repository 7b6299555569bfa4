// Kernel work estimates (estimateKernelWork) and the row-split check
// (splittableOverDim0) over kernel IR, for the decision to split a kernel over
// rows (Executable*.cpp). No torch, no MLIR.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "KernelIR.h"

namespace xacc::backend::mlir {

using ir::DType;

/// Whether kernel outputs can be computed chunk by chunk over dim 0: every
/// output shares dim 0 of the iteration space and nothing reduces over dim 0
/// or reads across rows of it (views that move dim 0 or reductions over it).
bool splittableOverDim0(const KernelIR& k) {
  if (k.outputs.empty()) return false;
  const auto& s0 = k.at(k.outputs[0]).shape;
  if (s0.empty() || s0[0] < 2) return false;
  for (int o : k.outputs)
    if (k.at(o).shape.size() != s0.size() || k.at(o).shape[0] != s0[0]) return false;
  for (const KNode& n : k.nodes) {
    // A view keeps rows apart when its dim 0 is its argument's dim 0, read
    // plainly (no scale, offset or crop), and no other dim of the argument
    // depends on it: pooling windows x[:, :, i*s + a, j*s + b] over [N, C, H,
    // W], the conv block's bn -> gelu -> max_pool2d. Views that move, merge or
    // slice dim 0 (transposes to dim 0, select/index of a row) are not split.
    if (n.kind == KNode::View) {
      const KNode& arg = k.at(n.args[0]);
      // Lower-rank views of lower-rank values (per-channel parameters
      // reshaped to [C, 1, 1]) broadcast along dim 0: row-independent.
      if (n.shape.size() < s0.size() && arg.shape.size() < s0.size()) continue;
      if (n.shape.size() != s0.size() || arg.shape.size() != s0.size() || n.shape[0] != s0[0] ||
          arg.shape[0] != s0[0] || n.viewIndex.empty() || n.viewIndex[0].dim != 0 || n.viewIndex[0].mul != 1 ||
          n.viewIndex[0].add != 0)
        return false;
      for (size_t j = 1; j < n.viewIndex.size(); ++j)
        if (n.viewIndex[j].dim == 0) return false;
      continue;
    }
    if (n.kind == KNode::Reduce) {
      // Row-wise reductions (not over dim 0, same rank outputs) stay within a chunk.
      if (!n.keepDim || n.shape.size() != s0.size() || n.dims.empty() || n.dims[0] == 0) return false;
    }
    if ((n.kind == KNode::Map || n.kind == KNode::Reduce) && n.shape.size() == s0.size() && n.shape[0] != s0[0] &&
        n.shape[0] != 1)
      return false;
    if (n.kind == KNode::Input && n.shape.size() == s0.size() && n.shape[0] != s0[0] && n.shape[0] != 1) return false;
    // An index value that depends on row positions would read chunk-relative
    // row indices in a split kernel.
    if (n.kind == KNode::Iota && n.shape.size() == s0.size() && !n.coef.empty() && n.coef[0] != 0) return false;
  }
  return true;
}

namespace {


/// Estimated floating-point work of one element of a Map op, in vector-lane
/// operations after fastMath lowering (MathApprox.cpp's uop counts for exp,
/// tanh, erf and sigmoid's divide; MLIR's polynomial approximations for the
/// other functions; a divide or square root without the fast form occupies
/// the divider for several cycles).
int64_t bytesOf(DType d) {
  switch (d) {
    case DType::Bool: case DType::I8: case DType::U8: return 1;
    case DType::F16: case DType::BF16: case DType::I16: return 2;
    case DType::F32: case DType::I32: return 4;
    case DType::C128: return 16;
    default: return 8;
  }
}

double mapOpCost(const std::string& op) {
  static const std::unordered_map<std::string, double> cost = {
      {"exp", 14},   {"exp2", 14},  {"expm1", 20}, {"tanh", 18},  {"erf", 19},   {"erfc", 24},
      {"log", 20},   {"log1p", 24}, {"log2", 20},  {"log10", 20}, {"sin", 24},   {"cos", 24},
      {"tan", 30},   {"atan", 24},  {"asin", 30},  {"acos", 30},  {"atan2", 30}, {"sinh", 30},
      {"cosh", 30},  {"pow", 40},   {"div", 8},    {"sqrt", 8},   {"rsqrt", 8},  {"fmod", 10},
      {"floordiv", 10}};
  auto it = cost.find(op);
  return it == cost.end() ? 1.0 : it->second;
}

}  // namespace

KernelWork estimateKernelWork(const KernelIR& k) {
  KernelWork w;
  if (k.outputs.empty()) return w;
  double outElems = static_cast<double>(std::max<int64_t>(1, numelOf(k.at(k.outputs[0]).shape)));
  for (const KInput& in : k.inputs) w.bytesPerElement += numelOf(in.shape) * bytesOf(in.dtype) / outElems;
  for (int o : k.outputs) w.bytesPerElement += numelOf(k.at(o).shape) * bytesOf(k.at(o).dtype) / outElems;
  for (const KNode& n : k.nodes) {
    if (n.kind == KNode::Map) w.opsPerElement += mapOpCost(n.op) * numelOf(n.shape) / outElems;
    if (n.kind == KNode::Reduce) w.opsPerElement += numelOf(k.at(n.args[0]).shape) / outElems;
  }
  // One element of a plain f32 copy moves 8 bytes; measured on this
  // machine's AVX-512 cores (one thread, pointwise.py), that takes about as
  // long as 12 lane-operations of a fused body (0.33 ns vs 0.025 ns each).
  w.copyElements = numelOf(k.at(k.outputs[0]).shape) * (w.bytesPerElement / 8.0 + w.opsPerElement / 12.0);
  return w;
}

}  // namespace xacc::backend::mlir
