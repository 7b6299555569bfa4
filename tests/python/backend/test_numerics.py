"""Numerics of the xpu target (MLIR backend) against eager PyTorch.

Every lowered `aten.*` overload (`xacc._C.mlir.lowered_ops()`, checked by
test_every_lowered_op_is_covered) and a set of fused patterns run as
generated kernels on several shapes (broadcasting, size 0 and 1 dims, rank 0),
dtypes (f32, f64, i64, bool where the op allows) and layouts (contiguous;
transposed or sliced, i.e. strided memrefs), and must match the same aten
overloads run eagerly on the same inputs, within dtype-appropriate tolerances.

Each batch is one GIR graph holding many independent cases, so it is one
region and one compiled kernel (per input layout): the MLIR JIT is the
expensive part. Every run must really execute the kernel: the plan has one
region and no fallback node, the run-time counters show a kernel launch and no
region that ran node by node on ATen. When a batch does fall back, each of its
cases is compiled alone to name the ones responsible.
"""
from __future__ import annotations

import functools

import pytest
import torch

from gir_builder import Program

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

F32, F64, I64, BOOL = torch.float32, torch.float64, torch.int64, torch.bool

# Float unary ops: (overload, input domain, extra attrs).
UNARY_FLOAT = [
    ("exp", "any"), ("exp2", "any"), ("expm1", "any"), ("log", "pos"), ("log2", "pos"), ("log10", "pos"),
    ("log1p", "pos"), ("sqrt", "pos"), ("rsqrt", "pos"), ("reciprocal", "nonzero"), ("sin", "any"),
    ("cos", "any"), ("tan", "small"), ("tanh", "wide"), ("sinh", "any"), ("cosh", "any"), ("atan", "wide"),
    ("asin", "unit"), ("acos", "unit"), ("erf", "wide"), ("erfc", "any"), ("sigmoid", "wide"),
    ("silu", "wide"), ("gelu", "wide"), ("mish", "any"), ("softplus", "wide"), ("elu", "any"),
    ("selu", "any"), ("celu", "any"), ("hardsigmoid", "wide"), ("hardswish", "wide"), ("hardtanh", "any"),
    ("leaky_relu", "any"), ("relu", "any"), ("relu6", "wide"), ("abs", "any"), ("neg", "any"), ("square", "any"), ("sign", "any"),
    ("sgn", "any"), ("floor", "wide"), ("ceil", "wide"), ("round", "wide"), ("trunc", "wide"),
    ("frac", "wide"), ("isnan", "any"), ("logical_not", "any"),
]
UNARY_INT = ["abs", "neg", "relu", "sign", "square", "floor", "ceil", "round", "trunc", "logical_not"]

BINARY = ["add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "maximum.default", "minimum.default",
          "atan2.default", "eq.Tensor", "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor",
          "logical_and.default", "logical_or.default", "logical_xor.default", "rsub.Tensor",
          "remainder.Tensor", "fmod.Tensor", "floor_divide.default"]
BINARY_INT = ["add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "maximum.default", "minimum.default",
              "eq.Tensor", "ne.Tensor", "lt.Tensor", "ge.Tensor", "logical_and.default", "logical_xor.default",
              "bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor"]
SCALAR_OPS = [("add.Scalar", {"other": 2.5}), ("add.Scalar", {"other": 2, "alpha": 3}),
              ("sub.Scalar", {"other": 1}), ("mul.Scalar", {"other": -3.0}), ("div.Scalar", {"other": 4.0}),
              ("div.Scalar_mode", {"other": 0.7, "rounding_mode": "floor"}),
              ("div.Scalar_mode", {"other": -0.7, "rounding_mode": "trunc"}),
              ("floor_divide.Scalar", {"other": 0.3}), ("remainder.Scalar", {"other": 0.7}),
              ("fmod.Scalar", {"other": 1.5}), ("rsub.Scalar", {"other": 2.0}),
              ("eq.Scalar", {"other": 0}), ("ne.Scalar", {"other": 0.5}), ("lt.Scalar", {"other": 0.25}),
              ("le.Scalar", {"other": 0.0}), ("gt.Scalar", {"other": -0.5}), ("ge.Scalar", {"other": -1}),
              ("pow.Tensor_Scalar", {"exponent": 2}), ("pow.Tensor_Scalar", {"exponent": 3}),
              ("pow.Tensor_Scalar", {"exponent": -1}), ("pow.Tensor_Scalar", {"exponent": 0.5}),
              ("pow.Tensor_Scalar", {"exponent": -2}), ("pow.Tensor_Scalar", {"exponent": -0.5}),
              ("pow.Tensor_Scalar", {"exponent": 2.5}),
              ("clamp.default", {"min": -0.5, "max": 0.5}), ("clamp.default", {"min": 0.0}),
              ("clamp_min.default", {"min": 0.1}), ("clamp_max.default", {"max": -0.2}),
              ("threshold.default", {"threshold": 0.1, "value": 20.0}),
              ("leaky_relu.default", {"negative_slope": 0.2}),
              ("hardtanh.default", {"min_val": -0.5, "max_val": 0.25}), ("elu.default", {"alpha": 0.5}),
              ("softplus.default", {"beta": 2.0, "threshold": 1.0}), ("gelu.default", {"approximate": "tanh"})]


