"""Issue 19, silently wrong results, guards and __torch_function__, each as a
script run eagerly and jitted in its own process (fidelity_proc): the two runs
print the same values, dtypes, types, identities and exceptions, and exit alike.

The same behaviours are checked in-process, with more variants, by
tests/python/capture/test_guard_fidelity.py and test_identity.py; here each item
of the issue is one program compared whole with plain Python. Every case calls
its function more than once: the bugs showed on a cached entry's second call."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_proc import devices, run, same, write  # noqa: E402

CASES = {
    # A dict argument whose values change between calls: the guard covers the values read.
    "dict_values": '''
import torch

@jit
def f(x, d):
    return x * d["a"] + d["b"]

x = torch.ones(2)
d = {"a": 1.0, "b": 2.0}
print(f(x, d).tolist())
d["b"] = 3.0
print(f(x, d).tolist())
print(f(x, {"a": 2.0, "b": 3.0}).tolist())
''',
    # torch.autocast entered inside the function: bfloat16 as in eager, every call.
    # (xacc runs such a frame as plain Python, guarded on the autocast state; not traced.)
    "autocast_inside": '''
import torch

@jit
def g(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w
    return y + 1

x, w = torch.ones(4, 4), torch.ones(4, 4)
for _ in range(3):
    y = g(x, w)
    print(y.dtype, y[0].tolist())
''',
    # `a is b` answers as in eager on every call, whichever arguments alias.
    "identity": '''
import torch

@jit
def h(a, b):
    return a * 2 if a is b else a + b

t, u = torch.ones(2), torch.full((2,), 3.0)
for a, b in [(t, t), (t, u), (u, u), (u, t), (t, t)]:
    print(h(a, b).tolist())
''',
    # locals() inside the function is the frame's own dict of its locals so far.
    "locals": '''
import torch

@jit
def l(x):
    y = x + 1
    names = locals()
    z = y * 2
    return names, z

for _ in range(2):
    names, z = l(torch.ones(2))
    print(type(names).__name__, sorted(names), z.tolist())
''',
    # A view of an input returned from the graph has the input as its _base.
    "view_base": '''
import torch

@jit
def v(x):
    return x.view(-1), x[0], x.t(), x + 1

for _ in range(2):
    x = torch.zeros(2, 3)
    flat, row, tr, other = v(x)
    print(flat._base is x, row._base is x, tr._base is x, other._base is None)
    flat.add_(1)
    print(x.tolist(), row.tolist())
''',
    # A returned input that requires grad, or a Parameter, is that object.
    "returned_inputs": '''
import torch

@jit
def r(x, w):
    return x, w, x * w

for _ in range(2):
    x, w = torch.ones(3, requires_grad=True), torch.ones(3)
    out = r(x, w)
    print(out[0] is x, out[1] is w, out[2].requires_grad)
    p = torch.nn.Parameter(torch.ones(3))
    out = r(p, w)
    print(out[0] is p, type(out[0]).__name__, type(out[2]).__name__)
''',
    # requires_grad_() inside the function sets it on the caller's tensor.
    "requires_grad_inside": '''
import torch

@jit
def s(x):
    x.requires_grad_()
    return x * 2

for _ in range(2):
    x = torch.ones(3)
    y = s(x)
    print(x.requires_grad, y.requires_grad, y.grad_fn is not None)
''',
    # A __torch_function__ subclass sees every call eager makes.
    "torch_function": '''
import torch

class Logged(torch.Tensor):
    calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})

@jit
def two_ops(x):
    return (x + 1) * 2

for _ in range(2):
    Logged.calls = []
    y = two_ops(torch.ones(3).as_subclass(Logged))
    print(type(y).__name__, y.tolist(), Logged.calls)
''',
    # A recompile storm over dtypes and ranks: each call as eager, including
    # mean()'s own error for an integer input.
    "recompile_storm": '''
import torch

@jit
def m(x):
    return x.mean() + x.sum()

for dtype in (torch.float32, torch.int64, torch.float64, torch.int32, torch.float32):
    for rank in (1, 2, 3):
        x = torch.ones((2,) * rank, dtype=dtype)
        try:
            y = m(x)
            print(dtype, rank, y.dtype, y.item())
        except Exception as e:
            print(dtype, rank, type(e).__name__, e)
''',
}


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("case", sorted(CASES))
def test_like_eager(tmp_path, case, device):
    script = write(tmp_path, CASES[case])
    eager = run(script)
    assert eager.returncode == 0, eager.stdout + eager.stderr
    same(eager, run(script, device), case)
