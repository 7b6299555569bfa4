"""Splitting large kernels over rows across the ATen thread pool (Note [Splitting
kernels over rows], csrc/lib/backend/mlir/Executable.cpp).

The decision depends on the kernel's estimated work (bytes moved and FP operations
per element), not only on its element count; it is logged under XACC_LOG=mlir and
counted in stats()["split_runs"] only when the launch really ran as more than one
chunk (at::parallel_for ran the whole range on the calling thread while the backend
was compiled without OpenMP, and nothing noticed). Each case runs in a fresh
process: the log switch is read once per process, and the thread count is a
process setting.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r"""
import json, sys, torch
import xacc._C as C
threads, rows, ops = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
torch.set_num_threads(threads)
t = f"tensor<f32, [{rows}, 1024], cpu>"
lines = [f"graph @g(%x: {t}, %b: tensor<f32, [1024], cpu>) -> {t} {{"]
prev = "%x"
for i, op in enumerate(ops):
    call = {"add": f"aten.add.Tensor({prev}, %b)", "mul": f"aten.mul.Tensor({prev}, %b)",
            "tanh": f"aten.tanh({prev})", "relu": f"aten.relu({prev})"}[op]
    lines.append(f"  %{i} = {call} : {t}")
    prev = f"%{i}"
lines.append(f"  return {prev}\n}}\n")
e = C.mlir.compile("\n".join(lines))
x, b = torch.randn(rows, 1024), torch.randn(1024)
ref = x
for op in ops:
    ref = {"add": lambda v: v + b, "mul": lambda v: v * b, "tanh": torch.tanh, "relu": torch.relu}[op](ref)
for _ in range(3):
    (y,) = e(x, b)
    torch.testing.assert_close(y, ref, rtol=2e-5, atol=1e-5)
s = e.stats()
print(json.dumps({"launches": s["kernel_launches"], "split": s["split_runs"], "fallback": s["region_fallback_runs"]}))
"""


def run(threads, rows, ops):
    env = dict(os.environ, XACC_LOG="mlir", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", SCRIPT, str(threads), str(rows), ",".join(ops)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    stats = json.loads(p.stdout.strip().splitlines()[-1])
    decisions = [ln for ln in p.stderr.splitlines() if "over dim 0" in ln]
    assert stats["launches"] == 3 and stats["fallback"] == 0, (stats, p.stderr[-2000:])
    return stats, decisions


ARITH10 = ["add", "relu", "mul", "add", "mul", "relu", "add", "mul", "add", "relu"]


def test_one_million_elements_on_two_threads_is_split():
    stats, log = run(2, 1024, ARITH10)
    assert len(log) == 1 and ": split over dim 0 (1024 rows" in log[0] and "2 threads" in log[0], log
    assert stats["split"] == 3, stats


def test_uneven_rows_split_gives_eager_results():
    # 1001 rows: the two chunks differ in size; results are checked in the script.
    stats, log = run(2, 1001, ARITH10)
    assert len(log) == 1 and "split over dim 0" in log[0], log
    assert stats["split"] == 3, stats


def test_one_thread_is_never_split():
    stats, log = run(1, 1024, ARITH10)
    assert log == [] and stats["split"] == 0, (stats, log)


def test_threshold_depends_on_work_per_element():
    # 32K elements: a single add moves ~8 bytes per element (about 33K f32-copy
    # elements of work, under the 64K threshold); five tanh (18 FP ops each) on
    # the same elements are several times the threshold.
    stats, log = run(2, 32, ["add"])
    assert len(log) == 1 and "not split over dim 0" in log[0], log
    assert stats["split"] == 0, stats
    stats, log = run(2, 32, ["tanh"] * 5)
    assert len(log) == 1 and ": split over dim 0 (32 rows" in log[0], log
    assert stats["split"] == 3, stats