def _shapes_pairs():
    # (a, b) shape pairs: same shape, trailing broadcast, both sides broadcast,
    # size-1 vs bigger, rank 0, size 0.
    return [((5, 7), (5, 7)), ((5, 7), (7,)), ((4, 1, 3), (5, 1)), ((1,), (2, 2)), ((), (3,)), ((0, 3), (3,))]


# --- batches: name -> builder(Program) ----------------------------------------

def b_unary_f32(p):
    for shape in [(5, 7), (3, 1, 4)]:
        for op, dom in UNARY_FLOAT:
            p.case = f"{op}{list(shape)}"
            p.out(p.op(f"aten.{op}.default", p.param(F32, shape, dom)))


def b_unary_edges(p):
    # size 0, size 1 and rank 0 for every float unary op (one shared input each).
    xs = {s: {d: p.param(F32, s, d) for d in ("any", "pos", "unit", "small", "nonzero", "wide")}
          for s in [(0, 3), (1,), ()]}
    for s, by_dom in xs.items():
        for op, dom in UNARY_FLOAT:
            p.case = f"{op}{list(s)}"
            p.out(p.op(f"aten.{op}.default", by_dom[dom]))


def b_unary_f64(p):
    for op, dom in UNARY_FLOAT:
        p.case = f"{op}:f64"
        p.out(p.op(f"aten.{op}.default", p.param(F64, (4, 6), dom)))


def b_int_bool(p):
    x = p.param(I64, (4, 6))
    y = p.param(I64, (6,))
    for op in UNARY_INT:
        p.case = f"{op}:i64"
        p.out(p.op(f"aten.{op}.default", x))
    for op in BINARY_INT:
        p.case = f"{op}:i64"
        p.out(p.op(f"aten.{op}", x, y))
    p.case = "bitwise_not:i64"
    p.out(p.op("aten.bitwise_not.default", x))
    for op, attrs in [("add.Scalar", {"other": 3}), ("mul.Scalar", {"other": -2}), ("eq.Scalar", {"other": 1}),
                      ("bitwise_and.Scalar", {"other": 3}), ("bitwise_or.Scalar", {"other": 8}),
                      ("bitwise_xor.Scalar", {"other": 5}), ("pow.Tensor_Scalar", {"exponent": 2}),
                      ("clamp.default", {"min": -2, "max": 3}), ("clamp_max.default", {"max": 1}),
                      ("add.Scalar", {"other": 0.5})]:
        p.case = f"{op}{attrs}:i64"
        p.out(p.op(f"aten.{op}", x, **attrs))
    for op, attrs in [("sum.default", {}), ("sum.dim_IntList", {"dim": [1]}), ("amax.default", {"dim": [0]}),
                      ("amin.default", {"dim": [1], "keepdim": True}), ("max.default", {}), ("min.default", {}),
                      ("prod.default", {})]:
        p.case = f"{op}:i64"
        p.out(p.op(f"aten.{op}", x, **attrs))
    # bool
    a = p.param(BOOL, (4, 6))
    b = p.param(BOOL, (6,))
    for op in ["logical_and.default", "logical_or.default", "logical_xor.default", "bitwise_and.Tensor",
               "bitwise_or.Tensor", "bitwise_xor.Tensor", "eq.Tensor", "ne.Tensor"]:
        p.case = f"{op}:bool"
        p.out(p.op(f"aten.{op}", a, b))
    for op in ["logical_not.default", "bitwise_not.default"]:
        p.case = f"{op}:bool"
        p.out(p.op(f"aten.{op}", a))
    for op, attrs in [("sum.default", {}), ("sum.dim_IntList", {"dim": [0]}), ("max.default", {}),
                      ("_to_copy.default", {"dtype": F32}), ("bitwise_xor.Scalar", {"other": True})]:
        p.case = f"{op}:bool"
        p.out(p.op(f"aten.{op}", a, **attrs))
    p.case = "where.self:i64"
    p.out(p.op("aten.where.self", a, x, y))
    # mixed int/float/bool promotion
    f = p.param(F32, (4, 6))
    for op in ["add.Tensor", "mul.Tensor", "div.Tensor", "lt.Tensor", "maximum.default"]:
        p.case = f"{op}:f32,i64"
        p.out(p.op(f"aten.{op}", f, y))
    p.case = "add:bool,i64"
    p.out(p.op("aten.add.Tensor", a, y))
    p.case = "mul:f32,bool"
    p.out(p.op("aten.mul.Tensor", f, b))
    for dt in (F64, I64, BOOL, F32):
        p.case = f"_to_copy:{dt}"
        p.out(p.op("aten._to_copy.default", f, dtype=dt))
        p.case = f"to.dtype:i64->{dt}"
        p.out(p.op("aten.to.dtype", x, dtype=dt))


