"""Loops under xacc.jit (Note [Loop bodies], Translator::rangeLoop), in one run:

  (a) a `for` loop with a graph break in its body (a Python number read from
      a tensor, appended to a list passed in / stored on an object): eager vs
      xacc.jit per call, and what xacc captured (graphs, breaks). Before loop
      splitting the whole frame ran in Python (GB015). The list variant
      recompiles the body per iteration (a list argument's length is guarded)
      until the entry limit;
  (b) `for i in range(n)` with a capturable body: cold capture time and
      per-call latency for n at the unroll bound (unrolled) and past it
      (one ctrl.loop), eager alongside.

Timings are medians of interleaved rounds (eager, xacc, eager, ...).

    PYTHONPATH=. python benchmarks/capture/loops.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

import xacc
from xacc.jit import counters, jit, reset


def with_break(x, w, log):
    for i in range(8):
        x = torch.tanh(x @ w)
        log.append(float(x[0, 0]))  # .item()-like read: a graph break each iteration
        x = x * 0.5 + i
    return x


class Stats:
    last = 0.0


def with_break_attr(x, w, st):
    for i in range(8):
        x = torch.tanh(x @ w)
        st.last = float(x[0, 0])
        x = x * 0.5 + i
    return x


def make_range(n):
    src = f"""
def range_loop(x, w):
    for i in range({n}):
        x = torch.tanh(x @ w) + i * 1e-3
    return x
"""
    ns = {"torch": torch}
    exec(src, ns)  # a fresh code object per n (cold capture each time)
    return ns["range_loop"]


def per_call(fn, args, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - t0) / calls


def interleaved(fns, args, calls, rounds):
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            times[k].append(per_call(f, args, calls))
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    x, w = torch.randn(16, 64), torch.randn(64, 64) * 0.1

    for name, fn, extra in (("list append", with_break, list), ("attribute write", with_break_attr, Stats)):
        reset()
        jb = jit(fn)
        jb(x, w, extra())
        jb(x, w, extra())
        c = counters()
        t = interleaved({"eager": lambda *p, fn=fn: fn(*p, extra()), "xacc": lambda *p, jb=jb: jb(*p, extra())},
                        (x, w), 200, a.rounds)
        print(f"(a) loop with a break ({name}): eager {t['eager'] * 1e6:.1f} us, xacc {t['xacc'] * 1e6:.1f} us "
              f"per call; graphs {c['graphs']}, breaks {c['breaks']}, recompiles {c['recompiles']}, "
              f"skipped frames {c['skipped']}")

    for n in (64, 65, 1000):
        reset()
        fn = make_range(n)
        jf = jit(fn)
        t0 = time.perf_counter()
        jf(x, w)
        cold = time.perf_counter() - t0 - per_call(fn, (x, w), 1)
        loops = sum(g.count("ctrl.loop(") for g in xacc.explain(fn)(x, w).graphs)
        calls = max(5, 2000 // n)
        t = interleaved({"eager": fn, "xacc": jf}, (x, w), calls, a.rounds)
        print(f"(b) range({n}): {'ctrl.loop' if loops else 'unrolled'}; cold capture+compile {cold * 1e3:.1f} ms; "
              f"eager {t['eager'] * 1e6:.0f} us, xacc {t['xacc'] * 1e6:.0f} us per call")


if __name__ == "__main__":
    main()
