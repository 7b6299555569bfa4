"""Edge values of the fast-math approximations (csrc/lib/backend/mlir/MathApprox.cpp
and MLIR's polynomial approximations behind them) against eager PyTorch.

Every float unary op whose lowering goes through an approximated exp, tanh or
erf (or the fast sigmoid divide) runs as a kernel on fixed inputs: +-0,
denormals, tiny and large magnitudes, the values around the float32 overflow
and underflow thresholds of exp (+-86.5 ... +-89), +-inf, nan, plus dense grids
on [-12, 12] and [-100, 100]. The input is long enough that the vectorised loop
(16 lanes, interleaved) and its scalar remainder both run. Results must match
eager float32 within the suite's tolerances (nan exactly where eager gives nan,
infinities of the same sign), or, where eager float32 overflows in an
intermediate, the true value (eager float64 rounded); float64 kernels (libm,
no approximation) must match to 1e-12. A second check bounds the float32 error
against float64 eager results, so an approximation cannot drift up to the
tolerance unnoticed.
"""
from __future__ import annotations

import pytest
import torch

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

EDGES = [0.0, -0.0, 1e-40, -1e-40, 1e-38, -1e-38, 1e-30, -1e-30, 1e-7, -1e-7, 1e-4, -1e-4, 0.5, -0.5,
         1.0, -1.0, 3.9, -3.9, 4.0, -4.0, 4.1, -4.1, 7.9, -7.9, 8.0, -8.0, 9.0, -9.0, 10.0, -10.0,
         20.0, -20.0, 80.0, -80.0, 86.5, -86.5, 87.0, -87.0, 87.3, -87.3, 87.5, -87.5, 88.0, -88.0,
         88.3, -88.3, 88.7, -88.7, 88.73, -88.73, 89.0, -89.0, 100.0, -100.0, 1e4, -1e4, 1e30, -1e30,
         3.4e38, -3.4e38, float("inf"), float("-inf"), float("nan")]

# (overload, attrs) of the ops built on exp / tanh / erf / sigmoid.
OPS = [("exp.default", {}), ("expm1.default", {}), ("tanh.default", {}), ("erf.default", {}),
       ("erfc.default", {}), ("sigmoid.default", {}), ("silu.default", {}), ("gelu.default", {}),
       ("gelu.default", {"approximate": "tanh"}), ("softplus.default", {}), ("mish.default", {}),
       ("elu.default", {}), ("sinh.default", {}), ("cosh.default", {})]

# Bound on |f32 kernel - f64 eager| / max(|f64 eager|, 1) over the finite
# outputs of inputs in [-12, 12]: the approximations are ~1e-7..4e-7.
ABS_BOUND = 2e-6


def inputs(dtype):
    x = torch.tensor(EDGES, dtype=dtype)
    return torch.cat([x, torch.linspace(-12, 12, 2001, dtype=dtype), torch.linspace(-100, 100, 1001, dtype=dtype)])


def kernel(op, attrs, dtype, n):
    ty = {torch.float32: "f32", torch.float64: "f64"}[dtype]
    t = f"tensor<{ty}, [{n}], cpu>"
    extra = ""
    if attrs:
        extra = " {" + ", ".join(f'{k} = "{v}"' if isinstance(v, str) else f"{k} = {v}"
                                 for k, v in attrs.items()) + "}"
    return f"graph @g(%x: {t}) -> {t} {{\n  %0 = aten.{op}(%x){extra} : {t}\n  return %0\n}}\n"


def eager(op, attrs, x):
    name, _ = op.split(".")
    return getattr(torch.ops.aten, name).default(x, **attrs)


def run(op, attrs, x):
    e = _C.mlir.compile(kernel(op, attrs, x.dtype, x.numel()))
    (y,) = e(x)
    s = e.stats()
    assert s["kernel_launches"] == 1 and s["region_fallback_runs"] == 0 and not s["fallback_reasons"], s
    return y


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op,attrs", OPS, ids=[o + ("_" + "_".join(a.values()) if a else "") for o, a in OPS])
def test_edge_values_match_eager(op, attrs, dtype):
    x = inputs(dtype)
    got, ref = run(op, attrs, x), eager(op, attrs, x)
    # Where eager float32 overflows in an intermediate (sinh/cosh from 88.73 on
    # give inf, gelu(inf) gives nan) the kernel may give the true value
    # instead: eager float64 rounded to float32. isclose with equal_nan is
    # exact on nan and on infinities (sign included).
    exact = eager(op, attrs, x.double()).to(dtype)
    tol = dict(rtol=2e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-12, atol=1e-12)
    bad = ~(torch.isclose(got, ref, equal_nan=True, **tol) | torch.isclose(got, exact, equal_nan=True, **tol))
    where = [(x[i].item(), got[i].item(), ref[i].item()) for i in bad.nonzero().flatten()[:10].tolist()]
    assert not bad.any(), f"{op}{attrs or ''} {dtype}: (x, kernel, eager) {where}"