def b_binary_f32(p):
    for ia, (sa, sb) in enumerate(_shapes_pairs()):
        x = p.param(F32, sa, "any")
        y = p.param(F32, sb, "nonzero")
        for op in BINARY:
            p.case = f"{op}{list(sa)}{list(sb)}"
            p.out(p.op(f"aten.{op}", x, y))
    xp = p.param(F32, (5, 7), "pos")
    yp = p.param(F32, (7,), "any")
    p.case = "pow.Tensor_Tensor"
    p.out(p.op("aten.pow.Tensor_Tensor", xp, yp))
    p.case = "pow.Scalar"
    p.out(p.op("aten.pow.Scalar", yp, self=2.0))
    x = p.param(F32, (5, 7))
    y = p.param(F32, (7,), "nonzero")
    for op, attrs in [("add.Tensor", {"alpha": 2}), ("sub.Tensor", {"alpha": 0.5}), ("rsub.Tensor", {"alpha": 3}),
                      ("div.Tensor_mode", {"rounding_mode": "floor"}),
                      ("div.Tensor_mode", {"rounding_mode": "trunc"})]:
        p.case = f"{op}{attrs}"
        p.out(p.op(f"aten.{op}", x, y, **attrs))
    for op, attrs in SCALAR_OPS:
        p.case = f"{op}{attrs}"
        p.out(p.op(f"aten.{op}", x, **attrs))


def b_binary_f64(p):
    x = p.param(F64, (3, 5))
    y = p.param(F64, (5,), "nonzero")
    for op in BINARY:
        p.case = f"{op}:f64"
        p.out(p.op(f"aten.{op}", x, y))
    xp = p.param(F64, (3, 5), "pos")
    p.case = "pow.Tensor_Tensor:f64"
    p.out(p.op("aten.pow.Tensor_Tensor", xp, y))
    for op, attrs in SCALAR_OPS[:20]:
        p.case = f"{op}{attrs}:f64"
        p.out(p.op(f"aten.{op}", x, **attrs))


def b_ternary(p):
    x = p.param(F32, (4, 6))
    y = p.param(F32, (6,))
    z = p.param(F32, (4, 1), "nonzero")
    m = p.param(BOOL, (4, 6))
    m1 = p.param(BOOL, (6,))
    s = p.param(F32, ())
    lo = p.param(F32, (6,))
    for name, ref in [
        ("where.self", p.op("aten.where.self", m, x, y)),
        ("where.self bcast", p.op("aten.where.self", m1, z, y)),
        ("where.ScalarOther", p.op("aten.where.ScalarOther", m, x, other=-1.5)),
        ("where.ScalarSelf", p.op("aten.where.ScalarSelf", m, y, self=0.25)),
        ("where.Scalar", p.op("aten.where.Scalar", m, self=1.0, other=0.0)),
        ("masked_fill.Scalar", p.op("aten.masked_fill.Scalar", x, m1, value=1.5)),
        ("masked_fill.Tensor", p.op("aten.masked_fill.Tensor", x, m, s)),
        ("lerp.Scalar", p.op("aten.lerp.Scalar", x, y, weight=0.3)),
        ("lerp.Tensor", p.op("aten.lerp.Tensor", x, y, z)),
        ("addcmul", p.op("aten.addcmul.default", x, y, z, value=0.5)),
        ("addcdiv", p.op("aten.addcdiv.default", x, y, z, value=2.0)),
        ("clamp.Tensor", p.op("aten.clamp.Tensor", x, lo, max=None)),
        ("clamp.Tensor both", p.op("aten.clamp.Tensor", x, lo, z)),
    ]:
        p.case = name
        p.out(ref)


