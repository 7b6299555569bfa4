"""XJIT capture benchmarks, all in one run (ratios are only meaningful within a run):
(torch.compile is measured in a child process started by this run: two frame
hooks in one process are not supported together, see the capture report)

  (a) per-call overhead of a cache hit on a tiny function: xacc.jit vs eager vs
      torch.compile(backend="eager"); overhead = time(compiled) - time(eager);
  (b) cold capture time of fresh functions: xacc.jit vs torch.compile(backend="eager")
      (both after their one-time imports and warm-up on another function);
  (c) end-to-end latency of small models: eager vs xacc.jit;
  (d) capture time per graph break in a frame with N breaks (break_scaling.py).

    PYTHONPATH=... python benchmarks/capture/run.py [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path

import torch
import torch.nn as nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from xacc.jit import counters as xacc_counters  # noqa: E402
from xacc.jit import jit as xacc_jit  # noqa: E402


def per_call(fn, args, n: int) -> float:
    for _ in range(50):
        fn(*args)
    best = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn(*args)
        best.append((time.perf_counter() - t) / n)
    return min(best)


def fresh(src: str, name: str):
    ns: dict = {"torch": torch}
    exec(compile(src, f"<bench:{name}>", "exec"), ns)  # noqa: S102 - fresh code objects per compile
    return ns[name]


TINY = "def {n}(x, y):\n    return x * y + 1\n"
MEDIUM = """def {n}(x, w1, w2):
    h = torch.relu(x @ w1)
    h = h * torch.sigmoid(h) + h.mean(dim=-1, keepdim=True)
    y = torch.softmax(h @ w2, dim=-1)
    return y.sum(dim=0), y.max(dim=-1).values
"""


def cold(compiler, template: str, args, reps: int) -> float:
    times = []
    for i in range(reps):
        fn = fresh(template.format(n=f"f{i}"), f"f{i}")
        c = compiler(fn)
        t = time.perf_counter()
        c(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def measure_tc(n: int, reps: int) -> dict:
    """torch.compile(backend="eager") numbers, measured in this (child) process."""
    __import__("torch._dynamo")
    tc = lambda f: torch.compile(f, backend="eager")  # noqa: E731
    x, y = torch.randn(8), torch.randn(8)
    out = {}
    f = fresh(TINY.format(n="tiny"), "tiny")
    out["eager"] = per_call(f, (x, y), n)
    f2 = fresh(TINY.format(n="tiny2"), "tiny2")
    out["hit"] = per_call(tc(f2), (x, y), n)
    tc(fresh(TINY.format(n="warm2"), "warm2"))(x, y)
    w1, w2, xm = torch.randn(16, 32), torch.randn(32, 8), torch.randn(4, 16)
    out["cold_tiny"] = cold(tc, TINY, (x, y), reps)
    out["cold_medium"] = cold(tc, MEDIUM, (xm, w1, w2), reps)
    return out


def main() -> None:
    import json
    import subprocess

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--torch-compile-child", action="store_true", help=argparse.SUPPRESS)
    ns = ap.parse_args()
    n = 2000 if ns.quick else 20000
    reps = 3 if ns.quick else 8
    torch.set_num_threads(1)
    if ns.torch_compile_child:
        print(json.dumps(measure_tc(n, reps)))
        return
    child = subprocess.run([sys.executable, __file__, "--torch-compile-child"] + (["--quick"] if ns.quick else []),
                           capture_output=True, text=True, check=True)
    tcr = json.loads(child.stdout.strip().splitlines()[-1])
    __import__("torch._dynamo")  # the same one-time imports as the child (meta kernels import it)

    # (a) cache-hit overhead
    x, y = torch.randn(8), torch.randn(8)
    f = fresh(TINY.format(n="tiny"), "tiny")
    t_eager = per_call(f, (x, y), n)
    t_x = per_call(xacc_jit(f), (x, y), n)
    ox = t_x - t_eager
    otc = tcr["hit"] - tcr["eager"]
    print("(a) per-call, tiny function x*y+1 on 8 floats (single thread)")
    print(f"    eager                         {t_eager * 1e6:8.2f} us   (child: {tcr['eager'] * 1e6:.2f} us)")
    print(f"    xacc.jit (cache hit)          {t_x * 1e6:8.2f} us   overhead {ox * 1e6:7.2f} us")
    print(f"    torch.compile(eager) (hit)    {tcr['hit'] * 1e6:8.2f} us   overhead {otc * 1e6:7.2f} us")
    print(f"    overhead ratio xacc/torch.compile = {ox / otc:.2f}  (goal <= 0.5)")

    # (b) cold capture
    xacc_jit(fresh(TINY.format(n="warm"), "warm"))(x, y)
    w1, w2, xm = torch.randn(16, 32), torch.randn(32, 8), torch.randn(4, 16)
    print("(b) cold capture (first call of a fresh function, median)")
    for label, tmpl, args in (("tiny", TINY, (x, y)), ("medium", MEDIUM, (xm, w1, w2))):
        cx = cold(xacc_jit, tmpl, args, reps)
        ct = tcr[f"cold_{label}"]
        print(f"    {label:7s} xacc.jit {cx * 1e3:8.2f} ms   torch.compile(eager) {ct * 1e3:8.2f} ms   "
              f"speedup {ct / cx:6.1f}x  (goal >= 10x)")

    # (c) models
    from mlp import MLP
    from tiny_gpt import TinyGPT

    print("(c) end-to-end latency per forward (cache hits, no_grad)")
    torch.manual_seed(0)
    models = [("mlp b=32", MLP().eval(), (torch.randn(32, 32),)),
              ("tiny_gpt b=2 t=16", TinyGPT().eval(), (torch.randint(0, 64, (2, 16)),)),
              ("conv block", nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                           nn.MaxPool2d(2)).eval(), (torch.randn(4, 3, 16, 16),))]
    with torch.no_grad():
        for name, m, args in models:
            te = per_call(m, args, max(n // 20, 100))
            jm = xacc_jit(m)
            assert torch.allclose(jm(*args), m(*args), atol=1e-5)
            tx = per_call(jm, args, max(n // 20, 100))
            print(f"    {name:18s} eager {te * 1e6:9.1f} us   xacc.jit {tx * 1e6:9.1f} us   ratio {tx / te:5.2f}")
    c = xacc_counters()
    print(f"counters: graphs={c['graphs']} breaks={c['breaks']} recompiles={c['recompiles']} "
          f"internal_errors={c['internal_errors']}")

    # (d) graph breaks (resets the counters)
    import break_scaling
    print("(d) capture time per graph break, N prints in one frame (first call, eager-equal output)")
    break_scaling.run([50, 200] if ns.quick else [100, 400, 1600])


if __name__ == "__main__":
    main()
