"""Note [Native meta kernels] (csrc/lib/backend/aten/AtenNativeMeta.cpp): the
capture recorder gets the meta results of common ATen ops from libtorch's C++
meta functions. Every rule is checked against the op run on CPU tensors (sizes,
strides, dtype; an error where eager raises one) and against torch's own
(Python) meta kernel; and a first capture of a model-like function imports
neither sympy nor torch.fx.experimental.symbolic_shapes (a fresh process)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from xacc import _C

ROOT = Path(__file__).resolve().parents[3]
A = torch.ops.aten
f32, f16, i64, b8 = torch.float32, torch.float16, torch.int64, torch.bool


def T(*shape, dtype=f32, t=False):
    """A CPU tensor of `shape` (transposed last two dims when t: non-contiguous)."""
    if dtype == b8:
        x = torch.rand(*shape) > 0.5
    elif dtype == i64:
        x = torch.randint(0, 3, shape)
    else:
        x = torch.randn(*shape).to(dtype)
    return x.transpose(-1, -2).contiguous().transpose(-1, -2) if t else x


# (op, args builder, kwargs) per case; several per op where the layout or the
# dtypes change the result. Cases where eager raises check that the rule raises
# too (or declines, leaving the error to torch's kernel).
CASES = [
    (A.add.Tensor, lambda: (T(2, 3), T(3)), {"alpha": 2}),
    (A.add.Tensor, lambda: (T(3, 2, t=True), T(3, 2, dtype=f16)), {}),
    (A.add.Tensor, lambda: (T(2, 3), T(4)), {}),  # raises
    (A.sub.Tensor, lambda: (T(4, 1), T(1, 5, dtype=i64)), {}),
    # Python numbers for Tensor arguments (`x * 2.5` reaches the recorder so):
    # wrapped numbers, which do not decide the result dtype within a category.
    (A.mul.Tensor, lambda: (T(2, 3, dtype=i64), 2.5), {}),
    (A.mul.Tensor, lambda: (T(2, 3, dtype=f16), 3), {}),
    (A.add.Tensor, lambda: (T(2, 3, dtype=b8), True), {}),
    (A.div.Tensor, lambda: (T(2, 3, dtype=i64), 2), {}),
    (A.add.Scalar, lambda: (T(2, 3, dtype=i64), 1.5), {"alpha": 2}),
    (A.sub.Scalar, lambda: (T(3, 2, t=True), 1), {}),
    (A.mul.Scalar, lambda: (T(2, 3, dtype=f16), 0.5), {}),
    (A.mul.Scalar, lambda: (T(2, 3, dtype=b8), 2), {}),
    (A.div.Scalar, lambda: (T(2, 3, dtype=i64), 4), {}),
    (A.mul.Tensor, lambda: (T(2, 3, dtype=i64), T(2, 3)), {}),
    (A.div.Tensor, lambda: (T(2, 3, dtype=i64), T(2, 3, dtype=i64)), {}),
    (A.bitwise_and.Tensor, lambda: (T(2, 3, dtype=b8), T(3, dtype=b8)), {}),
    (A.maximum.default, lambda: (T(2, 3), T(2, 1)), {}),
    (A.minimum.default, lambda: (T(2, 3, t=True), T(2, 3)), {}),
    (A.mm.default, lambda: (T(4, 5), T(5, 6, t=True)), {}),
    (A.mm.default, lambda: (T(4, 5), T(6, 6)), {}),  # raises
    (A.bmm.default, lambda: (T(2, 4, 5), T(2, 5, 3)), {}),
    (A.addmm.default, lambda: (T(6), T(4, 5), T(6, 5).t()), {"beta": 0.5}),
    (A.baddbmm.default, lambda: (T(2, 4, 3), T(2, 4, 5), T(2, 5, 3)), {}),
    (A._softmax.default, lambda: (T(2, 3, t=True), -1, False), {}),
    (A._softmax.default, lambda: (T(2, 3, dtype=torch.bfloat16), 1, False), {}),
    (A._log_softmax.default, lambda: (T(4, 3), 1, False), {}),
    (A.gelu.default, lambda: (T(3, 2, t=True),), {"approximate": "tanh"}),
    (A.tanh.default, lambda: (T(2, 3, dtype=i64),), {}),
    (A.exp.default, lambda: (T(2, 3),), {}),
    (A.log.default, lambda: (T(3, 2, t=True),), {}),
    (A.neg.default, lambda: (T(2, 3, dtype=i64),), {}),
    (A.bitwise_not.default, lambda: (T(2, 3, dtype=b8),), {}),
    (A.sigmoid.default, lambda: (T(2, 3),), {}),
    (A.rsqrt.default, lambda: (T(2, 3),), {}),
    (A.sqrt.default, lambda: (T(2, 3, dtype=f16),), {}),
    (A.silu.default, lambda: (T(2, 3),), {}),
    (A.relu.default, lambda: (T(3, 2, t=True),), {}),
    (A.relu.default, lambda: (T(2, 3, dtype=i64),), {}),
    (A.relu.default, lambda: (T(2, 3, dtype=b8),), {}),  # raises (declined)
    *[(getattr(A, c).Tensor, lambda: (T(2, 3), T(3, dtype=i64)), {}) for c in ("le", "ge", "lt", "gt", "eq", "ne")],
    *[(getattr(A, c).Scalar, lambda: (T(2, 3, t=True), 0.5), {}) for c in ("le", "ge", "lt", "gt", "eq", "ne")],
    (A.amax.default, lambda: (T(2, 3, 4), [1]), {"keepdim": True}),
    (A.max.default, lambda: (T(3, 2, t=True),), {}),
    (A.max.default, lambda: (T(2, 3, dtype=i64),), {}),
    (A.max.default, lambda: (T(2, 3, dtype=b8),), {}),
    (A.max.default, lambda: (T(0, 3),), {}),  # raises (declined)
    (A.max.default, lambda: (T(2, 3).to(torch.complex64),), {}, "declined"),
    (A.argmax.default, lambda: (T(2, 3),), {"dim": -1}),
    (A.argmax.default, lambda: (T(2, 3),), {}),
    (A.sum.dim_IntList, lambda: (T(2, 3, 4), [0, 2]), {}),
    (A.sum.dim_IntList, lambda: (T(2, 3, dtype=i64), None), {}),
    (A.sum.dim_IntList, lambda: (T(2, 3, dtype=b8), [1], True), {"dtype": f32}),
    (A.mean.dim, lambda: (T(2, 3, 4), [-1], True), {}),
    (A.mean.dim, lambda: (T(2, 3, dtype=i64), [0]), {}),  # raises
    (A.abs.default, lambda: (T(3, 2, t=True),), {}),
    (A.abs.default, lambda: (T(2, 3, dtype=i64),), {}),
    (A.abs.default, lambda: (T(2, 3).to(torch.uint8),), {}),
    (A.abs.default, lambda: (T(2, 3, dtype=b8),), {}),  # raises (declined)
    (A.abs.default, lambda: (T(2, 3).to(torch.complex64),), {}, "declined"),
    (A.sum.default, lambda: (T(3, 2, t=True),), {}),
    (A.sum.default, lambda: (T(2, 3, dtype=i64),), {}),
    (A.sum.default, lambda: (T(2, 3, dtype=b8),), {}),
    (A.sum.default, lambda: (T(2, 3, dtype=f16),), {"dtype": torch.float64}),
    (A.sum.default, lambda: (T(0, 3),), {}),
    (A.mean.default, lambda: (T(2, 3),), {}),
    (A.mean.default, lambda: (T(2, 3, dtype=f16),), {"dtype": f32}),
    (A.gather.default, lambda: (T(3, 4), 1, torch.zeros(3, 2, dtype=i64)), {}),
    (A.index_copy.default, lambda: (T(2, 4, 3), 1, torch.tensor([0, 2]), T(2, 2, 3)), {}),
    (A.tril.default, lambda: (T(4, 4, t=True),), {}),
    (A.triu.default, lambda: (T(3, 5), 1), {}),
    (A.cat.default, lambda: ([T(2, 3), T(4, 3)],), {}),
    (A.cat.default, lambda: ([T(2, 3, t=True), T(2, 1, dtype=i64)], 1), {}),
    (A.masked_fill.Scalar, lambda: (T(2, 3), T(2, 3, dtype=b8), float("-inf")), {}),
    (A.masked_fill.Scalar, lambda: (T(3, 2, t=True), T(2, dtype=b8), 0.0), {}),
    (A.masked_fill.Scalar, lambda: (T(4, 4), T(1, 4, 4, dtype=b8).tril(), 1), {}),
    (A.masked_fill.Scalar, lambda: (T(2, 3, dtype=i64), T(3, dtype=b8), 7), {}),
    (A.masked_fill.Scalar, lambda: (T(2, 3), T(2, 3), 0.0), {}),  # raises: not a bool mask
    (A.native_layer_norm.default, lambda: (T(2, 3, 8), [8], T(8), T(8), 1e-5), {}),
    (A.native_layer_norm.default, lambda: (T(2, 8, 3, t=True), [8, 3], None, None, 1e-5), {}),
    (A.native_layer_norm.default, lambda: (T(4, 8, dtype=torch.bfloat16), [8], T(8), T(8), 1e-5), {}, "declined"),
    (A.native_layer_norm.default, lambda: (T(4, 8), [7], None, None, 1e-5), {}),  # raises (declined)
]


def _meta(v):
    if isinstance(v, torch.Tensor):
        return torch.empty_strided(v.size(), v.stride(), dtype=v.dtype, device="meta")
    if isinstance(v, (list, tuple)):
        return type(v)(_meta(e) for e in v)
    return v


def _layout(r):
    rs = r if isinstance(r, tuple) else (r,)
    return [(tuple(t.shape), t.stride() if t.numel() > 1 else None, t.dtype) for t in rs]


def _call(op, args, kwargs):
    try:
        return op(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - eager's error, whatever its type
        return None, e


def _native(op, margs, kwargs):
    try:
        return _C.native_meta(op._schema.name, op._overloadname, tuple(margs), dict(kwargs)), None
    except Exception as e:  # noqa: BLE001
        return None, e


@pytest.mark.parametrize("i", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])  # noqa: E501
def test_rule_matches_eager_and_torch_meta(i):
    op, build, kwargs, *declined = CASES[i]
    torch.manual_seed(i)
    args = build()
    eager, eager_err = _call(op, args, kwargs)
    margs = _meta(args)
    native, native_err = _native(op, margs, kwargs)
    if eager_err is not None:
        assert native is None, f"eager raised {eager_err!r}, the rule gave {native}"
        return
    assert native_err is None, native_err
    if declined:  # mixed dtypes: left to torch's kernel
        assert native is None
        return
    assert native is not None, "the rule declined a plain case"
    assert all(t.device.type == "meta" for t in (native if isinstance(native, tuple) else (native,)))
    assert _layout(native) == _layout(eager)
    torch_meta, err = _call(op, margs, kwargs)
    assert err is None, err
    # sizes and dtypes as torch's meta kernel (its strides may differ where the
    # Python reference does not follow the CPU kernel's layout: eager decides)
    assert [(s, d) for s, _, d in _layout(native)] == [(s, d) for s, _, d in _layout(torch_meta)]


def test_every_rule_has_a_case():
    covered = {f"{c[0]._schema.name}.{c[0]._overloadname}" for c in CASES}
    assert set(_C.native_meta_ops()) <= covered, set(_C.native_meta_ops()) - covered


def test_declined_or_unknown_ops_give_none():
    m = torch.empty(2, 3, device="meta")
    assert _C.native_meta("aten::relu", "default", (torch.empty(2, dtype=b8, device="meta"),), {}) is None
    assert _C.native_meta("aten::cos", "default", (m,), {}) is None  # no rule: torch's kernel runs
    assert _C.native_meta("aten::exp", "default", (torch.randn(2),), {}) is None  # not a meta tensor


def test_first_capture_imports_no_sympy():
    # A GPT block's worth of ops (embedding, layer norm, linear, attention with
    # a causal mask, gelu, softmax, loss-like reductions): captured, compiled and
    # run on a fresh process, equal to eager, with no symbolic-shapes import.
    code = textwrap.dedent("""
        import sys, torch, torch.nn as nn, torch.nn.functional as F
        import xacc

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(50, 16)
                self.ln = nn.LayerNorm(16)
                self.qkv = nn.Linear(16, 48)
                self.fc = nn.Linear(16, 32)
                self.out = nn.Linear(32, 16)

            def forward(self, idx):
                x = self.emb(idx)
                q, k, v = self.qkv(self.ln(x)).split(16, dim=2)
                att = (q @ k.transpose(-2, -1)) / 4.0
                mask = torch.tril(torch.ones(idx.shape[1], idx.shape[1])) == 0
                att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
                x = x + att @ v
                x = x + self.out(F.gelu(self.fc(x)))
                return torch.log_softmax(x, -1).amax(-1).mean() + x.tanh().sum(dim=1).exp().mean()

        torch.manual_seed(0)
        m = Block().eval()
        idx = torch.randint(0, 50, (2, 8))
        with torch.no_grad():
            ref = m(idx)
            got = xacc.jit(m, device="DEVICE")(idx)
        assert torch.allclose(got, ref, rtol=1e-4, atol=1e-5), (got, ref)
        print(sorted(n for n in ("sympy", "torch.fx.experimental.symbolic_shapes") if n in sys.modules))
        from xacc.jit import counters
        print(counters()["graphs"], counters()["frames"])
    """)
    for device in ("cpu", "xpu0"):
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        out = subprocess.run([sys.executable, "-c", code.replace("DEVICE", device)], env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-3000:]
        lines = out.stdout.splitlines()
        assert lines[0] == "[]", out.stdout
        graphs, frames = map(int, lines[1].split())
        assert graphs >= 1 and frames >= 1, out.stdout  # it was captured and compiled