def b_reductions(p):
    for shape, dims, keep in [((3, 5), [1], False), ((3, 5), [0], True), ((2, 3, 4), [0, 2], False),
                              ((4, 6), [-1], True), ((0, 4), [1], False), ((1, 5), [0], False)]:
        x = p.param(F32, shape)
        tag = f"{list(shape)}{dims}{keep}"
        for op, attrs in [("sum.dim_IntList", {"dim": dims, "keepdim": keep}),
                          ("mean.dim", {"dim": dims, "keepdim": keep})]:
            p.case = op + tag
            p.out(p.op(f"aten.{op}", x, **attrs))
        if shape[0] != 0:
            for op, attrs in [("amax.default", {"dim": dims, "keepdim": keep}),
                              ("amin.default", {"dim": dims, "keepdim": keep}),
                              ("var.correction", {"dim": dims, "keepdim": keep}),
                              ("std.correction", {"dim": dims, "correction": 0}),
                              ("var.dim", {"dim": dims, "unbiased": False, "keepdim": keep}),
                              ("std.dim", {"dim": dims, "unbiased": True, "keepdim": keep})]:
                p.case = op + tag
                p.out(p.op(f"aten.{op}", x, **attrs))
    x = p.param(F32, (3, 5))
    d = p.param(F64, (3, 5))
    for op, t in [("sum.default", x), ("mean.default", x), ("mean.default", d), ("max.default", x),
                  ("min.default", d), ("prod.default", x), ("var.default", x), ("std.default", d),
                  ("var.correction", d)]:
        p.case = f"{op}{t}"
        p.out(p.op(f"aten.{op}", t))
    for shape, dim in [((3, 7), 1), ((3, 7), 0), ((2, 3, 5), -1), ((1, 5), 1), ((4, 1), 1)]:
        x = p.param(F32, shape, "wide")
        for op, attrs in [("_softmax.default", {"dim": dim, "half_to_float": False}),
                          ("_log_softmax.default", {"dim": dim, "half_to_float": False}),
                          ("softmax.int", {"dim": dim}), ("log_softmax.int", {"dim": dim})]:
            p.case = f"{op}{list(shape)}{dim}"
            p.out(p.op(f"aten.{op}", x, **attrs))
    for shape, dim in [((3, 7), 1), ((2, 3, 5), -1), ((4, 1), 0)]:
        p.case = f"_safe_softmax{list(shape)}{dim}"
        p.out(p.op("aten._safe_softmax.default", p.param(F32, shape, "wide"), dim=dim))
    # Their backward ops (training graphs): of the forward's output.
    for shape, dim in [((3, 7), 1), ((2, 3, 5), -1), ((4, 6), 0)]:
        x, g = p.param(F32, shape, "wide"), p.param(F32, shape)
        y = p.op("aten._softmax.default", x, dim=dim, half_to_float=False)
        p.case = f"_softmax_backward_data{list(shape)}{dim}"
        p.out(p.op("aten._softmax_backward_data.default", g, y, dim=dim, input_dtype=F32))
        ly = p.op("aten._log_softmax.default", x, dim=dim, half_to_float=False)
        p.case = f"_log_softmax_backward_data{list(shape)}{dim}"
        p.out(p.op("aten._log_softmax_backward_data.default", g, ly, dim=dim, input_dtype=F32))
    x = p.param(F64, (3, 7))
    p.case = "softmax:f64"
    p.out(p.op("aten.softmax.int", x, dim=1))
    p.case = "log_softmax->f64"
    p.out(p.op("aten.log_softmax.int", p.param(F32, (3, 7)), dim=0, dtype=F64))
    x = p.param(F32, (3, 8))
    w = p.param(F32, (8,))
    b = p.param(F32, (8,))
    p.case = "layer_norm affine"
    p.out(p.op("aten.layer_norm.default", x, w, b, normalized_shape=[8]))
    p.case = "layer_norm 2 dims"
    p.out(p.op("aten.layer_norm.default", p.param(F32, (2, 3, 8)), normalized_shape=[3, 8], eps=1e-3))
    p.case = "rms_norm weight"
    p.out(p.op("aten.rms_norm.default", x, w, normalized_shape=[8], eps=1e-6))
    p.case = "rms_norm plain"
    p.out(p.op("aten.rms_norm.default", p.param(F32, (2, 3, 8)), normalized_shape=[3, 8]))


