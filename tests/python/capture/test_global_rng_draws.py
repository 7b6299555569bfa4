"""Draws from NumPy's and Python's global random generators in a captured
frame (Note [Global RNG draws at run time] in TranslateDraws.cpp): a draw on
constants whose number the frame does not read is made at run time, after the
graph, in program order, so the generator's state advances exactly as in eager
and the number (when the frame keeps or returns it) is eager's; a read of the
number is a break at the read. Each case runs eagerly and under xacc.jit from
the same seeds, over several calls (compile, then cache hits): same results
(type and value) and the same generator state after every call."""

from __future__ import annotations

import random
from typing import Any, Callable

import numpy as np
import pytest
import torch

from xacc._src.capture.convert import EVENTS
from xacc.jit import counters, jit

from harness import same as _same


def same(a, b) -> None:
    """Eager's and the captured run's values: exactly equal (draws are bit-exact), with
    the harness's type, structure and identity checks."""
    _same(a, b, atol=0, rtol=0)


def states() -> tuple:
    s = np.random.get_state()
    return (s[0], s[1].tolist(), s[2], s[3], s[4]), random.getstate()


def run(fn: Callable, make: Callable[[], tuple], calls: int = 3) -> list:
    jfn = jit(fn)
    codes = []
    for i in range(calls):
        args = make()
        np.random.seed(100 + i)
        random.seed(100 + i)
        expected = fn(*args)
        after = states()
        np.random.seed(100 + i)
        random.seed(100 + i)
        got = jfn(*args)
        same(expected, got)
        assert states() == after, f"call {i}: the generator state differs from eager's"
    assert counters()["internal_errors"] == 0
    for ev in EVENTS:
        codes += [(b.code, b.detail) for b in ev.breaks]
    return codes


def x3():
    return (torch.randn(3),)


def test_unused_draw_is_no_break():
    def f(x):
        p = np.random.uniform(0, 1)
        return x * 2

    assert run(f, x3) == []
    assert counters()["graphs"] == 1


def test_unused_python_draw_is_no_break():
    def f(x):
        random.random()
        q = random.uniform(2.0, 3.0)
        return x + 1

    assert run(f, x3) == []


def test_returned_draw_is_eagers_number():
    def f(x):
        y = x.sin()
        p = np.random.normal(0.0, 1.0)
        return p

    assert run(f, x3) == []


def test_draws_in_order_with_torch_code_between():
    def f(x):
        a = np.random.uniform(0, 1)
        x = x * 3
        b = random.randint(1, 6)
        c = np.random.randint(0, 10)
        return b

    assert run(f, x3) == []


class LayerDrop(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(4, 4) for _ in range(3))
        self.layerdrop = 0.5

    def forward(self, h):
        for layer in self.layers:
            p = np.random.uniform(0, 1)
            skip = self.training and (p < self.layerdrop)
            if not skip:
                h = layer(h)
        return h


def test_layerdrop_in_eval_is_one_graph():
    m = LayerDrop().eval()
    with torch.no_grad():
        assert run(m, lambda: (torch.randn(2, 4),)) == []
    assert counters()["graphs"] == 1


def test_layerdrop_in_training_reads_the_number():
    m = LayerDrop().train()
    codes = run(m, lambda: (torch.randn(2, 4),), calls=4)
    assert codes and all(c == "GB021" for c, _ in codes), codes
    assert "drew is used" in codes[0][1], codes


def test_use_of_the_number_breaks_and_sees_eagers_value():
    def f(x):
        p = np.random.uniform(0, 1)
        q = random.random()
        return x * p, q + 1

    codes = run(f, x3)
    assert codes and codes[0][0] == "GB021" and "numpy.random.uniform" in codes[0][1], codes


def test_draw_live_across_a_break():
    def f(x):
        p = np.random.normal()
        y = x + 1
        print("mid")  # a break: p is drawn before it, rebuilt for the rest of the frame
        return y, p

    run(f, x3)


def test_draw_before_other_state_access():
    def f(x):
        np.random.uniform(0, 1)
        pos = np.random.get_state()[2]  # a break: the draw above is made first
        return x + 1, pos

    codes = run(f, x3)
    assert codes and codes[0][0] == "GB021" and "get_state" in codes[0][1], codes


def test_draws_in_a_loop():
    def f(x):
        for i in range(4):
            d = np.random.uniform(0, 1)
            x = x + i
        return x, d

    run(f, x3)


def test_draw_whose_arguments_raise_stays_a_break():
    def f(x):
        x = x + 1
        return np.random.uniform(0, np.inf)  # OverflowError in eager

    with pytest.raises(OverflowError):
        f(torch.ones(2))
    np.random.seed(0)
    with pytest.raises(OverflowError):
        jit(f)(torch.ones(2))
    codes = [b.code for ev in EVENTS for b in ev.breaks]
    assert codes and codes[0] == "GB021", codes


def test_draw_giving_an_array_stays_a_break():
    def f(x):
        return x + torch.from_numpy(np.random.rand(3))

    codes = run(f, lambda: (torch.randn(3, dtype=torch.float64),))
    assert codes and codes[0][0] == "GB021" and "global random state" in codes[0][1], codes


def test_draw_inside_a_tensor_branch_is_not_deferred():
    def f(x):
        if x.sum() > 0:
            np.random.uniform(0, 1)
            x = x + 1
        return x

    run(f, lambda: (torch.randn(3),), calls=6)


def test_a_patched_draw_is_called_after_the_patch(monkeypatch):
    """The draw made at run time is the function the frame reads now, not the
    one it read when it was compiled."""
    def f(x):
        p = np.random.uniform(0, 1)
        return x + 1

    jf = jit(f)
    jf(torch.ones(2))
    calls = []
    real = np.random.uniform

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(np.random, "uniform", spy)
    np.random.seed(3)
    f(torch.ones(2))
    after = states()
    assert calls == [(0, 1)]
    np.random.seed(3)
    jf(torch.ones(2))
    assert calls == [(0, 1), (0, 1)]
    assert states() == after
