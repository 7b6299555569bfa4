// Meta results of common ATen ops from libtorch's C++ meta functions; see
// Note [Native meta kernels]. A rule per op, keyed by its schema name; each
// calls the op's structured meta function (at::meta::<op>, the same code that
// sizes the CPU kernel's output) or, for the few ops without one, builds the
// result the way the CPU kernel does, only in the cases where that is plain.
//
// Note [Native meta kernels]: in a Python process, `import torch` runs
// torch._meta_registrations.activate_meta, which registers a Python meta kernel
// (a decomposition or a reference) over the C++ one for most ATen ops: on this
// torch (2.13) even aten::add.Tensor and aten::addmm dispatch to Python on meta
// tensors ("Meta (inactive)" for the C++ kernel in torch._C._dispatch_dump).
// Those Python kernels call torch._check and torch._prims_common helpers whose
// first call imports sympy and torch.fx.experimental.symbolic_shapes: ~490
// modules, ~35 MiB and ~2 s under load on the first capture of a process,
// which plain Python never pays. The capture recorder (recorder.py) runs every
// op it records on meta tensors, so it first asks this table, which calls the
// C++ meta computation directly (no dispatcher, no Python): its results are
// what the CPU kernel allocates, so sizes, strides and dtypes are eager's.
// Ops not in the table, and argument cases a rule does not claim (it returns
// false), run the registered (Python) meta kernel as before.
// tests/python/capture/test_native_meta.py checks every rule against a run of
// the op on CPU tensors and against torch's Python meta kernel.
#include "xacc/backend/aten/NativeMeta.h"

#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ops/_log_softmax_meta_dispatch.h>
#include <ATen/ops/_softmax_meta_dispatch.h>
#include <ATen/ops/add_meta_dispatch.h>
#include <ATen/ops/addmm_meta_dispatch.h>
#include <ATen/ops/amax_meta_dispatch.h>
#include <ATen/ops/argmax_meta_dispatch.h>
#include <ATen/ops/baddbmm_meta_dispatch.h>
#include <ATen/ops/bitwise_and_meta_dispatch.h>
#include <ATen/ops/bitwise_not_meta_dispatch.h>
#include <ATen/ops/bmm_meta_dispatch.h>
#include <ATen/ops/cat_meta_dispatch.h>
#include <ATen/ops/clamp_min_meta_dispatch.h>
#include <ATen/ops/div_meta_dispatch.h>
#include <ATen/ops/eq_meta_dispatch.h>
#include <ATen/ops/exp_meta_dispatch.h>
#include <ATen/ops/gather_meta_dispatch.h>
#include <ATen/ops/ge_meta_dispatch.h>
#include <ATen/ops/gelu_meta_dispatch.h>
#include <ATen/ops/gt_meta_dispatch.h>
#include <ATen/ops/index_copy_meta_dispatch.h>
#include <ATen/ops/le_meta_dispatch.h>
#include <ATen/ops/log_meta_dispatch.h>
#include <ATen/ops/lt_meta_dispatch.h>
#include <ATen/ops/maximum_meta_dispatch.h>
#include <ATen/ops/mean_meta_dispatch.h>
#include <ATen/ops/minimum_meta_dispatch.h>
#include <ATen/ops/mm_meta_dispatch.h>
#include <ATen/ops/mul_meta_dispatch.h>
#include <ATen/ops/ne_meta_dispatch.h>
#include <ATen/ops/neg_meta_dispatch.h>
#include <ATen/ops/rsqrt_meta_dispatch.h>
#include <ATen/ops/sigmoid_meta_dispatch.h>
#include <ATen/ops/silu_meta_dispatch.h>
#include <ATen/ops/sqrt_meta_dispatch.h>
#include <ATen/ops/sub_meta_dispatch.h>
#include <ATen/ops/sum_meta_dispatch.h>
#include <ATen/ops/tanh_meta_dispatch.h>
#include <ATen/ops/tril_meta_dispatch.h>
#include <ATen/ops/triu_meta_dispatch.h>

#include <functional>
#include <unordered_map>