def b_views(p):
    # Views are lowered only when a kernel consumes them: each feeds a neg.
    x = p.param(F32, (2, 3, 4))
    m = p.param(F32, (6, 4))
    y = p.param(F32, (2, 1, 3))

    def neg(r):
        return p.op("aten.neg.default", r)

    for name, ref in [
        ("permute", p.op("aten.permute.default", x, dims=[2, 0, 1])),
        ("transpose", p.op("aten.transpose.int", x, dim0=0, dim1=2)),
        ("t", p.op("aten.t.default", m)),
        ("unsqueeze", p.op("aten.unsqueeze.default", m, dim=1)),
        ("squeeze.dim", p.op("aten.squeeze.dim", y, dim=1)),
        ("squeeze.dims", p.op("aten.squeeze.dims", y, dim=[1])),
        ("squeeze", p.op("aten.squeeze.default", y)),
        ("expand", p.op("aten.expand.default", y, size=[4, 2, 5, 3])),
        ("slice step", p.op("aten.slice.Tensor", m, dim=0, start=1, end=6, step=2)),
        ("slice neg", p.op("aten.slice.Tensor", m, dim=1, start=-3, end=9223372036854775807)),
        ("select", p.op("aten.select.int", x, dim=1, index=-1)),
        ("view unit dims", p.op("aten.view.default", y, size=[2, 3])),
        ("reshape unit dims", p.op("aten.reshape.default", m, shape=[6, 1, 4])),
        ("_unsafe_view", p.op("aten._unsafe_view.default", y, size=[2, 3, 1])),
        ("alias", p.op("aten.alias.default", m)),
    ]:
        p.case = name
        p.out(neg(ref))
    p.case = "clone"
    p.out(p.op("aten.clone.default", p.op("aten.t.default", m)))
    # contiguous may alias its input in eager, so it is lowered only inside kernels.
    p.case = "contiguous"
    p.out(neg(p.op("aten.contiguous.default", p.op("aten.t.default", m))))
    p.case = "view chain"
    v = p.op("aten.slice.Tensor", p.op("aten.transpose.int", x, dim0=1, dim1=2), dim=1, start=1, end=3)
    p.out(p.op("aten.mul.Tensor", v, v))


def b_fused(p):
    x = p.param(F32, (6, 16), "wide")
    b = p.param(F32, (16,))
    w = p.param(F32, (16,))
    r = p.param(F32, (6, 16))
    m = p.param(BOOL, (6, 16))
    A = p.op
    patterns = {}
    patterns["x*sigmoid(x)"] = A("aten.mul.Tensor", x, A("aten.sigmoid.default", x))
    h = A("aten.add.Tensor", x, b)
    patterns["bias+gelu"] = A("aten.gelu.default", h)
    patterns["bias+gelu tanh*scale"] = A("aten.mul.Tensor", A("aten.gelu.default", h, approximate="tanh"), w)
    patterns["bias+relu"] = A("aten.relu.default", A("aten.add.Tensor", x, b))
    # manual softmax: x - max, exp, / sum
    mx = A("aten.amax.default", x, dim=[1], keepdim=True)
    e = A("aten.exp.default", A("aten.sub.Tensor", x, mx))
    patterns["manual softmax"] = A("aten.div.Tensor", e, A("aten.sum.dim_IntList", e, dim=[1], keepdim=True))
    patterns["manual log_softmax"] = A("aten.sub.Tensor", A("aten.sub.Tensor", x, mx), A(
        "aten.log.default", A("aten.sum.dim_IntList", e, dim=[1], keepdim=True)))
    patterns["softmax(x*scale+mask)"] = A("aten._softmax.default", A("aten.masked_fill.Scalar", A(
        "aten.mul.Scalar", x, other=0.125), m, value=float("-inf")), dim=-1, half_to_float=False)
    # GPT-2's attention as captured (sdpa's math path): scores + additive
    # mask from a bool mask, then _safe_softmax; and its tanh GELU written
    # out with x ** 3.
    add_mask = A("aten.where.self", m, A("aten.mul.Scalar", r, other=0.0), A("aten.sub.Scalar", A(
        "aten.mul.Scalar", r, other=0.0), other=float("inf")))
    patterns["scores+mask+_safe_softmax"] = A("aten._safe_softmax.default", A(
        "aten.add.Tensor", A("aten.mul.Scalar", x, other=0.125), add_mask), dim=-1)
    patterns["gelu_new (x ** 3)"] = A("aten.mul.Tensor", A("aten.mul.Tensor", h, other=0.5), A(
        "aten.add.Tensor", A("aten.tanh.default", A("aten.mul.Tensor", A("aten.add.Tensor", h, A(
            "aten.mul.Tensor", A("aten.pow.Tensor_Scalar", h, exponent=3.0), other=0.044715)),
            other=0.7978845608028654)), other=1.0))
    patterns["residual+layer_norm"] = A("aten.layer_norm.default", A("aten.add.Tensor", x, r), w, b,
                                        normalized_shape=[16], eps=1e-5)
    # rms_norm as HF writes it: x * rsqrt(mean(x^2) + eps) * w
    ms = A("aten.mean.dim", A("aten.pow.Tensor_Scalar", x, exponent=2), dim=[-1], keepdim=True)
    patterns["rms_norm decomposed"] = A("aten.mul.Tensor", w, A("aten.mul.Tensor", x, A(
        "aten.rsqrt.default", A("aten.add.Scalar", ms, other=1e-6))))
    # layer_norm decomposed: (x - mean) / sqrt(var + eps) * w + b
    mu = A("aten.mean.dim", x, dim=[-1], keepdim=True)
    var = A("aten.var.correction", x, dim=[-1], correction=0, keepdim=True)
    patterns["layer_norm decomposed"] = A("aten.add.Tensor", A("aten.mul.Tensor", A("aten.div.Tensor", A(
        "aten.sub.Tensor", x, mu), A("aten.sqrt.default", A("aten.add.Scalar", var, other=1e-5))), w), b)
    patterns["where/masked_fill chain"] = A("aten.where.self", A("aten.gt.Scalar", x, other=0.0), A(
        "aten.masked_fill.Scalar", A("aten.exp.default", A("aten.clamp.default", x, max=4.0)), m, value=0.0),
        A("aten.mul.Scalar", r, other=0.1))
    patterns["sum(exp(x)*w)"] = A("aten.sum.dim_IntList", A("aten.mul.Tensor", A("aten.exp.default", A(
        "aten.clamp.default", x, min=-10.0, max=10.0)), w), dim=[1])
    patterns["mean((a-b)^2)"] = A("aten.mean.default", A("aten.pow.Tensor_Scalar", A("aten.sub.Tensor", x, r),
                                                          exponent=2))
    patterns["amax(relu(x+b))"] = A("aten.amax.default", A("aten.relu.default", A("aten.add.Tensor", x, b)),
                                    dim=[0])
    patterns["swiglu silu(a)*b"] = A("aten.mul.Tensor", A("aten.silu.default", x), r)
    patterns["logsumexp manual"] = A("aten.add.Tensor", A("aten.log.default", A(
        "aten.sum.dim_IntList", e, dim=[1])), A("aten.squeeze.dim", mx, dim=1))
    patterns["transpose+tanh+sum"] = A("aten.sum.dim_IntList", A("aten.tanh.default", A(
        "aten.add.Tensor", A("aten.t.default", x), A("aten.unsqueeze.default", b, dim=1))), dim=[0])
    patterns["int mask -> float scale"] = A("aten.mul.Tensor", x, A("aten._to_copy.default", A(
        "aten.ge.Scalar", r, other=0.0), dtype=F32))
    patterns["mish+hardswish+elu chain"] = A("aten.elu.default", A("aten.hardswish.default", A(
        "aten.mish.default", A("aten.mul.Scalar", x, other=0.5))))
    for name, ref in patterns.items():
        p.case = name
        p.out(ref)


