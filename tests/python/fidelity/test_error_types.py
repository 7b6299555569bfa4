"""Issue 19, error translation: an ATen op that fails inside a captured graph
raises what eager raises (IndexError, torch.linalg.LinAlgError, ... with the
op's own message), on the first call (which compiles) and on the cached calls,
on the ATen executor (cpu) and the MLIR backend (xpu0). Each case runs eagerly
and jitted in its own process; their outputs must be identical."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_proc import devices, run, same, write  # noqa: E402

# name -> (the failing function, its arguments); `f` must be captured whole.
CASES = {
    "index": ("def f(x, i):\n    return x[i] * 2\n",
              "torch.randn(3), torch.tensor([5])"),
    "embedding": ("def f(w, i):\n    return torch.nn.functional.embedding(i, w) + 1\n",
                  "torch.randn(4, 2), torch.tensor([1, 7])"),
    "nll_loss": ("def f(x, t):\n    return torch.nn.functional.nll_loss(x.log_softmax(-1), t)\n",
                 "torch.randn(2, 3), torch.tensor([0, 5])"),
    "cholesky": ("def f(a, b):\n    return torch.linalg.cholesky(a - b)\n",
                 "torch.eye(3), 2 * torch.eye(3)"),
    "floor_divide": ("def f(a, b):\n    return torch.floor_divide(a, b) + 1\n",
                     "torch.tensor([4, 5]), torch.tensor([2, 0])"),
    "multinomial": ("def f(p, n):\n    return torch.multinomial(p * 1, 2)\n",
                    "torch.tensor([0.5, -1.0, 0.5]), torch.zeros(1)"),
    "gather": ("def f(x, i):\n    return torch.gather(x, 0, i) + 1\n",
               "torch.randn(3), torch.tensor([0, 5])"),
}

BODY = '''\
import torch
{fn}
f = jit(f)
args = ({args})
for call in range(3):  # the first call compiles, the next ones hit the cache
    try:
        f(*args)
        print(call, "no error")
    except Exception as e:
        print(call, type(e).__module__, type(e).__qualname__, repr(str(e)))
        print("   isinstance IndexError:", isinstance(e, IndexError))
'''

# Whether the jitted process captured f: the run prints the capture counters last.
COUNT = '''\
if _DEVICE:
    from xacc.jit import counters
    print("graphs", counters()["graphs"] > 0, file=__import__("sys").stderr)
'''


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("case", CASES)
def test_op_error_type_and_message_as_eager(tmp_path, case, device):
    fn, args = CASES[case]
    script = write(tmp_path, BODY.format(fn=fn, args=args) + COUNT)
    eager, jitted = run(script), run(script, device)
    assert "Error" in eager.stdout, eager.stdout + eager.stderr  # the case does fail eagerly
    # The function was captured (else the test would prove nothing).
    assert "graphs True" in jitted.stderr, jitted.stdout + jitted.stderr
    jitted.stderr = jitted.stderr.replace("graphs True\n", "")
    same(eager, jitted, f"{case} on {device}")
