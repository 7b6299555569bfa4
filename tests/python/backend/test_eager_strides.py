"""Kernel outputs carry eager's strides (Note [Eager strides of kernel outputs],
csrc/lib/backend/mlir/ExecutableRegions.cpp).

An elementwise op on a transposed tensor keeps the input's dim order in eager,
so a later `.view` that merges dims works there. The xpu0 kernels wrote every
output contiguously: a `.view` kept as an ATen view on such an output raised
"view size is not compatible with input tensor's size and stride" (found on
transformers' bamba, whose mamba2 chunk scan does this), and graph outputs
showed other strides than eager's.
"""
from __future__ import annotations

import pytest
import torch

import xacc

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")


def _xpu(fn):
    return xacc.jit(fn, device="xpu0")


def test_view_of_a_kernel_output_permuted_back():
    def f(x, w):
        m = torch.exp(x) * 2  # a kernel; eager's result has x's (transposed) layout
        return torch.bmm(m.transpose(1, 2).view(3, 1, -1), w)  # bmm stays ATen: the view leaves the kernel

    x = torch.randn(3, 7, 5).transpose(1, 2)
    w = torch.randn(3, 35, 4)
    torch.testing.assert_close(_xpu(f)(x, w), f(x, w))


def test_graph_outputs_have_eager_strides():
    def g(a, b):
        m = torch.exp(a.transpose(1, 2)) + b
        return m, m * 3, m.sum(-1)

    a, b = torch.randn(3, 5, 7), torch.randn(5)
    want = g(a, b)
    got = _xpu(g)(a, b)
    for o, e in zip(got, want):
        assert o.shape == e.shape and o.stride() == e.stride() and o.is_contiguous() == e.is_contiguous()
        torch.testing.assert_close(o, e)


def test_strides_follow_each_input_geometry():
    def h(x):
        return torch.tanh(x) + 1

    fn = _xpu(h)
    base = torch.randn(4, 6, 8)
    for x in (base, base.transpose(1, 2), base.permute(2, 0, 1), base[:, ::2]):
        o = fn(x)
        assert o.stride() == h(x).stride()
        torch.testing.assert_close(o, h(x))


def test_outputs_that_are_views_in_eager_stay_correct():
    # Eager returns an expanded view here: no dense layout to copy into, the
    # kernel's contiguous output is kept, values equal.
    def k(x):
        y = torch.sigmoid(x)
        return y.unsqueeze(1).expand(4, 3, 5) * 1.0, y[:, 1:4]

    x = torch.randn(4, 5)
    for o, e in zip(_xpu(k)(x), k(x)):
        torch.testing.assert_close(o, e)