def b_norm_pool(p):
    # Inference forms of batch norm and native_layer_norm: only result 0 is
    # used (the statistics have no uses, so they lower). Max pooling's indices
    # lower too (the training form).
    A = p.op
    x = p.param(F32, (2, 3, 8, 9), "wide")
    w, b, rm = p.param(F32, (3,)), p.param(F32, (3,)), p.param(F32, (3,))
    rv = p.param(F32, (3,), "pos")
    p.case = "native_batch_norm eval"
    p.out(A("aten.native_batch_norm.default", x, w, b, rm, rv, training=False, momentum=0.1, eps=1e-5).result(0))
    p.case = "native_batch_norm eval no affine"
    p.out(A("aten.native_batch_norm.default", x, rm, rv, weight=None, bias=None, training=False, momentum=0.1,
            eps=1e-3).result(0))
    x2 = p.param(F32, (5, 3))
    p.case = "_native_batch_norm_legit_no_training [N, C]"
    p.out(A("aten._native_batch_norm_legit_no_training.default", x2, w, b, rm, rv, momentum=0.1,
            eps=1e-5).result(0))
    p.case = "native_batch_norm training, batch statistics"
    p.out(A("aten.native_batch_norm.default", x, w, b, running_mean=None, running_var=None, training=True,
            momentum=0.1, eps=1e-5).result(0))
    # BiT's weight standardisation: a [C, K, 1, 1] weight viewed as [1, C, K]
    # (the view maps two size-1 dims to constants, and the statistics reduce
    # over the size-1 dim 0 as well), batch statistics, no affine.
    wv = A("aten.view.default", p.param(F32, (16, 8, 1, 1), "wide"), size=[1, 16, 8])
    p.case = "native_batch_norm training of a unit-dim view (weight standardisation)"
    p.out(A("aten.native_batch_norm.default", wv, weight=None, bias=None, running_mean=None, running_var=None,
            training=True, momentum=0.0, eps=1e-8).result(0))
    p.case = "sum over a size-1 dim of that view, dropped"
    p.out(A("aten.sum.dim_IntList", wv, dim=[0, 2]))
    p.case = "amax over size-1 dims only, kept"
    p.out(A("aten.amax.default", wv, dim=[0], keepdim=True))
    xd = p.param(F64, (2, 3, 4))
    wd, bd, rmd, rvd = p.param(F64, (3,)), p.param(F64, (3,)), p.param(F64, (3,)), p.param(F64, (3,), "pos")
    p.case = "native_batch_norm eval f64"
    p.out(A("aten.native_batch_norm.default", xd, wd, bd, rmd, rvd, training=False, momentum=0.1,
            eps=1e-5).result(0))
    h = p.param(F32, (2, 5, 16), "wide")
    lw, lb = p.param(F32, (16,)), p.param(F32, (16,))
    p.case = "native_layer_norm"
    p.out(A("aten.native_layer_norm.default", h, lw, lb, normalized_shape=[16], eps=1e-5).result(0))
    p.case = "native_layer_norm no affine, 2 dims"
    p.out(A("aten.native_layer_norm.default", h, weight=None, bias=None, normalized_shape=[5, 16],
            eps=1e-6).result(0))
    for name, attrs in [("2x2", dict(kernel_size=[2, 2])),
                        ("3x2 stride 2,1 dilation 1,2", dict(kernel_size=[3, 2], stride=[2, 1], dilation=[1, 2])),
                        ("3 stride 2", dict(kernel_size=[3], stride=[2])),
                        ("2x2 ceil_mode exact", dict(kernel_size=[2, 2], stride=[2, 3], ceil_mode=True))]:
        p.case = "max_pool2d " + name
        p.out(A("aten.max_pool2d.default", x, **attrs))
        p.case = "max_pool2d_with_indices " + name
        pool = A("aten.max_pool2d_with_indices.default", x, **attrs)
        p.out(pool.result(0))
        p.case = "max_pool2d_with_indices indices " + name
        p.out(pool.result(1))
    p.case = "max_pool2d rank 3"
    p.out(A("aten.max_pool2d.default", p.param(F32, (3, 6, 7)), kernel_size=[2, 3]))
    # The conv block's tails: bn -> relu, and bn -> gelu -> max_pool2d.
    bn = A("aten.native_batch_norm.default", x, w, b, rm, rv, training=False, momentum=0.1, eps=1e-5).result(0)
    p.case = "bn+relu"
    p.out(A("aten.relu.default", bn))
    p.case = "bn+gelu+max_pool2d"
    p.out(A("aten.max_pool2d_with_indices.default", A("aten.gelu.default", bn), kernel_size=[2, 2],
            stride=[2, 2]).result(0))
    r = p.param(F32, (2, 5, 16))
    p.case = "residual+native_layer_norm"
    p.out(A("aten.native_layer_norm.default", A("aten.add.Tensor", h, r), lw, lb, normalized_shape=[16],
            eps=1e-5).result(0))


