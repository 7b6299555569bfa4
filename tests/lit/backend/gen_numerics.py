"""Generates Inputs/numerics.gir: one small GIR graph per (op, dtypes, shapes) case,
with result types taken from eager PyTorch, for the xpu numerics lit test
(numerics.test runs every chunk through the backend and through the ATen path).

    python tests/lit/backend/gen_numerics.py > tests/lit/backend/Inputs/numerics.gir
"""
import torch

DT = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "bool",
      torch.int32: "i32", torch.float16: "f16"}
NAMES = {v: k for k, v in DT.items()}


def ttype(dtype, shape):
    return f"tensor<{dtype}, [{', '.join(map(str, shape))}], cpu>"


def attr(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if "e" in repr(v) or "." in repr(v) else repr(v) + ".0"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(attr(x) for x in v) + "]"
    if isinstance(v, str):
        return f'"{v}"'
    return str(v)


def sample(dtype, shape):
    t = NAMES[dtype]
    if t is torch.bool:
        return torch.zeros(shape, dtype=torch.bool)
    return torch.ones(shape, dtype=t)


def case(op, inputs, attrs=None, call=None, then=None):
    """op: GIR name; inputs: [(dtype, shape)]; attrs: schema kwargs; call: torch fn;
    then: a unary GIR op applied to the (single) result, so that a view is
    consumed by a kernel (views returned from a graph stay ATen views)."""
    attrs = attrs or {}
    name, _, overload = op[len("aten."):].partition(".")
    fn = call or getattr(getattr(torch.ops.aten, name), overload or "default")
    out = fn(*[sample(d, s) for d, s in inputs], **attrs)
    outs = out if isinstance(out, tuple) else (out,)
    params = ", ".join(f"%a{i}: {ttype(d, s)}" for i, (d, s) in enumerate(inputs))
    rtypes = [ttype(DT[o.dtype], list(o.shape)) for o in outs]
    ops = ", ".join(f"%a{i}" for i in range(len(inputs)))
    at = " {" + ", ".join(f"{k} = {attr(v)}" for k, v in attrs.items()) + "}" if attrs else ""
    res = ", ".join(f"%r{i}" for i in range(len(outs)))
    rt = rtypes[0] if len(rtypes) == 1 else "(" + ", ".join(rtypes) + ")"
    body = f"  {res} = {op}({ops}){at} : {rt}\n"
    if then:
        body += f"  %s0 = {then}({res}) : {rt}\n"
        res = "%s0"
    return f"graph @case({params}) -> {rt} {{\n{body}  return {res}\n}}\n"


F = "f32"
cases = []
UNARY_F = ["exp", "log", "tanh", "sqrt", "rsqrt", "sin", "cos", "erf", "log1p", "expm1", "exp2",
           "log2", "abs", "neg", "relu", "sigmoid", "silu", "gelu", "floor", "ceil", "round", "trunc",
           "reciprocal", "sign", "hardsigmoid", "hardswish", "mish", "softplus", "elu", "relu6",
           "square", "frac", "atan", "sinh", "cosh", "hardtanh", "leaky_relu", "erfc", "tan",
           "log10", "isnan", "logical_not"]
for op in UNARY_F:
    for shape in ([2, 3], [0, 3], [1], []):
        cases.append(case(f"aten.{op}.default", [(F, shape)]))
    cases.append(case(f"aten.{op}.default", [("f64", [4, 5])]))
cases.append(case("aten.gelu.default", [(F, [3, 7])], {"approximate": "tanh"}))
cases.append(case("aten.leaky_relu.default", [(F, [3, 7])], {"negative_slope": 0.2}))
cases.append(case("aten.hardtanh.default", [(F, [3, 7])], {"min_val": -0.5, "max_val": 0.25}))
cases.append(case("aten.elu.default", [(F, [3, 7])], {"alpha": 0.5}))
cases.append(case("aten.softplus.default", [(F, [3, 7])], {"beta": 2.0, "threshold": 1.0}))
for op in ["abs", "neg", "relu", "sign", "square"]:
    cases.append(case(f"aten.{op}.default", [("i64", [2, 5])]))

BINARY = ["add.Tensor", "sub.Tensor", "mul.Tensor", "div.Tensor", "maximum.default", "minimum.default",
          "pow.Tensor_Tensor", "remainder.Tensor", "fmod.Tensor", "atan2.default", "eq.Tensor",
          "ne.Tensor", "lt.Tensor", "le.Tensor", "gt.Tensor", "ge.Tensor", "logical_and.default",
          "logical_or.default", "logical_xor.default", "floor_divide.default"]
for op in BINARY:
    for a, b in (([2, 3], [2, 3]), ([2, 3], [3]), ([4, 1, 3], [5, 1]), ([1], [2, 2]), ([0, 3], [3]),
                 ([], [3])):
        cases.append(case(f"aten.{op}", [(F, a), (F, b)]))
    cases.append(case(f"aten.{op}", [("f64", [3, 4]), ("f64", [4])]))
    if op not in ("pow.Tensor_Tensor", "atan2.default", "div.Tensor", "remainder.Tensor", "fmod.Tensor",
                  "floor_divide.default"):
        cases.append(case(f"aten.{op}", [("i64", [3, 4]), ("i64", [4])]))
    cases.append(case(f"aten.{op}", [(F, [3, 4]), ("i64", [4])]))
for op in ["bitwise_and.Tensor", "bitwise_or.Tensor", "bitwise_xor.Tensor", "logical_and.default"]:
    cases.append(case(f"aten.{op}", [("bool", [3, 4]), ("bool", [4])]))
    cases.append(case(f"aten.{op}", [("i64", [3, 4]), ("i64", [3, 4])]))
cases.append(case("aten.add.Tensor", [(F, [2, 3]), (F, [2, 3])], {"alpha": 2}))
cases.append(case("aten.sub.Tensor", [(F, [2, 3]), (F, [3])], {"alpha": 0.5}))
cases.append(case("aten.div.Tensor_mode", [(F, [2, 3]), (F, [3])], {"rounding_mode": "floor"}))
cases.append(case("aten.div.Tensor_mode", [(F, [2, 3]), (F, [3])], {"rounding_mode": "trunc"}))

cases.append(case("aten.add.Tensor", [("f16", [2, 3]), ("f16", [3])]))
cases.append(case("aten.mul.Tensor", [("i32", [2, 3]), ("i64", [3])]))
cases.append(case("aten.bitwise_not.default", [("i64", [2, 3])]))
cases.append(case("aten.bitwise_not.default", [("bool", [2, 3])]))

for op, other in [("add.Scalar", 2.5), ("sub.Scalar", 1), ("mul.Scalar", -3.0), ("div.Scalar", 4.0),
                  ("lt.Scalar", 0.25), ("eq.Scalar", 0), ("ge.Scalar", -1), ("remainder.Scalar", 0.7),
                  ("fmod.Scalar", 1.5), ("rsub.Scalar", 2.0)]:
    cases.append(case(f"aten.{op}", [(F, [3, 4])], {"other": other}))
for e in [2, 3, 0.5, -1, 1.7]:
    cases.append(case("aten.pow.Tensor_Scalar", [(F, [3, 4])], {"exponent": e}))
cases.append(case("aten.pow.Tensor_Scalar", [("i64", [3, 4])], {"exponent": 2}))
cases.append(case("aten.clamp.default", [(F, [3, 4])], {"min": -0.5, "max": 0.5}))
cases.append(case("aten.clamp.default", [(F, [3, 4])], {"min": 0.0}))
cases.append(case("aten.clamp_min.default", [(F, [3, 4])], {"min": 0.1}))
cases.append(case("aten.clamp_max.default", [("i64", [3, 4])], {"max": 1}))
cases.append(case("aten.threshold.default", [(F, [3, 4])], {"threshold": 0.1, "value": 20.0}))
cases.append(case("aten.where.self", [("bool", [3, 4]), (F, [3, 4]), (F, [4])]))
cases.append(case("aten.where.self", [("bool", [3, 1]), ("i64", [4]), ("i64", [3, 4])]))
cases.append(case("aten.masked_fill.Scalar", [(F, [3, 4]), ("bool", [4])], {"value": 1.5}))
cases.append(case("aten.lerp.Scalar", [(F, [3, 4]), (F, [4])], {"weight": 0.3}))
cases.append(case("aten.lerp.Tensor", [(F, [3, 4]), (F, [4]), (F, [3, 1])]))
cases.append(case("aten.addcmul.default", [(F, [3, 4]), (F, [4]), (F, [3, 1])], {"value": 0.5}))
cases.append(case("aten.addcdiv.default", [(F, [3, 4]), (F, [4]), (F, [3, 4])], {"value": 2.0}))
cases.append(case("aten.clone.default", [(F, [3, 4])]))
cases.append(case("aten._to_copy.default", [(F, [3, 4])], {"dtype": torch.float64},
                  call=lambda x, dtype: x.to(dtype)).replace('dtype = torch.float64', 'dtype = "f64"'))
cases.append(case("aten._to_copy.default", [(F, [3, 4])], {"dtype": torch.int64},
                  call=lambda x, dtype: x.to(dtype)).replace('dtype = torch.int64', 'dtype = "i64"'))
cases.append(case("aten._to_copy.default", [("i64", [3, 4])], {"dtype": torch.bool},
                  call=lambda x, dtype: x.to(dtype)).replace('dtype = torch.bool', 'dtype = "bool"'))

for shape, dim, keep in (([3, 5], [1], False), ([3, 5], [0], True), ([2, 3, 4], [0, 2], False),
                         ([4, 6], [-1], True), ([0, 4], [1], False)):
    cases.append(case("aten.sum.dim_IntList", [(F, shape)], {"dim": dim, "keepdim": keep}))
    cases.append(case("aten.mean.dim", [(F, shape)], {"dim": dim, "keepdim": keep}))
    if shape[0] != 0:
        cases.append(case("aten.amax.default", [(F, shape)], {"dim": dim, "keepdim": keep}))
        cases.append(case("aten.amin.default", [(F, shape)], {"dim": dim, "keepdim": keep}))
        cases.append(case("aten.var.correction", [(F, shape)], {"dim": dim, "keepdim": keep}))
        cases.append(case("aten.std.correction", [(F, shape)], {"dim": dim, "correction": 0}))
cases.append(case("aten.sum.default", [(F, [3, 5])]))
cases.append(case("aten.sum.default", [("i64", [3, 5])]))
cases.append(case("aten.sum.default", [("bool", [3, 5])]))
cases.append(case("aten.mean.default", [("f64", [3, 5])]))
cases.append(case("aten.amax.default", [("i64", [3, 5])], {"dim": [1]}))
cases.append(case("aten.prod.default", [(F, [2, 3])]))
for shape, dim in (([3, 7], 1), ([3, 7], 0), ([2, 3, 5], -1), ([1, 5], 1)):
    cases.append(case("aten._softmax.default", [(F, shape)], {"dim": dim, "half_to_float": False}))
    cases.append(case("aten._log_softmax.default", [(F, shape)], {"dim": dim, "half_to_float": False}))
cases.append(case("aten.softmax.int", [("f64", [3, 7])], {"dim": 1}))
cases.append(case("aten.layer_norm.default", [(F, [3, 8]), (F, [8]), (F, [8])], {"normalized_shape": [8]},
                  call=lambda x, w, b, normalized_shape: torch.layer_norm(x, normalized_shape, w, b)))
cases.append(case("aten.layer_norm.default", [(F, [2, 3, 8])], {"normalized_shape": [3, 8], "eps": 1e-3}))

cases.append(case("aten.permute.default", [(F, [2, 3, 4])], {"dims": [2, 0, 1]}, then="aten.neg.default"))
cases.append(case("aten.transpose.int", [(F, [2, 3, 4])], {"dim0": 0, "dim1": 2}, then="aten.neg.default"))
cases.append(case("aten.t.default", [(F, [2, 3])], then="aten.neg.default"))
cases.append(case("aten.unsqueeze.default", [(F, [2, 3])], {"dim": 1}, then="aten.neg.default"))
cases.append(case("aten.squeeze.dim", [(F, [2, 1, 3])], {"dim": 1}, then="aten.neg.default"))
cases.append(case("aten.expand.default", [(F, [2, 1, 3])], {"size": [4, 2, 5, 3]}, then="aten.neg.default"))
cases.append(case("aten.slice.Tensor", [(F, [6, 4])], {"dim": 0, "start": 1, "end": 6, "step": 2}, then="aten.neg.default"))
cases.append(case("aten.slice.Tensor", [(F, [6, 4])], {"dim": 1, "start": -3}, then="aten.neg.default"))
cases.append(case("aten.select.int", [(F, [6, 4])], {"dim": 1, "index": -1}, then="aten.neg.default"))
cases.append(case("aten.view.default", [(F, [6, 4])], {"size": [6, 1, 4]}, then="aten.neg.default"))

print("// Generated by tests/lit/backend/gen_numerics.py; do not edit.")
print("\n// -----\n\n".join(cases), end="")