@pytest.mark.parametrize("op,attrs", OPS, ids=[o + ("_" + "_".join(a.values()) if a else "") for o, a in OPS])
def test_f32_error_against_f64(op, attrs):
    x = torch.linspace(-12, 12, 24001, dtype=torch.float32)
    got = run(op, attrs, x).double()
    ref = eager(op, attrs, x.double())
    fin = torch.isfinite(ref) & torch.isfinite(got)
    err = ((got - ref).abs() / ref.abs().clamp_min(1.0))[fin]
    assert err.max().item() < ABS_BOUND, f"{op}{attrs or ''}: max error {err.max().item():.3g}"


# Dense sweeps in float32 ulps (of the exact result, eager float64 rounded) for
# the approximations themselves: exp (degree-5 polynomial, 2.2 ulp measured),
# sigmoid/silu (exp with one clamp and the rcp14 + Newton divide, 3.3/3.7),
# tanh and erf (rational forms, 4.4/5.5). exp stops at -86: below about
# -87.3 + 0.35 its results are flushed to 0 (documented in MathApprox.cpp).
ULP_SWEEPS = [("exp", -86.0, 88.7, 3.0), ("exp", -3.0, 3.0, 3.0), ("sigmoid", -87.0, 30.0, 4.0),
              ("silu", -80.0, 80.0, 4.5), ("tanh", -9.0, 9.0, 5.5), ("erf", -4.5, 4.5, 6.5)]


def ulps(got, exact):
    """|got - exact| in units of the float32 spacing at the exact value."""
    r = exact.float().abs()
    spacing = (torch.nextafter(r, torch.tensor(float("inf"))) - r).double()
    return (got.double() - exact).abs() / spacing


@pytest.mark.parametrize("op,lo,hi,bound", ULP_SWEEPS, ids=[f"{o}_{lo:g}_{hi:g}" for o, lo, hi, _ in ULP_SWEEPS])
def test_f32_ulps_dense_sweep(op, lo, hi, bound):
    x = torch.linspace(lo, hi, 400_001, dtype=torch.float32)
    got = run(op + ".default", {}, x)
    err = ulps(got, eager(op + ".default", {}, x.double()))
    i = err.argmax().item()
    assert err.max().item() <= bound, f"{op}: {err.max().item():.2f} ulp at x = {x[i].item()!r}"
    # The bulk is near-correctly rounded, not just under the worst case.
    assert err.mean().item() < 1.0, f"{op}: mean {err.mean().item():.3f} ulp"


# max/min against a constant (MathApprox.cpp MinMaxWithConstant: one
# vmaxps/vminps): exactly eager's values on the edge inputs, NaN propagating
# and the sign of zero included (torch.relu(-0.0) is -0.0).
CLAMPS = [("relu.default", {}), ("relu6.default", {}), ("clamp_min.default", {"min": 0.0}),
          ("clamp_min.default", {"min": -2.5}), ("clamp_max.default", {"max": 0.0}),
          ("clamp.default", {"min": -2.0, "max": 2.0}), ("hardtanh.default", {})]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op,attrs", CLAMPS, ids=[o + "_" + "_".join(f"{k}{v}" for k, v in a.items())
                                                  for o, a in CLAMPS])
def test_min_max_with_constant_exact(op, attrs, dtype):
    x = inputs(dtype)
    got, ref = run(op, attrs, x), eager(op, attrs, x)
    same = (got == ref) | (got.isnan() & ref.isnan())
    assert same.all(), f"{op}: (x, kernel, eager) {[(x[i].item(), got[i].item(), ref[i].item()) for i in (~same).nonzero().flatten()[:5].tolist()]}"
    zero = ref == 0
    assert torch.equal(got[zero].signbit(), ref[zero].signbit()), f"{op}: sign of zero differs from eager"