def b_parallel(p):
    # Big enough (>= 64K elements) to be split over rows across threads.
    x = p.param(F32, (512, 300), "wide")
    b = p.param(F32, (300,))
    h = p.op("aten.add.Tensor", x, b)
    p.case = "parallel gelu(x+b)"
    p.out(p.op("aten.gelu.default", h))
    p.case = "parallel softmax"
    p.out(p.op("aten._softmax.default", h, dim=1, half_to_float=False))
    p.case = "parallel row sum of tanh"
    p.out(p.op("aten.sum.dim_IntList", p.op("aten.tanh.default", h), dim=[1], keepdim=True))


BATCHES = {name[2:]: fn for name, fn in globals().items() if name.startswith("b_")}

# Tolerances: f32 kernels use vectorised polynomial approximations of the
# transcendental functions (a few ulp) and reassociate reductions.
TOL = {torch.float32: dict(rtol=2e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=1e-3, atol=1e-3)}


@functools.cache
def program(name: str) -> Program:
    p = Program()
    BATCHES[name](p)
    return p


@functools.cache
def compiled(name: str):
    return _C.mlir.compile(program(name).gir(name))


def compare(name, got, ref, where):
    for i, (g, r) in enumerate(zip(got, ref)):
        case = program(name).output_case[i]
        assert g.dtype == r.dtype and g.shape == r.shape, f"{where} {case}: {g.dtype}{list(g.shape)} vs " \
                                                          f"{r.dtype}{list(r.shape)}"
        tol = TOL.get(r.dtype, dict(rtol=0, atol=0))
        torch.testing.assert_close(g, r, equal_nan=True, msg=lambda m: f"{where} {case}: {m}", **tol)


def diagnose(name: str) -> str:
    """Compiles each case of a batch alone and reports the ones that fall back."""
    full = program(name)
    bad = []
    for case in dict.fromkeys(full.output_case):
        p = full.subset({case})
        e = _C.mlir.compile(p.gir("one"))
        try:
            e.run(p.inputs(1))
        except Exception as exc:  # noqa: BLE001 - reported, not hidden
            bad.append(f"{case}: raised {exc}")
            continue
        s = e.stats()
        if s["fallback_reasons"] or s["region_fallback_runs"]:
            bad.append(f"{case}: {s['fallback_reasons']}")
    return "\n".join(bad)


