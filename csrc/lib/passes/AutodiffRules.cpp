// The per-op rules of the reverse-mode autodiff (see Autodiff.cpp and Note
// [Gradient graphs] in Autodiff.h): each entry names the op's schema arguments and
// gives the contributions of the result gradient to its active operands.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "AutodiffImpl.h"
#include "AutodiffRuleHelpers.h"

namespace xacc::passes::autodiff {

const std::unordered_map<std::string, Rule>& rules() {
  static const std::unordered_map<std::string, Rule> table = [] {
    std::unordered_map<std::string, Rule> r;
    auto def = [&](std::initializer_list<const char*> keys, std::vector<ArgSpec> args, RuleFn fn) {
      for (const char* k : keys) r[k] = Rule{args, fn};
    };

    // --- tensor arithmetic ---------------------------------------------------
    def({"add.Tensor"}, {A{"self", T}, A{"other", T}, A{"alpha", S, Attr::integer(1)}}, [](RuleCtx& c) {
      c.give("self", c.g);
      c.give("other", c.ad.mulArg(c.g, c.arg("alpha")));
      return true;
    });
    def({"sub.Tensor"}, {A{"self", T}, A{"other", T}, A{"alpha", S, Attr::integer(1)}}, [](RuleCtx& c) {
      c.give("self", c.g);
      if (c.active("other")) c.give("other", c.ad.neg(c.ad.mulArg(c.g, c.arg("alpha"))));
      return true;
    });
    def({"add.Scalar", "sub.Scalar"}, {A{"self", T}, A{"other", S}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          c.give("self", c.g);
          return true;
        });
    def({"rsub.Scalar", "rsub.Tensor"}, {A{"self", T}, A{"other", T}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          // other - alpha * self
          if (c.active("self")) c.give("self", c.ad.neg(c.ad.mulArg(c.g, c.arg("alpha"))));
          c.give("other", c.g);
          return true;
        });
    def({"mul.Tensor", "arith.mul"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      if (c.active("self")) c.give("self", c.ad.mul(c.g, c.val("other")));
      if (c.active("other")) c.give("other", c.ad.mul(c.g, c.val("self")));
      return true;
    });
    def({"mul.Scalar"}, {A{"self", T}, A{"other", S}}, [](RuleCtx& c) {
      c.give("self", c.ad.mulArg(c.g, c.arg("other")));
      return true;
    });
    def({"div.Tensor"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* y = c.val("other");
      if (c.active("self")) c.give("self", ad.div(c.g, y));
      if (c.active("other")) c.give("other", ad.neg(ad.div(ad.mul(c.g, c.out), y)));
      return true;
    });
    def({"div.Scalar"}, {A{"self", T}, A{"other", S}}, [](RuleCtx& c) {
      double d;
      if (!c.arg("other").v && argDouble(c.arg("other"), d)) c.give("self", c.ad.mulc(c.g, 1.0 / d));
      else c.give("self", c.ad.div(c.g, c.ad.scalarValue(c.arg("other"), c.g)));
      return true;
    });
    def({"neg"}, {A{"self", T}}, [](RuleCtx& c) {
      c.give("self", c.ad.neg(c.g));
      return true;
    });
    def({"pow.Tensor_Scalar"}, {A{"self", T}, A{"exponent", S}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      const Arg& e = c.arg("exponent");
      double ev;
      if (!e.v && argDouble(e, ev)) {
        if (ev == 0.0) return true;
        Value* p = ev == 2.0 ? c.val("self")
                             : ad.op("aten.pow.Tensor_Scalar", {c.val("self")},
                                     ir::attrs({{"exponent", Attr::real(ev - 1.0)}}));
        c.give("self", ad.mulc(ad.mul(c.g, p), ev));
        return true;
      }
      Value* ev1 = ad.scalarValue(e, ad.fconst(0.0));
      Value* em1 = ad.core(ir::CoreOp::Sub, {ev1, ad.fconst(1.0, ev1->type())});
      Value* p = ad.op("aten.pow.Tensor_Scalar", {c.val("self"), em1});
      c.give("self", ad.mul(ad.mul(c.g, p), ev1));
      return true;
    });
    def({"pow.Tensor_Tensor"}, {A{"self", T}, A{"exponent", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* e = c.val("exponent");
      if (c.active("self")) {
        Value* em1 = ad.op("aten.sub.Scalar", {e}, ir::attrs({{"other", Attr::real(1.0)}}));
        c.give("self", ad.mul(ad.mul(c.g, e), ad.op("aten.pow.Tensor_Tensor", {x, em1})));
      }
      if (c.active("exponent")) c.give("exponent", ad.mul(ad.mul(c.g, c.out), ad.op("aten.log", {x})));
      return true;
    });
    def({"pow.Scalar"}, {A{"self", S}, A{"exponent", T}}, [](RuleCtx& c) {
      double base;
      if (!argDouble(c.arg("self"), base)) return c.fail("the base must be a constant");
      c.give("exponent", c.ad.mulc(c.ad.mul(c.g, c.out), std::log(base)));
      return true;
    });

    // --- pointwise functions ---------------------------------------------------
    def({"exp"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.mul(c.g, c.out)), true; });
    def({"log"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.div(c.g, c.val("self"))), true; });
    def({"sqrt"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mulc(c.ad.div(c.g, c.out), 0.5)), true;
    });
    def({"rsqrt"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* o3 = c.ad.op("aten.pow.Tensor_Scalar", {c.out}, ir::attrs({{"exponent", Attr::integer(3)}}));
      return c.give("self", c.ad.mulc(c.ad.mul(c.g, o3), -0.5)), true;
    });
    def({"sin"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mul(c.g, c.ad.op("aten.cos", {c.val("self")}))), true;
    });
    def({"cos"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.neg(c.ad.mul(c.g, c.ad.op("aten.sin", {c.val("self")})))), true;
    });
    def({"tanh"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.tanh_backward", {c.g, c.out})), true;
    });
    def({"sigmoid"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.sigmoid_backward", {c.g, c.out})), true;
    });
    def({"relu"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.threshold_backward", {c.g, c.out},
                                    ir::attrs({{"threshold", Attr::integer(0)}}))),
             true;
    });
    def({"gelu"}, {A{"self", T}, A{"approximate", X, Attr::string("none")}}, [](RuleCtx& c) {
      const Arg& ap = c.arg("approximate");
      std::string mode = ap.a.kind() == Attr::Kind::Str ? ap.a.getStr() : "none";
      return c.give("self", c.ad.op("aten.gelu_backward", {c.g, c.val("self")},
                                    ir::attrs({{"approximate", Attr::string(mode)}}))),
             true;
    });
    def({"silu"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten.silu_backward", {c.g, c.val("self")})), true;
    });
    def({"abs"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mul(c.g, c.ad.op("aten.sign", {c.val("self")}))), true;
    });
    def({"clone", "contiguous", "alias", "positive"}, {A{"self", T}, A{"memory_format", X}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;
    });
    def({"clamp"}, {A{"self", T}, A{"min", S}, A{"max", S}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* mask = nullptr;
      auto bound = [&](const char* name, const char* cmp) {
        const Arg& a = c.arg(name);
        if (a.isNone()) return;
        Value* m = a.v ? ad.op(std::string("aten.") + cmp + ".Scalar", {x, a.v})
                       : ad.op(std::string("aten.") + cmp + ".Scalar", {x}, ir::attrs({{"other", a.a}}));
        mask = mask ? ad.op("aten.logical_and", {mask, m}) : m;
      };
      bound("min", "ge");
      bound("max", "le");
      c.give("self", mask ? ad.maskGrad(mask, c.g) : c.g);
      return true;
    });
    def({"clamp_min"}, {A{"self", T}, A{"min", S}}, [](RuleCtx& c) {
      const Arg& a = c.arg("min");
      Value* m = a.v ? c.ad.op("aten.ge.Scalar", {c.val("self"), a.v})
                     : c.ad.op("aten.ge.Scalar", {c.val("self")}, ir::attrs({{"other", a.a}}));
      return c.give("self", c.ad.maskGrad(m, c.g)), true;
    });
    def({"clamp_max"}, {A{"self", T}, A{"max", S}}, [](RuleCtx& c) {
      const Arg& a = c.arg("max");
      Value* m = a.v ? c.ad.op("aten.le.Scalar", {c.val("self"), a.v})
                     : c.ad.op("aten.le.Scalar", {c.val("self")}, ir::attrs({{"other", a.a}}));
      return c.give("self", c.ad.maskGrad(m, c.g)), true;
    });
    def({"where.self"}, {A{"condition", T}, A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* cond = c.val("condition");
      if (c.active("self")) c.give("self", ad.maskGrad(cond, c.g));
      if (c.active("other"))
        c.give("other", ad.op("aten.where.ScalarSelf", {cond, c.g}, ir::attrs({{"self", Attr::real(0.0)}})));
      return true;
    });
    def({"maximum", "minimum", "fmax", "fmin"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      bool isMax = c.n->opName().find("max") != std::string::npos;
      Value* w = winMask(ad, c.val("self"), c.val("other"), isMax);
      if (c.active("self")) c.give("self", ad.mul(c.g, w));
      if (c.active("other"))
        c.give("other", ad.mul(c.g, ad.op("aten.rsub.Scalar", {w}, ir::attrs({{"other", Attr::real(1.0)}}))));
      return true;
    });
    def({"mse_loss"}, {A{"self", T}, A{"target", T}, A{"reduction", S, Attr::integer(1)}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      int64_t red = 1;
      argInt(c.arg("reduction"), red);
      Value* gs = ad.op("aten.mse_loss_backward", {c.g, c.val("self"), c.val("target")},
                        ir::attrs({{"reduction", Attr::integer(red)}}));
      if (c.active("self")) c.give("self", gs);
      if (c.active("target")) c.give("target", ad.neg(gs));
      return true;
    });

    // --- linear algebra ---------------------------------------------------------
    def({"matmul", "mm", "bmm", "dot", "mv"}, {A{"self", T}, A{"other", T}},
        [](RuleCtx& c) { return matmulRule(c, "self", "other"); });
    def({"addmm"},
        {A{"self", T}, A{"mat1", T}, A{"mat2", T}, A{"beta", S, Attr::integer(1)}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) { return addmmRule(c, "mat1", "mat2"); });
    def({"linear"}, {A{"input", T}, A{"weight", T}, A{"bias", TO}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("input");
      Value* w = c.val("weight");
      if (rankOf(w) != 2) return c.fail("weight must be a matrix");
      if (c.active("input")) c.give("input", ad.op("aten.matmul", {c.g, w}));
      if (c.active("weight")) {
        Value* gw;
        if (rankOf(x) == 1) {
          gw = ad.mul(ad.op("aten.unsqueeze", {c.g}, ir::attrs({{"dim", Attr::integer(1)}})),
                      ad.op("aten.unsqueeze", {x}, ir::attrs({{"dim", Attr::integer(0)}})));
        } else {
          Value* gt = ad.op("aten.transpose.int", {c.g},
                            ir::attrs({{"dim0", Attr::integer(-2)}, {"dim1", Attr::integer(-1)}}));
          gw = ad.op("aten.matmul", {gt, x});  // [..., out, in]; reduceTo sums the batch dims
        }
        c.give("weight", gw);
      }
      if (c.active("bias")) c.give("bias", c.g);
      return true;
    });

    // --- views and shapes ---------------------------------------------------------
    def({"t"}, {A{"self", T}}, [](RuleCtx& c) {
      bool ranked = c.g->type().isTensor() && c.g->type().ranked();
      return c.give("self", ranked && rankOf(c.g) < 2 ? c.g : c.ad.op("aten.t", {c.g})), true;
    });
    def({"transpose.int"}, {A{"self", T}, A{"dim0", S}, A{"dim1", S}}, [](RuleCtx& c) {
      int64_t d0, d1;
      if (!argInt(c.arg("dim0"), d0) || !argInt(c.arg("dim1"), d1)) return c.fail("dims must be constants");
      return c.give("self", c.ad.op("aten.transpose.int", {c.g},
                                    ir::attrs({{"dim0", Attr::integer(d0)}, {"dim1", Attr::integer(d1)}}))),
             true;
    });
    def({"permute"}, {A{"self", T}, A{"dims", IL}}, [](RuleCtx& c) {
      std::vector<int64_t> dims;
      bool none;
      if (!argIntList(c.arg("dims"), dims, none) || none) return c.fail("'dims' must be a constant");
      std::vector<int64_t> inv(dims.size());
      for (size_t i = 0; i < dims.size(); ++i) {
        int64_t d = normDim(dims[i], dims.size());
        if (d < 0 || size_t(d) >= dims.size()) return c.fail("dim out of range");
        inv[size_t(d)] = int64_t(i);
      }
      return c.give("self", c.ad.op("aten.permute", {c.g}, ir::attrs({{"dims", intArray(inv)}}))), true;
    });
    def({"view", "reshape", "_unsafe_view", "flatten.using_ints", "squeeze", "squeeze.dim", "squeeze.dims",
         "unflatten.int", "view_as", "reshape_as"},
        {A{"self", T}, A{"size", IL}}, [](RuleCtx& c) {
          // A static shape does not read the input (which an in-place squeeze_ changed).
          Type t = c.val("self")->type();
          if (t.isTensor() && t.ranked() && t.staticNumel() >= 0) {
            std::vector<int64_t> shape;
            for (const ir::Dim& d : t.dims()) shape.push_back(d.size);
            return c.give("self", c.ad.op("aten.reshape", {c.g}, ir::attrs({{"shape", intArray(shape)}}))), true;
          }
          if (c.n->hasEffects()) return c.fail("in-place view of a tensor with dynamic shape");
          return c.give("self", c.ad.op("aten.reshape_as", {c.g, c.val("self")})), true;
        });
    def({"unsqueeze"}, {A{"self", T}, A{"dim", S}}, [](RuleCtx& c) {
      int64_t d;
      if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
      d = d < 0 ? d + int64_t(rankOf(c.out)) : d;
      return c.give("self", c.ad.op("aten.squeeze.dim", {c.g}, ir::attrs({{"dim", Attr::integer(d)}}))), true;
    });
    def({"expand", "expand_as", "broadcast_to"}, {A{"self", T}, A{"size", IL}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;  // accumulate() sums back to the input's shape
    });
    def({"sum", "sum.dim_IntList"}, {A{"self", T}, A{"dim", IL}, A{"keepdim", S, Attr::boolean(false)}, A{"dtype", X}},
        [](RuleCtx& c) { return reduceRule(c, false); });
    def({"mean", "mean.dim"}, {A{"self", T}, A{"dim", IL}, A{"keepdim", S, Attr::boolean(false)}, A{"dtype", X}},
        [](RuleCtx& c) { return reduceRule(c, true); });
    // softmax and log_softmax: eager autograd's own backward ops, which read
    // the output alone (so the forward saves no exp(output) beside it) and give
    // eager's bits on the ATen executor; xpu0 lowers them into kernels
    // (AtenReductionRules.cpp). For a value of no tensor type, the formulas:
    // softmax dx = y * (g - sum(g * y)), log_softmax dx = g - exp(y) * sum(g).
    def({"_softmax", "softmax.int"}, {A{"self", T}, A{"dim", S}, A{"half_to_float", S}}, [](RuleCtx& c) {
      return softmaxBackward(c, false);
    });
    def({"_log_softmax", "log_softmax.int"}, {A{"self", T}, A{"dim", S}, A{"half_to_float", S}}, [](RuleCtx& c) {
      return softmaxBackward(c, true);
    });
    // Non-differentiable: integer-valued or piecewise-constant results.
    def({"sign", "round", "floor", "ceil", "trunc", "zeros_like", "ones_like", "detach", "lift_fresh",
         "lift_fresh_copy"},
        {A{"self", T}}, [](RuleCtx&) { return true; });

    // --- float scalars (Camel floats) ----------------------------------------
    def({"arith.add"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      c.give("self", c.g);
      c.give("other", c.g);
      return true;
    });
    def({"arith.sub"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      c.give("self", c.g);
      if (c.active("other")) c.give("other", c.ad.neg(c.g));
      return true;
    });
    def({"arith.div"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      if (!c.out->type().isFloat()) return true;
      if (c.active("self")) c.give("self", ad.div(c.g, c.val("other")));
      if (c.active("other")) c.give("other", ad.neg(ad.div(ad.mul(c.g, c.out), c.val("other"))));
      return true;
    });
    def({"arith.neg"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.neg(c.g)), true; });
    def({"arith.pow"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      if (c.active("other"))
        return c.fail("the derivative with respect to the exponent needs a logarithm, which has no float op");
      Value* x = c.val("self");
      Value* e = c.val("other");
      Type ft = c.out->type();
      if (e->type() != ft) e = ad.core(ir::CoreOp::Cast, {e}, ft);
      Value* em1 = ad.core(ir::CoreOp::Sub, {e, ad.fconst(1.0, ft)});
      Value* xf = x->type() == ft ? x : ad.core(ir::CoreOp::Cast, {x}, ft);
      c.give("self", ad.mul(ad.mul(c.g, e), ad.core(ir::CoreOp::Pow, {xf, em1})));
      return true;
    });
    def({"arith.abs", "math::abs"}, {A{"self", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* lt = ad.core(ir::CoreOp::Lt, {x, ad.fconst(0.0, x->type())});
      return c.give("self", ad.core(ir::CoreOp::Select, {lt, ad.neg(c.g), c.g})), true;
    });
    def({"arith.max", "arith.min"}, {A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      bool isMax = c.n->op().is(ir::CoreOp::Max);
      Value* x = c.val("self");
      Value* y = c.val("other");
      Value* first = ad.core(isMax ? ir::CoreOp::Ge : ir::CoreOp::Le, {x, y});
      Value* zero = ad.fconst(0.0, c.g->type());
      if (c.active("self")) c.give("self", ad.core(ir::CoreOp::Select, {first, c.g, zero}));
      if (c.active("other")) c.give("other", ad.core(ir::CoreOp::Select, {first, zero, c.g}));
      return true;
    });
    def({"arith.cast"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;  // accumulate() casts back to the operand's type
    });
    def({"ctrl.select"}, {A{"condition", T}, A{"self", T}, A{"other", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* cond = c.val("condition");
      Value* zero = ad.zerosLike(c.g);
      if (c.active("self")) c.give("self", ad.core(ir::CoreOp::Select, {cond, c.g, zero}));
      if (c.active("other")) c.give("other", ad.core(ir::CoreOp::Select, {cond, zero, c.g}));
      return true;
    });
    def({"item", "_local_scalar_dense"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* x = c.val("self");
      return c.give("self", c.ad.op("aten.mul.Tensor", {c.ad.op("aten.ones_like", {x}), c.g})), true;
    });
    def({"_to_copy", "to.dtype"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* x = c.val("self");
      if (c.g->type().isTensor() && x->type().isTensor() && c.g->type().dtype() != x->type().dtype())
        return c.give("self", c.ad.op("aten._to_copy", {c.g},
                                      ir::attrs({{"dtype", Attr::string(ir::dtypeName(x->type().dtype()))}}))),
               true;
      return c.give("self", c.g), true;
    });
    def({"float", "f64", "f32"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.g), true;  // accumulate() casts back to the operand's type
    });
    def({"math::sqrt"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.mulc(c.ad.div(c.g, c.out), 0.5)), true;
    });
    def({"math::exp"}, {A{"self", T}}, [](RuleCtx& c) { return c.give("self", c.ad.mul(c.g, c.out)), true; });
    def({"math::round", "math::floor", "math::ceil"}, {A{"self", T}}, [](RuleCtx&) { return true; });

    // --- training ops (XJIT captured graphs; Note [Training graphs]) ----------
    // As eager's: _softmax_backward_data of the output (a fully masked row's
    // output is 0, so is its gradient).
    def({"_safe_softmax"}, {A{"self", T}, A{"dim", S}, A{"dtype", X}},
        [](RuleCtx& c) { return softmaxBackward(c, false); });
    def({"expm1"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* e = c.ad.op("aten.add.Scalar", {c.out}, ir::attrs({{"other", Attr::real(1.0)}}));
      return c.give("self", c.ad.mul(c.g, e)), true;
    });
    def({"log1p"}, {A{"self", T}}, [](RuleCtx& c) {
      Value* e = c.ad.op("aten.add.Scalar", {c.val("self")}, ir::attrs({{"other", Attr::real(1.0)}}));
      return c.give("self", c.ad.div(c.g, e)), true;
    });
    def({"reciprocal"}, {A{"self", T}}, [](RuleCtx& c) {
      return c.give("self", c.ad.neg(c.ad.mul(c.g, c.ad.mul(c.out, c.out)))), true;
    });
    def({"erf"}, {A{"self", T}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      Value* e = ad.op("aten.exp", {ad.neg(ad.mul(x, x))});
      return c.give("self", ad.mulc(ad.mul(c.g, e), 2.0 / std::sqrt(M_PI))), true;
    });
    def({"hardtanh"}, {A{"self", T}, A{"min_val", S, Attr::real(-1.0)}, A{"max_val", S, Attr::real(1.0)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("min_val").pass("max_val");
          return c.give("self", k.emit("aten.hardtanh_backward")), true;
        });
    def({"leaky_relu"}, {A{"self", T}, A{"negative_slope", S, Attr::real(0.01)}}, [](RuleCtx& c) {
      Call k(c, {c.g, c.val("self")});
      k.pass("negative_slope").set("self_is_result", Attr::boolean(false));
      return c.give("self", k.emit("aten.leaky_relu_backward")), true;
    });
    def({"elu"}, {A{"self", T}, A{"alpha", S, Attr::integer(1)}, A{"scale", S, Attr::integer(1)},
                  A{"input_scale", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          Call k(c, {c.g});
          k.pass("alpha").pass("scale").pass("input_scale").set("is_result", Attr::boolean(false));
          k.ops.push_back(c.val("self"));
          return c.give("self", k.emit("aten.elu_backward")), true;
        });
    def({"softplus"}, {A{"self", T}, A{"beta", S, Attr::integer(1)}, A{"threshold", S, Attr::integer(20)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("beta").pass("threshold");
          return c.give("self", k.emit("aten.softplus_backward")), true;
        });
    def({"masked_fill.Scalar", "masked_fill.Tensor"}, {A{"self", T}, A{"mask", T}, A{"value", T}}, [](RuleCtx& c) {
      if (c.active("value")) return c.fail("the fill value must not require grad");
      c.give("self", c.ad.op("aten.masked_fill.Scalar", {c.g, c.val("mask")}, ir::attrs({{"value", Attr::real(0.0)}})));
      return true;
    });
    def({"cat", "stack"}, {}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      bool stack = c.n->opName().find("stack") != std::string::npos;
      int64_t d = 0;
      if (const Attr* a = c.n->attr("dim")) {
        if (a->kind() != Attr::Kind::Int) return c.fail("'dim' must be a constant");
        d = a->getInt();
      }
      size_t rank = rankOf(c.out);
      if (!c.out->type().ranked()) return c.fail("the result's rank must be known");
      d = normDim(d, rank);
      int64_t off = 0, i = 0;
      for (Value* v : c.n->operands()) {
        if (!v || !v->type().isTensor()) return c.fail("operands must be tensors");
        if (stack) {
          if (ad.isActive(v))
            ad.accumulate(v, ad.op("aten.select.int", {c.g}, ir::attrs({{"dim", Attr::integer(d)}, {"index", Attr::integer(i)}})));
          ++i;
          continue;
        }
        Type t = v->type();
        if (!t.ranked()) return c.fail("operands must have known shapes");
        if (t.dims().size() == 1 && t.dims()[0].isStatic() && t.dims()[0].size == 0 && rank != 1) continue;  // legacy empty
        if (size_t(d) >= t.dims().size() || !t.dims()[size_t(d)].isStatic())
          return c.fail("operand sizes along the dim must be static");
        int64_t sz = t.dims()[size_t(d)].size;
        if (ad.isActive(v))
          ad.accumulate(v, ad.op("aten.slice.Tensor", {c.g},
                                 ir::attrs({{"dim", Attr::integer(d)}, {"start", Attr::integer(off)},
                                            {"end", Attr::integer(off + sz)}, {"step", Attr::integer(1)}})));
        off += sz;
      }
      return !ad.failed();
    });
    def({"select.int"}, {A{"self", T}, A{"dim", S}, A{"index", S}}, [](RuleCtx& c) {
      std::vector<int64_t> shape;
      if (!staticShape(c.val("self"), shape)) return c.fail("the input's shape must be static");
      Call k(c, {c.g});
      k.set("input_sizes", intArray(shape)).pass("dim").pass("index");
      return c.give("self", k.emit("aten.select_backward")), true;
    });
    def({"slice.Tensor"}, {A{"self", T}, A{"dim", S, Attr::integer(0)}, A{"start", S}, A{"end", S},
                           A{"step", S, Attr::integer(1)}},
        [](RuleCtx& c) {
          std::vector<int64_t> shape;
          if (!staticShape(c.val("self"), shape)) return c.fail("the input's shape must be static");
          Call k(c, {c.g});
          k.set("input_sizes", intArray(shape)).pass("dim");
          k.passOr("start", Attr::integer(0)).passOr("end", Attr::integer(INT64_MAX)).pass("step");
          return c.give("self", k.emit("aten.slice_backward")), true;
        });
    def({"split.Tensor", "split_with_sizes", "unbind.int", "split.sizes", "chunk"},
        {A{"self", T}, A{"split_size", S}, A{"dim", S, Attr::integer(0)}}, [](RuleCtx& c) {
          Autodiff& ad = c.ad;
          std::vector<int64_t> shape;
          Value* x = c.val("self");
          if (!staticShape(x, shape)) return c.fail("the input's shape must be static");
          const std::string& name = c.n->opName();
          int64_t d = 0;
          if (const Attr* a = c.n->attr("dim")) {
            if (a->kind() != Attr::Kind::Int) return c.fail("'dim' must be a constant");
            d = a->getInt();
          }
          d = normDim(d, shape.size());
          if (d < 0 || size_t(d) >= shape.size()) return c.fail("dim out of range");
          int64_t size = shape[size_t(d)];
          std::vector<int64_t> starts, lens;
          bool unbind = name.find("unbind") != std::string::npos;
          if (unbind) {
            for (int64_t i = 0; i < size; ++i) starts.push_back(i), lens.push_back(1);
          } else if (name.find("split_with_sizes") != std::string::npos || name.find("split.sizes") != std::string::npos) {
            const Attr* a = c.n->attr("split_sizes");
            if (!a) a = c.n->attr("split_size");
            std::vector<int64_t> sizes;
            bool none;
            if (!a || !argIntList(Arg{nullptr, *a}, sizes, none) || none) return c.fail("'split_sizes' must be a constant");
            int64_t off = 0;
            for (int64_t s : sizes) starts.push_back(off), lens.push_back(s), off += s;
          } else {
            int64_t s;
            if (!argInt(c.arg("split_size"), s) || s <= 0) return c.fail("'split_size' must be a constant");
            if (name.find("chunk") != std::string::npos) s = (size + s - 1) / s;  // chunks -> chunk size
            for (int64_t off = 0; off < size; off += s) starts.push_back(off), lens.push_back(std::min(s, size - off));
          }
          Value* acc = nullptr;
          for (auto& [idx, g] : *c.elems) {
            int64_t i = idx < 0 ? idx + int64_t(starts.size()) : idx;
            if (i < 0 || size_t(i) >= starts.size()) return c.fail("element index out of range");
            Value* gi = g;
            if (unbind) gi = ad.op("aten.unsqueeze", {gi}, ir::attrs({{"dim", Attr::integer(d)}}));
            std::vector<int64_t> pad(2 * (shape.size() - size_t(d)), 0);
            // constant_pad_nd pads the last dim first: dim d is the last pair.
            size_t p = 2 * (shape.size() - 1 - size_t(d));
            pad[p] = starts[size_t(i)];
            pad[p + 1] = size - starts[size_t(i)] - lens[size_t(i)];
            Value* full = ad.op("aten.constant_pad_nd", {gi}, ir::attrs({{"pad", intArray(pad)}, {"value", Attr::integer(0)}}));
            acc = acc ? ad.add(acc, full) : full;
          }
          if (acc) c.give("self", acc);
          return !ad.failed();
        });
    def({"cumsum"}, {A{"self", T}, A{"dim", S}, A{"dtype", X}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      int64_t d;
      if (!argInt(c.arg("dim"), d)) return c.fail("'dim' must be a constant");
      AttrDict fa = ir::attrs({{"dims", intArray({d})}});
      Value* f = ad.op("aten.flip", {c.g}, fa);
      Value* cs = ad.op("aten.cumsum", {f}, ir::attrs({{"dim", Attr::integer(d)}}));
      return c.give("self", ad.op("aten.flip", {cs}, fa)), true;
    });
    def({"triu", "tril"}, {A{"self", T}, A{"diagonal", S, Attr::integer(0)}}, [](RuleCtx& c) {
      Call k(c, {c.g});
      k.pass("diagonal");
      return c.give("self", k.emit(c.n->opName().find("triu") != std::string::npos ? "aten.triu" : "aten.tril")), true;
    });
    def({"flip"}, {A{"self", T}, A{"dims", IL}}, [](RuleCtx& c) {
      Call k(c, {c.g});
      k.pass("dims");
      return c.give("self", k.emit("aten.flip")), true;
    });
    def({"roll"}, {A{"self", T}, A{"shifts", IL}, A{"dims", IL}}, [](RuleCtx& c) {
      std::vector<int64_t> sh;
      bool none;
      if (!argIntList(c.arg("shifts"), sh, none) || none) return c.fail("'shifts' must be a constant");
      for (int64_t& v : sh) v = -v;
      Call k(c, {c.g});
      k.set("shifts", intArray(sh)).pass("dims");
      return c.give("self", k.emit("aten.roll")), true;
    });
    def({"constant_pad_nd"}, {A{"self", T}, A{"pad", IL}, A{"value", S, Attr::integer(0)}}, [](RuleCtx& c) {
      std::vector<int64_t> pad;
      bool none;
      if (!argIntList(c.arg("pad"), pad, none) || none) return c.fail("'pad' must be a constant");
      for (int64_t& v : pad) v = -v;
      return c.give("self", c.ad.op("aten.constant_pad_nd", {c.g}, ir::attrs({{"pad", intArray(pad)}, {"value", Attr::integer(0)}}))),
             true;
    });
    def({"gather"}, {A{"self", T}, A{"dim", S}, A{"index", T}, A{"sparse_grad", S, Attr::boolean(false)}},
        [](RuleCtx& c) { return c.give("self", addAtIndex(c, "aten.scatter_add")), true; });
    def({"index_select"}, {A{"self", T}, A{"dim", S}, A{"index", T}},
        [](RuleCtx& c) { return c.give("self", addAtIndex(c, "aten.index_add")), true; });
    def({"index.Tensor"}, {A{"self", T}}, [](RuleCtx& c) {
      // index_put(zeros, indices, g, accumulate=True): indices are the node's
      // other operands (tensors or nulls), in order.
      std::vector<Value*> ops{zerosOf(c, c.val("self"))};
      for (size_t i = 1; i < c.n->numOperands(); ++i) {
        Value* v = c.n->operand(i);
        if (v && c.ad.isActive(v)) return c.fail("indices must not require grad");
        ops.push_back(v);
      }
      ops.push_back(c.g);
      return c.give("self", c.ad.op("aten.index_put", ops, ir::attrs({{"accumulate", Attr::boolean(true)}}))), true;
    });
    def({"amax", "amin"}, {A{"self", T}, A{"dim", IL}, A{"keepdim", S, Attr::boolean(false)}}, [](RuleCtx& c) {
      Autodiff& ad = c.ad;
      Value* x = c.val("self");
      std::vector<int64_t> dims;
      if (!reductionDims(c, x, dims)) return c.fail("'dim' must be a constant");
      bool keep = argBool(c.arg("keepdim"), false);
      Value* g = unsqueezeReduced(ad, c.g, x, dims, false, keep);
      Value* o = unsqueezeReduced(ad, c.out, x, dims, false, keep);
      Value* m = ad.op("aten.eq.Tensor", {x, o});
      Value* mf = ad.op("aten._to_copy", {m}, ir::attrs({{"dtype", Attr::string(ir::dtypeName(x->type().dtype()))}}));
      Value* cnt = ad.op("aten.sum.dim_IntList", {mf}, ir::attrs({{"dim", intArray(dims)}, {"keepdim", Attr::boolean(true)}}));
      return c.give("self", ad.mul(ad.div(g, cnt), mf)), true;
    });
    def({"max.dim", "min.dim"}, {A{"self", T}, A{"dim", S}, A{"keepdim", S, Attr::boolean(false)}}, [](RuleCtx& c) {
      std::vector<int64_t> shape;
      if (!staticShape(c.val("self"), shape)) return c.fail("the input's shape must be static");
      Call k(c, {c.g});
      k.pass("dim");
      k.ops.push_back(c.n->result(1));
      k.set("sizes", intArray(shape)).pass("keepdim");
      return c.give("self", k.emit("aten.value_selecting_reduction_backward")), true;
    });
    def({"var.correction", "std.correction", "var.dim", "std.dim"},
        {A{"self", T}, A{"dim", IL}, A{"correction", S}, A{"keepdim", S, Attr::boolean(false)}}, [](RuleCtx& c) {
          Autodiff& ad = c.ad;
          Value* x = c.val("self");
          std::vector<int64_t> dims;
          if (!reductionDims(c, x, dims)) return c.fail("'dim' must be a constant");
          double corr = 1.0;
          const Arg& ca = c.arg("correction");
          if (c.n->opName().find(".dim") != std::string::npos) {
            if (const Attr* u = c.n->attr("unbiased")) corr = u->kind() == Attr::Kind::Bool && !u->getBool() ? 0.0 : 1.0;
          } else if (!ca.isNone() && !argDouble(ca, corr)) {
            return c.fail("'correction' must be a constant");
          }
          double count = 0;
          if (!reducedCount(c, x, dims, false, count)) return c.fail("reduced sizes must be static");
          bool keep = argBool(c.arg("keepdim"), false);
          Value* g = unsqueezeReduced(ad, c.g, x, dims, false, keep);
          Value* mean = ad.op("aten.mean.dim", {x}, ir::attrs({{"dim", intArray(dims)}, {"keepdim", Attr::boolean(true)}}));
          Value* xc = ad.sub(x, mean);
          if (c.n->opName().rfind("aten.var", 0) == 0)
            return c.give("self", ad.mulc(ad.mul(g, xc), 2.0 / (count - corr))), true;
          Value* o = unsqueezeReduced(ad, c.out, x, dims, false, keep);
          return c.give("self", ad.mulc(ad.div(ad.mul(g, xc), o), 1.0 / (count - corr))), true;
        });
    def({"baddbmm"},
        {A{"self", T}, A{"batch1", T}, A{"batch2", T}, A{"beta", S, Attr::integer(1)}, A{"alpha", S, Attr::integer(1)}},
        [](RuleCtx& c) { return addmmRule(c, "batch1", "batch2"); });
    def({"embedding"}, {A{"weight", T}, A{"indices", T}, A{"padding_idx", S, Attr::integer(-1)},
                        A{"scale_grad_by_freq", S, Attr::boolean(false)}, A{"sparse", S, Attr::boolean(false)}},
        [](RuleCtx& c) {
          std::vector<int64_t> shape;
          if (!staticShape(c.val("weight"), shape) || shape.empty()) return c.fail("the weight's shape must be static");
          Call k(c, {c.g, c.val("indices")});
          k.set("num_weights", Attr::integer(shape[0])).pass("padding_idx").pass("scale_grad_by_freq");
          return c.give("weight", k.emit("aten.embedding_dense_backward")), true;
        });
    def({"nll_loss_forward", "nll_loss2d_forward"},
        {A{"self", T}, A{"target", T}, A{"weight", TO}, A{"reduction", S, Attr::integer(1)},
         A{"ignore_index", S, Attr::integer(-100)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self"), c.val("target")});
          k.opt("weight").pass("reduction").pass("ignore_index");
          k.ops.push_back(c.n->result(1));
          bool twod = c.n->opName().find("2d") != std::string::npos;
          return c.give("self", k.emit(twod ? "aten.nll_loss2d_backward" : "aten.nll_loss_backward")), true;
        });
    // CPU flash attention (Note [Attention as one node] in capture/sdpa.py):
    // eager autograd's own backward kernel, of the forward's output and
    // logsumexp (result 1, a residual read by nothing else). The mask is a
    // constant: a gradient reaching it is refused.
    def({"_scaled_dot_product_flash_attention_for_cpu"},
        {A{"query", T}, A{"key", T}, A{"value", T}, A{"dropout_p", S, Attr::real(0.0)},
         A{"is_causal", S, Attr::boolean(false)}, A{"attn_mask", TO}, A{"scale", X}},
        [](RuleCtx& c) {
          if (c.active("attn_mask")) return c.fail("the attention mask must not require grad");
          Call k(c, {c.g, c.val("query"), c.val("key"), c.val("value"), c.n->result(0), c.n->result(1)});
          k.pass("dropout_p").pass("is_causal").opt("attn_mask").pass("scale");
          return emitAndGive(c, k, "aten._scaled_dot_product_flash_attention_for_cpu_backward",
                             {"query", "key", "value"});
        });
    def({"native_layer_norm"}, {A{"input", T}, A{"normalized_shape", IL}, A{"weight", TO}, A{"bias", TO}, A{"eps", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("input")});
          k.pass("normalized_shape");
          k.ops.push_back(c.n->result(1));
          k.ops.push_back(c.n->result(2));
          k.opt("weight").opt("bias");
          return normBackward(c, k, "aten.native_layer_norm_backward");
        });
    def({"native_group_norm"},
        {A{"input", T}, A{"weight", TO}, A{"bias", TO}, A{"N", S}, A{"C", S}, A{"HxW", S}, A{"group", S}, A{"eps", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("input"), c.n->result(1), c.n->result(2)});
          k.opt("weight").pass("N").pass("C").pass("HxW").pass("group");
          return normBackward(c, k, "aten.native_group_norm_backward");
        });
    def({"native_batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit.no_stats"},
        {A{"input", T}, A{"weight", TO}, A{"bias", TO}, A{"running_mean", TO}, A{"running_var", TO},
         A{"training", S, Attr::boolean(false)}, A{"momentum", S}, A{"eps", S}},
        [](RuleCtx& c) {
          const std::string& name = c.n->opName();
          bool train = name.find("no_training") != std::string::npos ? false
                       : name.find("no_stats") != std::string::npos  ? true
                                                                     : argBool(c.arg("training"), false);
          if (c.active("running_mean") || c.active("running_var")) return c.fail("running statistics must not require grad");
          Call k(c, {c.g, c.val("input")});
          k.opt("weight").opt("running_mean").opt("running_var");
          k.ops.push_back(c.n->result(1));
          k.ops.push_back(c.n->result(2));
          k.set("train", Attr::boolean(train)).pass("eps");
          return normBackward(c, k, "aten.native_batch_norm_backward");
        });
    def({"convolution"},
        {A{"input", T}, A{"weight", T}, A{"bias", TO}, A{"stride", IL}, A{"padding", IL}, A{"dilation", IL},
         A{"transposed", S}, A{"output_padding", IL}, A{"groups", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("input"), c.val("weight")});
          bool bias = !c.arg("bias").isNone();
          if (bias) {
            std::vector<int64_t> bs;
            if (!staticShape(c.val("bias"), bs)) return c.fail("the bias's shape must be static");
            k.set("bias_sizes", intArray(bs));
          } else {
            k.set("bias_sizes", Attr::none());
          }
          k.pass("stride").pass("padding").pass("dilation").pass("transposed").pass("output_padding").pass("groups");
          k.set("output_mask", boolArray({true, true, bias}));
          return emitAndGive(c, k, "aten.convolution_backward", {"input", "weight", "bias"});
        });
    def({"max_pool2d_with_indices"},
        {A{"self", T}, A{"kernel_size", IL}, A{"stride", IL}, A{"padding", IL, Attr::integer(0)},
         A{"dilation", IL, Attr::integer(1)}, A{"ceil_mode", S, Attr::boolean(false)}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("kernel_size").passOr("stride", intArray({})).pass("padding").pass("dilation").pass("ceil_mode");
          k.ops.push_back(c.n->result(1));
          return c.give("self", k.emit("aten.max_pool2d_with_indices_backward")), true;
        });
    def({"avg_pool2d"},
        {A{"self", T}, A{"kernel_size", IL}, A{"stride", IL}, A{"padding", IL, Attr::integer(0)},
         A{"ceil_mode", S, Attr::boolean(false)}, A{"count_include_pad", S, Attr::boolean(true)},
         A{"divisor_override", S}},
        [](RuleCtx& c) {
          Call k(c, {c.g, c.val("self")});
          k.pass("kernel_size").passOr("stride", intArray({})).pass("padding").pass("ceil_mode");
          k.pass("count_include_pad").passOr("divisor_override", Attr::none());
          return c.give("self", k.emit("aten.avg_pool2d_backward")), true;
        });
    def({"_adaptive_avg_pool2d", "adaptive_avg_pool2d"}, {A{"self", T}, A{"output_size", IL}}, [](RuleCtx& c) {
      return c.give("self", c.ad.op("aten._adaptive_avg_pool2d_backward", {c.g, c.val("self")})), true;
    });
    return r;
  }();
  return table;
}

}  // namespace xacc::passes::autodiff
