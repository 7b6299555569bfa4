"""Note [Parallel kernel compiles] and Note [One compile per kernel text]
(csrc/lib/backend/mlir/ExecutableRegions.cpp): the kernels of a graph's static
regions are compiled on XACC_COMPILE_THREADS threads when the graph is built,
a text shared by two regions is compiled once, and nothing about the result
depends on the thread count.

Each case is a real process (xacc.jit on xpu0, an empty kernel disk cache of
its own), so the MLIR compiler really runs on the threads.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

ROOT = str(Path(__file__).resolve().parents[3])

# Pointwise regions cut apart by matmuls (left to ATen): the first two of
# three identical layers have one kernel text; the third's fuses the exp.
PROG = """
import sys, torch, xacc
from xacc import _C_xpu

def layer(h, w):
    return torch.relu(h @ w) * 0.5 + h

def f(x, w):
    h = torch.tanh(x) * 2.0
    h = layer(layer(layer(h, w), w), w)
    return torch.exp(h * 0.1) - 1.0

torch.manual_seed(0)
x = torch.randn(16, 32)
w = torch.randn(32, 32) * 0.1
out = xacc.jit(f, device="xpu0")(x, w)
torch.save(out, sys.argv[1])
t = _C_xpu.kernel_totals()
print("TOTALS", t["compiled"], t["memory_hits"], t["disk_hits"])
print("EAGER", "MATCH" if torch.allclose(out, f(x, w), rtol=1e-5, atol=1e-5) else "WRONG")
"""


def run(tmp_path: Path, threads: int) -> tuple[str, str, "object"]:
    import torch

    out = tmp_path / f"out{threads}.pt"
    env = dict(os.environ, PYTHONPATH=ROOT, XACC_COMPILE_THREADS=str(threads), XACC_LOG="mlir",
               XACC_CACHE_DIR=str(tmp_path / f"cache{threads}"))
    r = subprocess.run([sys.executable, "-c", PROG, str(out)], env=env, capture_output=True, text=True,
                       timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout, r.stderr, torch.load(out)


def test_kernels_compile_on_threads_with_the_same_result(tmp_path: Path) -> None:
    import torch

    out1, err1, val1 = run(tmp_path, 1)
    out2, err2, val2 = run(tmp_path, 2)
    assert "EAGER MATCH" in out1 and "EAGER MATCH" in out2
    # The thread count changes nothing about the kernels or the cache counts.
    assert torch.equal(val1, val2)
    totals1 = next(line for line in out1.splitlines() if line.startswith("TOTALS"))
    totals2 = next(line for line in out2.splitlines() if line.startswith("TOTALS"))
    assert totals1 == totals2, (totals1, totals2)
    compiled, memory_hits, _ = map(int, totals2.split()[1:])
    # Two layers share a text: compiled once, found once.
    assert compiled >= 3 and memory_hits >= 1, totals2
    # With two threads the build says so; with one it compiles in order, alone.
    lines = [line for line in err2.splitlines() if "looked up or compiled on" in line]
    assert lines and lines[0].endswith("on 2 threads"), err2[-2000:]
    assert "looked up or compiled on" not in err1
