"""In-place writes into fresh tensors in training graphs (Note [Fresh in-place
ops in training graphs], csrc/python/training_inplace.cpp): a write nothing else
can see becomes its out-of-place op and the graph gets a compiled backward; a
write another reader could see keeps the effect, and the graph replays with
eager autograd (the fallback is counted, never a wrong gradient)."""

from __future__ import annotations

import pytest
import torch

from xacc._src.capture import training
from xacc.jit import counters, jit

D = torch.float64


def _check(fn, compiled: bool, *shapes):
    torch.manual_seed(0)
    args = [torch.randn(*s, dtype=D, requires_grad=True) for s in shapes]
    want = fn(*args)
    want.sum().backward()
    wgrads = [a.grad.clone() for a in args]
    for a in args:
        a.grad = None
    got = jit(fn)(*args)
    got.sum().backward()
    assert got.requires_grad == want.requires_grad
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    for a, g in zip(args, wgrads):
        torch.testing.assert_close(a.grad, g, rtol=0, atol=1e-12)
    c = counters()
    if compiled:
        assert c["training_graphs"] == 1 and c["training_fallbacks"] == 0, training.FALLBACKS
        assert c["compiled_backward_runs"] == 1
    else:
        assert c["training_graphs"] == 0 and c["training_fallbacks"] == 1
        assert "no derivative rule" in training.FALLBACKS[-1][1]


def test_writes_into_fresh_tensors_get_a_compiled_backward():
    def f(x, w):
        h = x @ w
        h += x[:, :2]        # the ResNet/MPNet residual
        h.mul_(2.0).relu_()  # a chain: each write's input is the previous fresh result
        return h

    _check(f, True, (3, 4), (4, 2))


def test_write_into_a_tensor_read_before_it_keeps_the_effect():
    def f(x, w):
        h = x @ w
        y = h * 3  # reads h before the write
        h.add_(1.0)
        return y + h

    _check(f, False, (3, 4), (4, 2))


def test_write_seen_through_a_view_keeps_the_effect():
    def f(x, w):
        h = x @ w
        v = h[0]  # a view of h, read after the write
        h += 1.0
        return v * h

    _check(f, False, (3, 4), (4, 2))


def test_write_into_a_view_keeps_the_effect():
    def f(x, w):
        h = (x @ w).t()  # h is a view of the product
        h.mul_(2.0)
        return h

    _check(f, False, (3, 4), (4, 2))


@pytest.mark.parametrize("other", ["f32_tensor", "f64_tensor"])
def test_operand_of_another_dtype_keeps_the_effect(other):
    def f(x, w):
        h = x @ w
        if other == "f32_tensor":
            h.add_(torch.ones((), dtype=torch.float32))  # f64 -= f32: in place keeps f64
        else:
            h.add_(torch.ones((), dtype=D) * 2)
        return h

    # A 0-dim f32 operand: not the written tensor's dtype, so not rewritten;
    # the 0-dim f64 tensor is (same dtype).
    _check(f, other == "f64_tensor", (3, 4), (4, 2))
