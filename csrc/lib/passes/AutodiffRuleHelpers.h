// The helpers of the autodiff's rule table (AutodiffRules.cpp, its only
// includer): argument specs, shape arithmetic shared by several rules, the
// matmul/addmm and reduction rules' bodies, and `Call`, which builds an ATen
// backward op from the rule node's own arguments.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "AutodiffImpl.h"

namespace xacc::passes::autodiff {

namespace {
// ---------------------------------------------------------------------------
// The rules.

using A = ArgSpec;
constexpr AK T = AK::T, TO = AK::TOpt, S = AK::S, IL = AK::IL, X = AK::X;

/// Normalises a possibly negative dim against `rank`.
int64_t normDim(int64_t d, size_t rank) { return d < 0 ? d + int64_t(rank) : d; }

size_t rankOf(Value* v) { return v && v->type().isTensor() && v->type().ranked() ? v->type().dims().size() : 0; }

/// g of a reduction over `dims` (all dims when `all`) without keepdim, made
/// broadcastable against the input again.
Value* unsqueezeReduced(Autodiff& ad, Value* g, Value* x, const std::vector<int64_t>& dims, bool all,
                        bool keepdim) {
  if (keepdim || all) return g;
  size_t rank = rankOf(x);
  bool unranked = !x->type().isTensor() || !x->type().ranked();
  for (int64_t d : dims)
    if (d < 0 && unranked) {
      ad.error("cannot differentiate a reduction over a negative dim of an unranked tensor");
      return nullptr;
    }
  std::vector<int64_t> ds;
  for (int64_t d : dims) ds.push_back(normDim(d, rank));
  std::sort(ds.begin(), ds.end());
  for (int64_t d : ds) g = ad.op("aten.unsqueeze", {g}, ir::attrs({{"dim", Attr::integer(d)}}));
  return g;
}

/// Number of elements reduced (static product, or null with an error).
Value* reducedCount(RuleCtx& c, Value* x, const std::vector<int64_t>& dims, bool all, double& count) {
  Type t = x->type();
  if (!t.ranked()) return nullptr;  // the caller divides by numel at run time
  count = 1;
  size_t rank = t.dims().size();
  std::vector<int64_t> ds;
  if (all) for (size_t i = 0; i < rank; ++i) ds.push_back(int64_t(i));
  else for (int64_t d : dims) ds.push_back(normDim(d, rank));
  for (int64_t d : ds) {
    if (d < 0 || size_t(d) >= rank) return c.fail("dim out of range"), nullptr;
    if (!t.dims()[size_t(d)].isStatic()) return nullptr;  // dynamic: caller uses numel
    count *= double(t.dims()[size_t(d)].size);
  }
  return x;
}

/// Whether matrix `v` is the transpose of another (`weight.t()`, as `linear`
/// feeds `addmm`).
bool isMatrixTranspose(Value* v) {
  ir::Node* d = v && !v->isParam() ? v->definingNode() : nullptr;
  if (!d || !v->type().ranked() || rankOf(v) != 2) return false;
  const std::string& n = d->opName();
  return n == "aten.t" || n == "aten.t.default";
}

bool matmulRule(RuleCtx& c, const char* an, const char* bn) {
  Autodiff& ad = c.ad;
  Value* a = c.val(an);
  Value* b = c.val(bn);
  if (!Autodiff::isT(a) || !Autodiff::isT(b)) return c.fail("operands must be tensors");
  size_t ra = rankOf(a), rb = rankOf(b);
  if (!a->type().ranked() || !b->type().ranked()) {
    // Ranks known only at run time: the matrix (and batched) case; a 1-d
    // operand then fails at run time with ATen's located shape error.
    if (a->type().ranked() && ra == 1) return c.fail("a 1-d operand with an unranked one is not supported");
    if (b->type().ranked() && rb == 1) return c.fail("a 1-d operand with an unranked one is not supported");
    ra = rb = 2;
  }
  Value* g = c.g;
  if (ra == 1 && rb == 1) {
    c.give(an, ad.mul(b, g));
    c.give(bn, ad.mul(a, g));
    return true;
  }
  // Lift 1-d operands to matrices, as matmul does, and g to match.
  Value* a2 = a;
  Value* b2 = b;
  if (ra == 1) {
    a2 = ad.op("aten.unsqueeze", {a}, ir::attrs({{"dim", Attr::integer(0)}}));
    g = ad.op("aten.unsqueeze", {g}, ir::attrs({{"dim", Attr::integer(-2)}}));
  }
  if (rb == 1) {
    b2 = ad.op("aten.unsqueeze", {b}, ir::attrs({{"dim", Attr::integer(1)}}));
    g = ad.op("aten.unsqueeze", {g}, ir::attrs({{"dim", Attr::integer(-1)}}));
  }
  auto tr = [&](Value* v) {
    return ad.op("aten.transpose.int", {v}, ir::attrs({{"dim0", Attr::integer(-2)}, {"dim1", Attr::integer(-1)}}));
  };
  if (c.active(an)) {
    Value* da = ad.reduceTo(ad.op("aten.matmul", {g, tr(b2)}), a2 ? a2->type() : Type());
    if (ra == 1) da = ad.op("aten.squeeze.dim", {da}, ir::attrs({{"dim", Attr::integer(0)}}));
    c.give(an, da);
  }
  if (c.active(bn) && ra == 2 && rb == 2 && a->type().ranked() && isMatrixTranspose(b)) {
    // Note [Contiguous weight gradients]: b = W.t(), so b's gradient goes
    // through t() to W. Computed as (g^T a)^T (the same products as a^T g), W's
    // gradient is a contiguous matrix, as eager's addmm backward makes it, and
    // AccumulateGrad takes it as it is; a^T g would reach W with transposed
    // strides, which AccumulateGrad copies (measured: a copy per weight per
    // step, 2.6 ms of a 16 ms MLP training step).
    c.give(bn, tr(ad.op("aten.matmul", {tr(g), a2})));
  } else if (c.active(bn)) {
    Value* db = ad.reduceTo(ad.op("aten.matmul", {tr(a2), g}), b2 ? b2->type() : Type());
    if (rb == 1) db = ad.op("aten.squeeze.dim", {db}, ir::attrs({{"dim", Attr::integer(1)}}));
    c.give(bn, db);
  }
  return true;
}

/// beta * self + alpha * (a @ b) (addmm, baddbmm): self's gradient is beta * g,
/// the product's the matmul rule's on alpha * g.
bool addmmRule(RuleCtx& c, const char* an, const char* bn) {
  Autodiff& ad = c.ad;
  c.give("self", ad.mulArg(c.g, c.arg("beta")));
  Value* g = c.g;
  c.g = ad.mulArg(g, c.arg("alpha"));
  bool ok = matmulRule(c, an, bn);
  c.g = g;
  return ok;
}

/// The dims named by a reduction's constant `dim` list, every dim of `x` when
/// it is None or empty. False: `dim` is not a constant.
bool reductionDims(RuleCtx& c, Value* x, std::vector<int64_t>& dims) {
  bool none = false;
  if (!argIntList(c.arg("dim"), dims, none)) return false;
  if (none || dims.empty()) {
    dims.clear();
    for (size_t i = 0; i < rankOf(x); ++i) dims.push_back(int64_t(i));
  }
  return true;
}

bool reduceRule(RuleCtx& c, bool mean) {
  Autodiff& ad = c.ad;
  Value* x = c.val("self");
  bool all = true, keepdim = false;
  std::vector<int64_t> dims;
  if (c.index("dim") >= 0) {
    bool none = false;
    if (!argIntList(c.arg("dim"), dims, none)) return c.fail("'dim' must be a constant");
    all = none || dims.empty();
    keepdim = argBool(c.arg("keepdim"), false);
  }
  Value* g = unsqueezeReduced(ad, c.g, x, dims, all, keepdim);
  Value* gx = ad.op("aten.expand_as", {g, x});
  if (mean) {
    double count = 0;
    if (ad.failed()) return false;
    if (reducedCount(c, x, dims, all, count)) {
      gx = ad.mulc(gx, 1.0 / count);
    } else {
      if (ad.failed()) return false;
      // Dynamic sizes: divide by numel(x) / numel(result).
      Value* nx = ad.op("aten.numel", {x});
      Value* no = ad.op("aten.numel", {c.out});
      gx = ad.op("aten.div.Tensor", {gx, ad.core(ir::CoreOp::Div, {nx, no})});
    }
  }
  c.give("self", gx);
  return true;
}

/// Static shape of a tensor value (false when unranked or a dim is dynamic).
bool staticShape(Value* v, std::vector<int64_t>& out) {
  out.clear();
  if (!v || !v->type().isTensor() || !v->type().ranked()) return false;
  for (const ir::Dim& d : v->type().dims()) {
    if (!d.isStatic()) return false;
    out.push_back(d.size);
  }
  return true;
}

Attr boolArray(const std::vector<bool>& v) {
  Attr::Array a;
  for (bool x : v) a.push_back(Attr::boolean(x));
  return Attr::array(std::move(a));
}

/// A new op's arguments, built from the rule node's own (Note [ATen operands
/// and attributes]): operands in schema order, the rest as attributes.
struct Call {
  RuleCtx& c;
  std::vector<Value*> ops;
  AttrDict attrs;
  Call(RuleCtx& c, std::vector<Value*> first) : c(c), ops(std::move(first)) {}
  /// The node's argument `name` (operand or attribute), as argument `as`.
  Call& pass(const char* name, const char* as = nullptr) {
    const Arg& a = c.arg(name);
    if (a.v) ops.push_back(a.v);
    else attrs.set(as ? as : name, a.a);
    return *this;
  }
  /// An optional tensor argument: its operand, or an explicit none.
  Call& opt(const char* name) {
    const Arg& a = c.arg(name);
    if (a.v && a.v->type().isTensor()) ops.push_back(a.v);
    else attrs.set(name, Attr::none());
    return *this;
  }
  Call& set(const char* name, Attr v) {
    attrs.set(name, std::move(v));
    return *this;
  }
  /// The node's argument `name`, or `fallback` when it is None.
  Call& passOr(const char* name, Attr fallback) {
    return c.arg(name).isNone() ? set(name, std::move(fallback)) : pass(name);
  }
  Value* emit(std::string_view op) { return c.ad.op(op, ops, attrs); }
  Node* emitNode(std::string_view op) { return c.ad.opNode(op, ops, attrs); }
};

/// See the softmax rules.
bool softmaxBackward(RuleCtx& c, bool log) {
  Autodiff& ad = c.ad;
  int64_t d;
  if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
  Value* x = c.val("self");
  if (x->type().isTensor() && c.out->type().isTensor()) {
    ir::AttrDict attrs = ir::attrs({{"dim", Attr::integer(d)},
                                    {"input_dtype", Attr::string(ir::dtypeName(x->type().dtype()))}});
    return c.give("self", ad.op(log ? "aten._log_softmax_backward_data" : "aten._softmax_backward_data",
                                {c.g, c.out}, std::move(attrs))),
           true;
  }
  auto sumDim = [&](Value* v) {
    return ad.op("aten.sum.dim_IntList", {v}, ir::attrs({{"dim", intArray({d})}, {"keepdim", Attr::boolean(true)}}));
  };
  if (log) return c.give("self", ad.sub(c.g, ad.mul(ad.op("aten.exp", {c.out}), sumDim(c.g)))), true;
  return c.give("self", ad.mul(c.out, ad.sub(c.g, sumDim(ad.mul(c.g, c.out))))), true;
}

/// The layer/group/batch norm rules' common end: `k` (the backward op's
/// operands so far) gets an output mask for input, weight and bias, and the
/// three gradients are given.
/// Emits the backward op `k` builds and gives its results, in order, to the
/// arguments `names` (a backward op with one result per differentiated input).
bool emitAndGive(RuleCtx& c, Call& k, const char* op, std::initializer_list<const char*> names) {
  Node* m = k.emitNode(op);
  if (!m) return false;
  size_t i = 0;
  for (const char* name : names) c.give(name, m->result(i++));
  return true;
}

bool normBackward(RuleCtx& c, Call& k, const char* op) {
  k.set("output_mask", boolArray({true, !c.arg("weight").isNone(), !c.arg("bias").isNone()}));
  return emitAndGive(c, k, op, {"input", "weight", "bias"});
}

/// Zeros shaped like `x` (from its static shape when known, so the backward
/// does not keep `x` alive only for its shape).
Value* zerosOf(RuleCtx& c, Value* x) {
  std::vector<int64_t> shape;
  if (c.g && staticShape(x, shape) && c.g->type().isTensor() && c.g->type().dtype() == x->type().dtype())
    return c.ad.op("aten.new_zeros", {c.g}, ir::attrs({{"size", intArray(shape)}}));
  return c.ad.zerosLike(x);
}

/// Gradient mask of maximum/minimum: 1 where `self` wins, 0.5 on ties, 0 else.
/// `op`(zeros like self, dim, index, g): the gradient of a gather along `dim`
/// (gather -> scatter_add, index_select -> index_add).
Value* addAtIndex(RuleCtx& c, const char* op) {
  Call k(c, {zerosOf(c, c.val("self"))});
  k.pass("dim");
  k.ops.push_back(c.val("index"));
  k.ops.push_back(c.g);
  return k.emit(op);
}

Value* winMask(Autodiff& ad, Value* x, Value* y, bool isMax) {
  Value* s = ad.op("aten.sign", {ad.sub(x, y)});
  if (!isMax) s = ad.neg(s);
  return ad.mulc(ad.op("aten.add.Scalar", {s}, ir::attrs({{"other", Attr::real(1.0)}})), 0.5);
}

}  // namespace

}  // namespace xacc::passes::autodiff
