"""Note [Mode stacks] (Guards.cpp): a graph runs below torch's function and
dispatch modes, so every entry is guarded on the mode stacks it was captured
under, and a frame called under a user's mode runs in Python. Before the guard
a frame captured outside a mode that changes results ignored the mode when
called under it, and a frame first captured under it kept the mode's effect
after the mode was left: silently wrong values."""

import pytest
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import xacc


class NegateAdd(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        r = func(*args, **(kwargs or {}))
        return -r if func is torch.Tensor.add else r


class DoubleMul(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        r = func(*args, **(kwargs or {}))
        return r * 2 if func is torch.ops.aten.mul.Tensor else r


def add_one(x):
    return x.add(1) * 3


def add_two(x):
    return x.add(2) * 3


def test_function_mode_entered_after_capture_is_seen():
    f = xacc.jit(add_one)
    x = torch.ones(2)
    assert torch.equal(f(x), add_one(x))
    with NegateAdd():
        want = add_one(x)
        got = f(x)
    assert torch.equal(want, torch.full((2,), -6.0)) and torch.equal(got, want), got
    assert torch.equal(f(x), add_one(x))  # and the captured graph still serves the plain call


def test_frame_first_called_under_a_mode_is_not_captured_with_it():
    f = xacc.jit(add_two)
    x = torch.ones(2)
    with NegateAdd():
        assert torch.equal(f(x), add_two(x))
    got = f(x)
    assert torch.equal(got, torch.full((2,), 9.0)), got


@pytest.mark.parametrize("device", ["cpu", "xpu0"])
def test_dispatch_mode_sees_the_ops(device):
    def g(x):
        return (x * 2).sin()

    f = xacc.jit(g, device=device)
    x = torch.ones(3)
    assert torch.allclose(f(x), g(x))
    with DoubleMul():
        want = g(x)
        got = f(x)
    assert torch.allclose(got, want) and torch.allclose(want, torch.sin(torch.full((3,), 4.0))), got
    assert torch.allclose(f(x), g(x))


def test_mode_state_and_its_guard():
    from xacc._C import capture as C
    assert C.mode_state() == ((), 0)
    with NegateAdd():
        assert C.mode_state() == ((NegateAdd,), 0)
        with DoubleMul():
            assert C.mode_state() == ((NegateAdd,), 1)
    tree = C.GuardTree()
    tree.set_modes((NegateAdd,), 0)
    assert "torch function modes [NegateAdd], 0 dispatch modes" in tree.describe()
