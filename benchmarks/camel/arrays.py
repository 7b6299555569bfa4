"""Camel vs CPython: the sort and Monte-Carlo workloads of issue 23 (item 9),
in one run, plus the peak memory of a merge sort of 1e8 ints.

Workloads (each `<name>.cml` next to this file, run with `camel run --profile
--scheduler=seq`; the CPython program below runs the same algorithm):

  arr_msort       algo.merge_sort of 500,000 pseudo-random ints (made by a
                  map over a range); CPython: the same stable bottom-up merge
                  sort with a half-size buffer, on a list
  arr_montecarlo  pi from 1,000,000 points whose coordinates are float arrays
                  built by maps (a Lehmer generator both sides compute identically),
                  hits counted by a filter
  sim_pi          sim.pi_hits: 16 chunks x 250,000 samples (4e6 samples);
                  CPython: the same method on random.Random (MT19937)
  sim_asian       sim.asian_call_price: 8 chunks x 5,000 paths x 64 steps
                  (GBM, arithmetic average); CPython: the same on random.gauss

The Monte-Carlo counts are smaller than the issue's 5e9 samples so that a
run fits in a few minutes. arr_msort and arr_montecarlo must print the same
as CPython; the sim_* generators differ (a 64-bit Mersenne Twister in Camel),
so their estimates are checked against each other within a tolerance.
Timing: best of --repeat; Camel's "run" column is the runtime stage alone
(from --profile), CPython's time the algorithm alone (start-up excluded);
ratio = CPython / Camel run (above 1: Camel is faster).

Memory (unless --no-memory): arr_msort_big.cml, algo.merge_sort of
100,000,000 ints made in place, is run once and its peak RSS (the child's
ru_maxrss, as `/usr/bin/time -v` reports it) is printed and checked against
the issue's bound of 2 GB (2e9 bytes).

Usage: python benchmarks/camel/arrays.py [--camel PATH] [--python PATH]
                                         [--repeat N] [--only a,b] [--no-memory]
"""

from __future__ import annotations

import argparse
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import HERE, find_camel, find_python, run_python_code  # noqa: E402

PYTHON_CODE = {
    "arr_msort": """
def key(i):
    return (i * 2654435761 + 12345) % 1000003

def merge_sort(xs):
    n = len(xs)
    buf = [0] * (n // 2)
    width = 1
    while width < n:
        lo = 0
        while lo + width < n:
            mid, hi = lo + width, min(lo + 2 * width, n)
            if xs[mid] < xs[mid - 1]:
                if mid - lo <= hi - mid:
                    buf[0:mid - lo] = xs[lo:mid]
                    i, iend, j, k = 0, mid - lo, mid, lo
                    while i < iend and j < hi:
                        if xs[j] < buf[i]:
                            xs[k] = xs[j]
                            j += 1
                        else:
                            xs[k] = buf[i]
                            i += 1
                        k += 1
                    while i < iend:
                        xs[k] = buf[i]
                        i += 1
                        k += 1
                else:
                    buf[0:hi - mid] = xs[mid:hi]
                    i, j, k = mid, hi - mid, hi
                    while i > lo and j > 0:
                        k -= 1
                        if buf[j - 1] < xs[i - 1]:
                            i -= 1
                            xs[k] = xs[i]
                        else:
                            j -= 1
                            xs[k] = buf[j]
                    while j > 0:
                        k -= 1
                        j -= 1
                        xs[k] = buf[j]
            lo += 2 * width
        width *= 2

n = 500000
xs = list(map(key, range(0, n)))
merge_sort(xs)
result = f"{len(xs)} {xs[0]} {xs[n // 2]} {xs[n - 1]}"
""",
    "arr_montecarlo": """
def coord(i, a):
    h = (i * a) % 2147483647
    g = (h * a) % 2147483647
    return float(g) / 1073741824.0 - 1.0

n = 1000000
xs = list(map(lambda i: coord(i + 1, 48271), range(0, n)))
ys = list(map(lambda i: coord(i + 1, 16807), range(0, n)))
inside = list(filter(lambda i: xs[i] * xs[i] + ys[i] * ys[i] <= 1.0, range(0, n)))
result = f"{n} {len(inside)}"
""",
    "sim_pi": """
import random

def pi_hits(samples, seed):
    rng = random.Random(seed)
    uniform = rng.uniform
    hits = 0
    for _ in range(samples):
        x, y = uniform(-1.0, 1.0), uniform(-1.0, 1.0)
        hits += x * x + y * y <= 1.0
    return hits

chunks, samples = 16, 250000
total = sum(pi_hits(samples, seed) for seed in range(chunks))
result = f"{chunks * samples} {total}"
""",
    "sim_asian": """
import math
import random

def asian_call_price(paths, steps, seed):
    s0 = strike = 100.0
    rate, sigma, maturity = 0.05, 0.2, 1.0
    dt = maturity / steps
    drift = (rate - 0.5 * sigma * sigma) * dt
    vol = sigma * math.sqrt(dt)
    rng = random.Random(seed)
    payoff = 0.0
    for _ in range(paths):
        s = s0
        total = 0.0
        for _ in range(steps):
            s *= math.exp(drift + vol * rng.gauss(0.0, 1.0))
            total += s
        average = total / steps
        payoff += average - strike if average > strike else 0.0
    return math.exp(-rate * maturity) * payoff / paths

chunks = 8
result = repr(sum(asian_call_price(5000, 64, seed) for seed in range(chunks)) / chunks)
""",
}