namespace xacc::backend::aten {

namespace {

using Args = c10::ArrayRef<c10::IValue>;
/// Pushes the results for `a` (the op's arguments) onto `out`; false when the
/// rule does not claim these arguments.
using Rule = std::function<bool(Args a, torch::jit::Stack& out)>;

struct Entry {
  size_t nargs;
  Rule rule;
};

const at::Tensor& t(Args a, size_t i) { return a[i].toTensor(); }

bool push(torch::jit::Stack& out, at::Tensor r) {
  out.emplace_back(std::move(r));
  return true;
}

/// A Scalar as the 0-dim wrapped-number tensor the `.Scalar` overloads hand
/// to their `.Tensor` forms (at::mul(self, wrapped_scalar_tensor(other)), ...).
at::Tensor wrapped(const at::Scalar& s) {
  at::Tensor w = at::scalar_tensor(s, at::TensorOptions().dtype(s.type()).device(c10::kMeta));
  w.unsafeGetTensorImpl()->set_wrapped_number(true);
  return w;
}

/// An `int[]?` argument: nullopt for None.
std::optional<std::vector<int64_t>> intsOrNone(const c10::IValue& v) {
  if (v.isNone()) return std::nullopt;
  return v.toIntVector();
}

#define XACC_UNARY(op) {"aten::" #op ".default", {1, [](Args a, torch::jit::Stack& o) { return push(o, at::meta::op(t(a, 0))); }}}
#define XACC_BINARY(op, ov)                                                                                    \
  {"aten::" #op "." #ov, {2, [](Args a, torch::jit::Stack& o) { return push(o, at::meta::op(t(a, 0), t(a, 1))); }}}
#define XACC_COMPARE(op)                                                                                       \
  XACC_BINARY(op, Tensor), {"aten::" #op ".Scalar", {2, [](Args a, torch::jit::Stack& o) {                     \
                              return push(o, at::meta::op(t(a, 0), a[1].toScalar()));                          \
                            }}}

const std::unordered_map<std::string, Entry>& rules() {
  static const std::unordered_map<std::string, Entry> table = {
      {"aten::add.Tensor", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::add(t(a, 0), t(a, 1), a[2].toScalar()));
       }}},
      {"aten::sub.Tensor", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::sub(t(a, 0), t(a, 1), a[2].toScalar()));
       }}},
      {"aten::add.Scalar", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::add(t(a, 0), wrapped(a[1].toScalar()), a[2].toScalar()));
       }}},
      {"aten::sub.Scalar", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::sub(t(a, 0), wrapped(a[1].toScalar()), a[2].toScalar()));
       }}},
      {"aten::mul.Scalar", {2, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::mul(t(a, 0), wrapped(a[1].toScalar())));
       }}},
      {"aten::div.Scalar", {2, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::div(t(a, 0), wrapped(a[1].toScalar())));
       }}},
      XACC_BINARY(mul, Tensor),
      XACC_BINARY(div, Tensor),
      XACC_BINARY(bitwise_and, Tensor),
      XACC_BINARY(maximum, default),
      XACC_BINARY(minimum, default),
      XACC_BINARY(mm, default),
      XACC_BINARY(bmm, default),
      XACC_COMPARE(le), XACC_COMPARE(ge), XACC_COMPARE(lt), XACC_COMPARE(gt), XACC_COMPARE(eq), XACC_COMPARE(ne),
      {"aten::addmm.default", {5, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::addmm(t(a, 0), t(a, 1), t(a, 2), a[3].toScalar(), a[4].toScalar()));
       }}},
      {"aten::baddbmm.default", {5, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::baddbmm(t(a, 0), t(a, 1), t(a, 2), a[3].toScalar(), a[4].toScalar()));
       }}},
      {"aten::_softmax.default", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::_softmax(t(a, 0), a[1].toInt(), a[2].toBool()));
       }}},
      {"aten::_log_softmax.default", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::_log_softmax(t(a, 0), a[1].toInt(), a[2].toBool()));
       }}},
      {"aten::gelu.default", {2, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::gelu(t(a, 0), a[1].toStringView()));
       }}},
      XACC_UNARY(tanh), XACC_UNARY(exp), XACC_UNARY(log), XACC_UNARY(neg), XACC_UNARY(bitwise_not),
      XACC_UNARY(sigmoid), XACC_UNARY(rsqrt), XACC_UNARY(sqrt), XACC_UNARY(silu),
      // relu's CPU kernel is clamp_min(self, 0) after refusing bool inputs.
      {"aten::relu.default", {1, [](Args a, torch::jit::Stack& o) {
         if (t(a, 0).scalar_type() == at::kBool) return false;
         return push(o, at::meta::clamp_min(t(a, 0), 0));
       }}},
      // abs's CPU kernel fills a unary TensorIterator's output, sized and
      // strided as neg's (also a unary TensorIterator op); bool (no kernel) and
      // complex (a real result) are declined.
      {"aten::abs.default", {1, [](Args a, torch::jit::Stack& o) {
         if (t(a, 0).scalar_type() == at::kBool || at::isComplexType(t(a, 0).scalar_type())) return false;
         return push(o, at::meta::neg(t(a, 0)));
       }}},
      // sum(self, dtype) is sum over every dim: sum.dim_IntList with an empty dim list.
      {"aten::sum.default", {2, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::sum(t(a, 0), at::OptionalIntArrayRef(at::IntArrayRef{}), false,
                                      a[1].toOptional<at::ScalarType>()));
       }}},
      {"aten::amax.default", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::amax(t(a, 0), a[1].toIntVector(), a[2].toBool()));
       }}},
      // max(self): the CPU kernel checks numel() > 0 and fills a 0-dim tensor of
      // self's dtype (max_all); complex (no kernel) is declined.
      {"aten::max.default", {1, [](Args a, torch::jit::Stack& o) {
         if (t(a, 0).numel() == 0 || at::isComplexType(t(a, 0).scalar_type())) return false;
         return push(o, at::empty({}, t(a, 0).options()));
       }}},
      {"aten::argmax.default", {3, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::argmax(t(a, 0), a[1].toOptional<int64_t>(), a[2].toBool()));
       }}},
      {"aten::sum.dim_IntList", {4, [](Args a, torch::jit::Stack& o) {
         auto dim = intsOrNone(a[1]);
         return push(o, at::meta::sum(t(a, 0), dim ? at::OptionalIntArrayRef(*dim) : std::nullopt, a[2].toBool(),
                                      a[3].toOptional<at::ScalarType>()));
       }}},
      {"aten::mean.dim", {4, [](Args a, torch::jit::Stack& o) {
         auto dim = intsOrNone(a[1]);
         return push(o, at::meta::mean(t(a, 0), dim ? at::OptionalIntArrayRef(*dim) : std::nullopt, a[2].toBool(),
                                       a[3].toOptional<at::ScalarType>()));
       }}},
      // mean(self, dtype) is mean over every dim: mean.dim with an empty dim list.
      {"aten::mean.default", {2, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::mean(t(a, 0), at::OptionalIntArrayRef(at::IntArrayRef{}), false,
                                       a[1].toOptional<at::ScalarType>()));
       }}},
      // masked_fill: self expanded with mask, cloned contiguous, filled in place.
      // A mask that is not bool is declined (torch's kernel raises).
      {"aten::masked_fill.Scalar", {3, [](Args a, torch::jit::Stack& o) {
         const at::Tensor& self = t(a, 0);
         if (t(a, 1).scalar_type() != at::kBool) return false;
         return push(o, at::empty(at::infer_size(self.sizes(), t(a, 1).sizes()), self.options(),
                                  at::MemoryFormat::Contiguous));
       }}},
      {"aten::gather.default", {4, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::gather(t(a, 0), a[1].toInt(), t(a, 2), a[3].toBool()));
       }}},
      {"aten::index_copy.default", {4, [](Args a, torch::jit::Stack& o) {
         return push(o, at::meta::index_copy(t(a, 0), a[1].toInt(), t(a, 2), t(a, 3)));
       }}},
      {"aten::tril.default", {2, [](Args a, torch::jit::Stack& o) { return push(o, at::meta::tril(t(a, 0), a[1].toInt())); }}},
      {"aten::triu.default", {2, [](Args a, torch::jit::Stack& o) { return push(o, at::meta::triu(t(a, 0), a[1].toInt())); }}},
      {"aten::cat.default", {2, [](Args a, torch::jit::Stack& o) {
         std::vector<at::Tensor> ts = a[0].toTensorVector();
         return push(o, at::meta::cat(ts, a[1].toInt()));
       }}},
      // layer_norm_cpu: Y = empty_like(X, contiguous); mean and rstd are [M]
      // tensors of the statistics' dtype viewed as X's leading dims followed by
      // ones. Claimed only when weight and bias are absent or of X's dtype (the
      // statistics then have X's dtype) and every size check passes; anything
      // else (mixed dtypes, a bad shape and its error) runs torch's kernel.
      {"aten::native_layer_norm.default", {5, [](Args a, torch::jit::Stack& o) {
         const at::Tensor& x = t(a, 0);
         std::vector<int64_t> norm = a[1].toIntVector();
         int64_t axis = x.dim() - static_cast<int64_t>(norm.size());
         if (norm.empty() || axis < 0 || !at::isFloatingType(x.scalar_type())) return false;
         for (size_t i = 0; i < norm.size(); ++i)
           if (x.size(axis + static_cast<int64_t>(i)) != norm[i]) return false;
         for (int k : {2, 3}) {
           if (a[k].isNone()) continue;
           const at::Tensor& p = a[k].toTensor();
           if (p.scalar_type() != x.scalar_type() || p.sizes() != at::IntArrayRef(norm)) return false;
         }
         std::vector<int64_t> stat(x.sizes().begin(), x.sizes().begin() + axis);
         stat.resize(x.dim(), 1);
         auto opts = x.options();
         o.emplace_back(at::empty(x.sizes(), opts, at::MemoryFormat::Contiguous));
         o.emplace_back(at::empty(stat, opts));
         o.emplace_back(at::empty(stat, opts));
         return true;
       }}},
  };
  return table;
}

#undef XACC_UNARY
#undef XACC_BINARY
#undef XACC_COMPARE

}  // namespace

bool runNativeMeta(const std::string& name, const std::string& overload, torch::jit::Stack& stack) {
  const auto& table = rules();
  auto it = table.find(name + "." + (overload.empty() ? std::string("default") : overload));
  if (it == table.end() || stack.size() < it->second.nargs) return false;
  size_t n = it->second.nargs;
  for (size_t i = stack.size() - n; i < stack.size(); ++i)
    if (stack[i].isTensor() && !stack[i].toTensor().is_meta()) return false;
  torch::jit::Stack out;
  if (!it->second.rule(Args(stack).slice(stack.size() - n), out)) return false;
  stack.resize(stack.size() - n);
  for (auto& v : out) stack.push_back(std::move(v));
  return true;
}

std::vector<std::string> nativeMetaOps() {
  std::vector<std::string> names;
  for (const auto& [k, _] : rules()) names.push_back(k);
  return names;
}

}  // namespace xacc::backend::aten