def run_checked(name: str, layout: str):
    e = compiled(name)
    p = program(name)
    inputs = p.inputs(seed=1 + (layout == "strided"), layout=layout)
    before = e.stats()["kernel_launches"]
    got = e.run(inputs)
    s = e.stats()
    ok = (s["regions"] == 1 and s["fallback_nodes"] == 0 and not s["fallback_reasons"]
          and s["region_fallback_runs"] == 0 and s["kernel_launches"] == before + 1)
    if not ok:
        pytest.fail(f"batch {name} ({layout}) did not run as one kernel: {s}\n{e.describe()}\n{diagnose(name)}")
    plan = e.describe()
    assert "fallback" not in plan, plan
    for op in p.ops():
        assert op in plan, f"{op} not in a kernel region:\n{plan}"
    return got, p.eager(inputs)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("name", list(BATCHES))
def test_batch_matches_eager(name, layout):
    got, ref = run_checked(name, layout)
    compare(name, got, ref, f"{name}/{layout}")


def test_parallel_chunks_match_single_thread():
    n = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        e = _C.mlir.compile(program("parallel").gir("par2"))
        p = program("parallel")
        inputs = p.inputs(3)
        compare("parallel", e.run(inputs), p.eager(inputs), "parallel/2 threads")
        assert e.stats()["region_fallback_runs"] == 0 and e.stats()["kernel_launches"] == 1
    finally:
        torch.set_num_threads(n)


def test_every_lowered_op_is_covered():
    covered = set()
    for name in BATCHES:
        covered |= program(name).ops()
    lowered = set(_C.mlir.lowered_ops())
    missing = sorted(lowered - covered)
    assert not missing, f"lowered ops without a numerics case: {missing}"
    assert len(lowered) >= 60


def test_at_least_ten_fused_patterns():
    # Each pattern is a multi-op chain; the "fused" batch runs all of them as
    # one kernel (test_batch_matches_eager checks that nothing falls back).
    p = program("fused")
    assert len(set(p.output_case)) >= 10
    assert len(p.nodes) >= 3 * len(set(p.output_case))


def test_pow_special_exponents_emit_no_powf():
    # ATen's CPU pow special-cases these exponents (x*x*x, 1/(x*x), rsqrt, ...);
    # the kernel uses the same operations instead of a scalar libm powf call
    # per element (transformers' tanh GELU computes x ** 3.0). Other exponents
    # still use math.powf.
    for e, powf in [(2, False), (3, False), (-1, False), (-2, False), (0.5, False), (-0.5, False), (2.5, True)]:
        p = Program()
        p.out(p.op("aten.pow.Tensor_Scalar", p.param(F32, (4, 8), "pos"), exponent=float(e)))
        exe = _C.mlir.compile(p.gir("pow"))
        assert ("math.powf" in exe.emit("kernel")) == powf, (e, exe.emit("kernel"))
        inputs = p.inputs(5)
        compare_program(p, exe.run(inputs), p.eager(inputs), f"pow {e}")
        assert exe.stats()["kernel_launches"] == 1 and exe.stats()["region_fallback_runs"] == 0


def compare_program(p, got, ref, where):
    for g, r in zip(got, ref):
        torch.testing.assert_close(g, r, equal_nan=True, msg=lambda m: f"{where}: {m}", **TOL[r.dtype])


def test_safe_softmax_fully_masked_rows_give_zero():
    # _safe_softmax (sdpa's math path) gives 0 for rows that are all -inf,
    # where softmax gives NaN; partly masked rows and NaN rows are as softmax.
    p = Program()
    x = p.param(F32, (5, 6))
    p.out(p.op("aten._safe_softmax.default", x, dim=1))
    p.out(p.op("aten._safe_softmax.default", x, dim=0))
    exe = _C.mlir.compile(p.gir("safe"))
    assert "fallback" not in exe.describe(), exe.describe()
    t = torch.randn(5, 6)
    t[1] = float("-inf")
    t[2, :4] = float("-inf")
    t[3, 2] = float("nan")
    t[:, 5] = float("-inf")
    got = exe.run([t])
    ref = [torch.ops.aten._safe_softmax(t, 1), torch.ops.aten._safe_softmax(t, 0)]
    compare_program(p, got, ref, "_safe_softmax")
    assert torch.equal(got[0][1], torch.zeros(6)) and torch.equal(got[1][:, 5], torch.zeros(5))
    assert exe.stats()["kernel_launches"] == 1 and exe.stats()["region_fallback_runs"] == 0
