// Note [Direct ATen calls]: the ops a compiled graph leaves to ATen most often
// (views the kernels cannot express, matrix products) called through their C++
// functions instead of a boxed dispatcher call. A prepared node of one of these
// overloads, whose every non-tensor argument is a constant of the node
// (attribute or default) and whose tensor arguments are single tensor
// operands, keeps its constants unboxed (sizes as int64 vectors, scalars as
// c10::Scalar). A call is then the C++ function on the operands' tensors: the
// same operator through the same dispatcher (autograd, modes and all), without
// building an IValue stack, unboxing the sizes again and boxing the result.
// Every other overload, or an argument this does not model (a SymInt list that
// is not a constant, a non-default optional), keeps the boxed call.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_unsafe_view.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/detach.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/permute.h>
#include <ATen/ops/reshape.h>
#include <ATen/ops/t.h>
#include <ATen/ops/transpose.h>
#include <ATen/ops/unsqueeze.h>

#include <unordered_map>

#include "AtenOp.h"
#include "xacc/backend/aten/SkinnyGemm.h"

namespace xacc::backend::aten {

namespace {

using Kind = DirectCall::Kind;

/// The schema's name with its overload ("aten::transpose.int").
std::string keyOf(const c10::FunctionSchema& s) {
  return s.overload_name().empty() ? s.name() : s.name() + "." + s.overload_name();
}

struct Shape {
  Kind kind;
  std::vector<size_t> tensors;  ///< schema positions of the tensor operands, in order
};

const std::unordered_map<std::string, Shape>& shapes() {
  static const std::unordered_map<std::string, Shape> table = {
      {"aten::view", {Kind::View, {0}}},
      {"aten::_unsafe_view", {Kind::UnsafeView, {0}}},
      {"aten::reshape", {Kind::Reshape, {0}}},
      {"aten::t", {Kind::T, {0}}},
      {"aten::transpose.int", {Kind::Transpose, {0}}},
      {"aten::unsqueeze", {Kind::Unsqueeze, {0}}},
      {"aten::permute", {Kind::Permute, {0}}},
      {"aten::expand", {Kind::Expand, {0}}},
      {"aten::detach", {Kind::Detach, {0}}},
      {"aten::mm", {Kind::Mm, {0, 1}}},
      {"aten::bmm", {Kind::Bmm, {0, 1}}},
      {"aten::addmm", {Kind::Addmm, {0, 1, 2}}},
  };
  return table;
}

bool intsAt(const std::vector<c10::IValue>& tmpl, size_t i, std::vector<int64_t>& out) {
  if (i >= tmpl.size() || !tmpl[i].isIntList()) return false;
  out = tmpl[i].toIntVector();
  return true;
}

bool intAt(const std::vector<c10::IValue>& tmpl, size_t i, int64_t& out) {
  if (i >= tmpl.size() || !tmpl[i].isInt()) return false;
  out = tmpl[i].toInt();
  return true;
}

}  // namespace

bool prepareDirect(const AtenOp& op, const std::vector<c10::IValue>& tmpl,
                   const std::vector<size_t>& tensorPositions, DirectCall& out) {
  auto it = shapes().find(keyOf(op.schema()));
  if (it == shapes().end() || it->second.tensors != tensorPositions) return false;
  if (op.schema().arguments().size() != tmpl.size()) return false;
  DirectCall d;
  d.kind = it->second.kind;
  switch (d.kind) {
    case Kind::View:
    case Kind::UnsafeView:
    case Kind::Reshape:
    case Kind::Permute:
      if (!intsAt(tmpl, 1, d.ints)) return false;
      break;
    case Kind::Expand:
      if (!intsAt(tmpl, 1, d.ints) || !tmpl[2].isBool()) return false;
      d.flag = tmpl[2].toBool();
      break;
    case Kind::Transpose:
      if (!intAt(tmpl, 1, d.i0) || !intAt(tmpl, 2, d.i1)) return false;
      break;
    case Kind::Unsqueeze:
      if (!intAt(tmpl, 1, d.i0)) return false;
      break;
    case Kind::Addmm:
      if (!tmpl[3].isScalar() || !tmpl[4].isScalar()) return false;
      d.beta = tmpl[3].toScalar();
      d.alpha = tmpl[4].toScalar();
      break;
    case Kind::T:
    case Kind::Detach:
    case Kind::Mm:
    case Kind::Bmm:
      break;
    case Kind::None: return false;
  }
  out = std::move(d);
  return true;
}

at::Tensor runDirect(const DirectCall& d, const at::Tensor* t) {
  switch (d.kind) {
    case Kind::View: return t[0].view(d.ints);
    case Kind::UnsafeView: return at::_unsafe_view(t[0], d.ints);
    case Kind::Reshape: return at::reshape(t[0], d.ints);
    case Kind::T: return at::t(t[0]);
    case Kind::Transpose: return at::transpose(t[0], d.i0, d.i1);
    case Kind::Unsqueeze: return at::unsqueeze(t[0], d.i0);
    case Kind::Permute: return at::permute(t[0], d.ints);
    case Kind::Expand: return t[0].expand(d.ints, d.flag);
    case Kind::Detach: return at::detach(t[0]);
    case Kind::Mm: {
      // Note [Skinny matrix products]: a few rows against a weight, streamed at bandwidth.
      at::Tensor y = d.skinny ? skinnyMm(t[0], t[1]) : at::Tensor();
      return y.defined() ? y : at::mm(t[0], t[1]);
    }
    case Kind::Bmm: return at::bmm(t[0], t[1]);
    case Kind::Addmm: {
      at::Tensor y = d.skinny ? skinnyAddmm(t[0], t[1], t[2], d.beta, d.alpha) : at::Tensor();
      return y.defined() ? y : at::addmm(t[0], t[1], t[2], d.beta, d.alpha);
    }
    case Kind::None: break;
  }
  throw std::logic_error("runDirect: no direct call");
}

}  // namespace xacc::backend::aten
