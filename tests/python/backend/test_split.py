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


POOL_SCRIPT = r"""
import json, sys, torch
import xacc._C as C
torch.set_num_threads(2)
n, kind = int(sys.argv[1]), sys.argv[2]
x = torch.randn(n, 16, 32, 32)
w, b, rm, rv = torch.randn(16), torch.randn(16), torch.randn(16), torch.rand(16) + 0.5
t = f"tensor<f32, [{n}, 16, 32, 32], cpu>"
c = "tensor<f32, [16], cpu>"
if kind == "pool":
    # The conv block's tail: bn -> gelu -> max_pool2d (strided window views of each row).
    o = f"tensor<f32, [{n}, 16, 16, 16], cpu>"
    body = (f"  %0, %1, %2 = aten.native_batch_norm.default(%x, %w, %b, %rm, %rv) {{eps = 1e-05, momentum = 0.1, "
            f"training = false}} : ({t}, tensor<f32, [0], cpu>, tensor<f32, [0], cpu>)\n"
            f"  %3 = aten.gelu.default(%0) : {t}\n"
            f"  %4 = aten.max_pool2d.default(%3) {{kernel_size = [2, 2], stride = [2, 2]}} : {o}\n"
            f"  return %4\n")
    ref = torch.nn.functional.max_pool2d(torch.nn.functional.gelu(
        torch.nn.functional.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-5)), 2, 2)
else:
    # A view that moves dim 0 (a transpose of dims 0 and 1) is not split.
    o = f"tensor<f32, [16, {n}, 32, 32], cpu>"
    body = (f"  %0 = aten.transpose.int(%x) {{dim0 = 0, dim1 = 1}} : {o}\n"
            f"  %1 = aten.tanh.default(%0) : {o}\n  %2 = aten.exp.default(%1) : {o}\n  return %2\n")
    ref = torch.exp(torch.tanh(x.transpose(0, 1)))
e = C.mlir.compile(f"graph @g(%x: {t}, %w: {c}, %b: {c}, %rm: {c}, %rv: {c}) -> {o} {{\n" + body + "}\n")
for _ in range(3):
    (y,) = e(x, w, b, rm, rv)
    torch.testing.assert_close(y, ref, rtol=2e-5, atol=1e-5)
s = e.stats()
print(json.dumps({"launches": s["kernel_launches"], "split": s["split_runs"], "fallback": s["region_fallback_runs"],
                  "regions": s["regions"]}))
"""


@pytest.mark.parametrize("rows", [8, 7])
def test_pooling_window_views_split_over_rows(rows):
    # Views that keep dim 0 (pooling windows) used to make a kernel unsplittable,
    # so the conv block's bn+gelu+max_pool2d kernel ran on one thread.
    env = dict(os.environ, XACC_LOG="mlir", PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for kind, split in [("pool", 3), ("transpose", 0)]:
        p = subprocess.run([sys.executable, "-c", POOL_SCRIPT, str(rows), kind], env=env, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-3000:]
        stats = json.loads(p.stdout.strip().splitlines()[-1])
        assert stats["launches"] == 3 and stats["fallback"] == 0 and stats["regions"] == 1, (stats, p.stderr[-2000:])
        assert stats["split"] == split, (kind, stats, [ln for ln in p.stderr.splitlines() if "dim 0" in ln])
