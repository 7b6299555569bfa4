"""Issue 19, fullgraph=True and the user's own exceptions: a `raise` the call
reaches propagates as the user's exception (type and message), not as
xacc.Unsupported; calls that do not raise still return the eager result.
Eager and jitted runs each in their own process."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_proc import devices, run, same, write  # noqa: E402

BODY = '''\
import torch


class ShapeError(ValueError):
    pass


def check(x):
    if x.dim() != 2:
        raise ShapeError(f"expected 2 dims, got {x.dim()}")


@jit(fullgraph=True)
def f(x):
    y = x.sin() + 1
    if x.shape[0] > 3:
        raise ValueError(f"too long: {x.shape[0]}")
    return y * 2


@jit(fullgraph=True)
def g(x):
    check(x)
    return x.cos()


@jit(fullgraph=True)
def h(x):
    y = x * 3
    raise KeyError("always")


for fn, arg in ((f, torch.ones(2)), (f, torch.ones(5)), (f, torch.ones(6)), (f, torch.ones(2)),
                (g, torch.ones(2, 2)), (g, torch.ones(3)), (g, torch.ones(3)), (h, torch.ones(1)),
                (h, torch.ones(1))):
    try:
        r = fn(arg)
        print(fn.__name__, "->", [round(v, 4) for v in r.flatten().tolist()])
    except Exception as e:
        print(fn.__name__, "raised", type(e).__name__, repr(str(e)))
'''


@pytest.mark.parametrize("device", devices())
def test_user_exception_under_fullgraph(tmp_path, device):
    script = write(tmp_path, BODY)
    eager, jitted = run(script), run(script, device)
    assert "raised ValueError 'too long: 5'" in eager.stdout
    same(eager, jitted, device)