def agree(name: str, camel: str, python: str) -> bool:
    """Whether the two programs computed the same thing (see the docstring)."""
    if name == "sim_pi":
        (n1, h1), (n2, h2) = (map(int, s.split()) for s in (camel, python))
        return n1 == n2 and abs(4 * h1 / n1 - math.pi) < 0.01 and abs(4 * h2 / n2 - math.pi) < 0.01
    if name == "sim_asian":
        a, b = float(camel), float(python)
        return 4.0 < a < 8.0 and abs(a - b) < 0.3  # standard error ~0.04 per side
    return camel == python


def run_camel(camel: str, name: str) -> tuple[str, float, float]:
    t0 = time.perf_counter()
    proc = subprocess.run([camel, "run", "--profile", "--scheduler=seq", str(HERE / f"{name}.cml")],
                          capture_output=True, text=True, timeout=900)
    total = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"camel {name} failed:\n{proc.stderr}")
    m = re.search(r"run ([0-9.]+) ms", proc.stderr)
    return proc.stdout.strip(), total, float(m.group(1)) / 1e3 if m else total


def run_python(python: str, name: str) -> tuple[str, float]:
    return run_python_code(python, name, PYTHON_CODE[name], timeout=900)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camel")
    ap.add_argument("--python")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--no-memory", action="store_true", help="skip the 1e8 merge sort")
    args = ap.parse_args()
    camel, python = find_camel(args.camel), find_python(args.python)
    version = subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip()
    names = args.only.split(",") if args.only else list(PYTHON_CODE)
    print(f"camel: {camel}\npython: {python} ({version})\ncamel --scheduler=seq; best of {args.repeat} runs\n")
    header = f"{'workload':<16}{'camel total s':>14}{'camel run s':>13}{'cpython s':>11}{'cpython/camel':>15}"
    print(header)
    print("-" * len(header))
    for name in names:
        best_total = best_run = best_py = float("inf")
        for _ in range(args.repeat):
            out, total, run = run_camel(camel, name)
            pout, py = run_python(python, name)
            if not agree(name, out, pout):
                sys.exit(f"{name}: results disagree: camel {out!r}, python {pout!r}")
            best_total, best_run, best_py = min(best_total, total), min(best_run, run), min(best_py, py)
        print(f"{name:<16}{best_total:>14.3f}{best_run:>13.3f}{best_py:>11.3f}{best_py / best_run:>15.2f}")
    if args.no_memory:
        return
    # The peak of the camel process alone: RUSAGE_CHILDREN would include the
    # CPython runs above, so the child is started from a fresh interpreter.
    probe = ("import os, subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE); "
             "out = p.stdout.read(); _, st, ru = os.wait4(p.pid, 0); "
             "sys.stdout.write(out.decode()); print('MAXRSS', ru.ru_maxrss * 1024); sys.exit(os.waitstatus_to_exitcode(st))")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", probe, camel, "run", "--scheduler=seq",
                           str(HERE / "arr_msort_big.cml")], capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"arr_msort_big failed:\n{proc.stderr}")
    lines = proc.stdout.strip().splitlines()
    rss = int(lines[-1].split()[1])
    verdict = "ok" if rss <= 2_000_000_000 else "OVER the 2 GB bound"
    print(f"\narr_msort_big: merge_sort of 1e8 ints: {lines[0]}\n"
          f"  peak RSS {rss / 1e9:.2f} GB ({rss / 2**30:.2f} GiB), {wall:.1f} s wall: {verdict}")
    if rss > 2_000_000_000:
        sys.exit(1)


if __name__ == "__main__":
    main()
