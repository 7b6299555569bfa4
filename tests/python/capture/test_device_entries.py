"""The same function jitted for two devices gets one cache entry per device: an
entry compiled for one device never stands in for the other."""

import pytest
import torch

import xacc
from xacc._C import capture as _C

import sys

from harness import compare_call

J = sys.modules["xacc.jit"]

pytestmark = pytest.mark.skipif(not _C.device_available("xpu0"), reason="no MLIR backend in this build")


def _f(x):
    return torch.relu(x * 2 + 1).sum(1)


def test_cpu_then_xpu_compiles_per_device():
    J.reset()
    on_cpu = xacc.jit(_f, device="cpu")
    on_xpu = xacc.jit(_f, device="xpu0")
    x = torch.randn(16, 8)
    compare_call(_f, on_cpu, (x,))
    after_cpu = J.counters()
    compare_call(_f, on_xpu, (x,))
    after_xpu = J.counters()
    assert after_xpu["hook_hits"] == after_cpu["hook_hits"], "xpu0 call reused the cpu entry"
    assert after_xpu["frames"] == after_cpu["frames"] + 1
    # Each wrapper now hits its own entry.
    on_cpu(x)
    on_xpu(x)
    again = J.counters()
    assert again["frames"] == after_xpu["frames"]
    assert again["hook_hits"] == after_xpu["hook_hits"] + 2
    J.reset()


def test_entry_compiled_before_any_other_device_does_not_stand_in():
    # A fresh process: the cpu entry is compiled while no jit with other options
    # has ever existed. The xpu0 call that follows must get an entry of its own.
    import os
    import subprocess
    import textwrap
    code = textwrap.dedent("""
        import torch, xacc
        from xacc._C import capture as C
        def f(x):
            return torch.relu(x * 2 + 1).sum(1)
        x = torch.randn(16, 8)
        xacc.jit(f)(x)
        got = xacc.jit(f, device="xpu0")(x)
        assert torch.allclose(got, f(x))
        print(sorted(e["device"] for e in C.entries(f.__code__)))
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "['cpu', 'xpu0']", out.stdout
