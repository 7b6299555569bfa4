"""Capture time against the number of graph breaks in one frame (issue #27):
a straight-line function with N `print(...)` statements between tensor ops,
each print a graph break, run once under xacc.jit (the first call captures
every piece). Prints the capture time per break for each N and checks that
the result and the printed text equal eager's.

Criterion: the time per break at the largest N is within 2x of that at the
smallest, and no N raises RecursionError (resume functions must not nest on
the Python stack; Note [Resume trampoline] in csrc/lib/capture/EvalFrameImpl.inc).

    PYTHONPATH=. python benchmarks/capture/break_scaling.py [--sizes 100,400,1600]
"""

from __future__ import annotations

import argparse
import io
import sys
import time

import torch

from xacc.jit import counters, jit, reset


def make(n: int):
    """`f(x, out)`: n times an op on x, then a print of x to `out` (a fresh code object per n)."""
    lines = ["def straight_line(x, out):"]
    for i in range(n):
        lines.append(f"    x = x * 0.5 + {i % 7}")
        lines.append(f"    print({i}, x, file=out)")
    lines.append("    return x")
    ns: dict = {}
    exec(compile("\n".join(lines), f"<break_scaling:{n}>", "exec"), ns)  # noqa: S102
    return ns["straight_line"]


def measure(n: int) -> tuple[float, float, int]:
    """(capture seconds of the first call, its CPU seconds in this thread,
    breaks counted); asserts eager equality. The CPU time is less sensitive
    to other load on the machine than the wall time."""
    f = make(n)
    x = torch.randn(4)
    eager_out = io.StringIO()
    expected = f(x.clone(), eager_out)
    reset()
    jf = jit(f)
    out = io.StringIO()
    t, cpu = time.perf_counter(), time.thread_time()
    got = jf(x.clone(), out)
    seconds, cpu = time.perf_counter() - t, time.thread_time() - cpu
    assert torch.equal(got, expected), "result differs from eager"
    assert out.getvalue() == eager_out.getvalue(), "printed text differs from eager"
    c = counters()
    assert c["internal_errors"] == 0, c
    # A second call runs the cached pieces (no capture).
    out2 = io.StringIO()
    assert torch.equal(jf(x.clone(), out2), expected) and out2.getvalue() == eager_out.getvalue()
    return seconds, cpu, c["breaks"]


def run(sizes: list[int]) -> dict[int, float]:
    """Time per break by size; prints one line each and the 2x criterion."""
    measure(10)  # one-time costs (imports, meta kernels) out of the first size
    per_break, cpu_per_break = {}, {}
    for n in sizes:
        seconds, cpu, breaks = measure(n)
        per_break[n] = seconds / max(breaks, 1)
        cpu_per_break[n] = cpu / max(breaks, 1)
        print(f"    N={n:5d}  breaks {breaks:5d}  capture {seconds:8.2f} s  per break {per_break[n] * 1e3:7.2f} ms"
              f"  (cpu {cpu_per_break[n] * 1e3:7.2f} ms)")
    lo, hi = min(sizes), max(sizes)
    ratio = per_break[hi] / per_break[lo]
    print(f"    per-break time N={hi} / N={lo} = {ratio:.2f}  (goal <= 2; cpu time ratio"
          f" {cpu_per_break[hi] / cpu_per_break[lo]:.2f})")
    return per_break


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,400,1600")
    ns = ap.parse_args()
    torch.set_num_threads(1)
    print("graph breaks in one frame: capture time per break (first call, eager-equal output)")
    run([int(s) for s in ns.sizes.split(",")])
    print(f"    recursion limit {sys.getrecursionlimit()}: no RecursionError")


if __name__ == "__main__":
    main()
