"""Parallel scheduler benchmarks (issue 4): embarrassingly parallel Camel
programs (`par_*.cml` next to this file: two and four independent fib(30)
calls joined, a map-reduce over four chunks) run under
`camel run --profile --scheduler=seq` and `--scheduler=par --threads N`
(N = 2 by default) in the same run of this script. Each is timed as the best
of --repeat runs of the runtime stage (from --profile); the outputs of the two
schedulers must agree and match the expected value. Printed per workload:
seq and par run times, the speedup (seq / par) and the CPU time the par run
used per second of wall time (near N when N cores were free; far below it on
a loaded machine, where the speedup cannot reach N either).

Usage: python benchmarks/camel/parallel.py [--camel PATH] [--threads N] [--repeat N]
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import time

from run import HERE, find_camel


def fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def collatz_sum(lo: int, hi: int) -> int:
    total = 0
    for n in range(lo, hi):
        k = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            k += 1
        total += k
    return total


EXPECTED = {
    "par_fib2": 2 * fib(30),
    "par_fib4": 4 * fib(30),
    "par_chunks": collatz_sum(1, 120000),
}


def run_once(camel: str, name: str, flags: list[str]) -> tuple[str, float, float]:
    """Returns (stdout, run seconds from --profile, CPU seconds of the process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([camel, "run", "--profile", *flags, str(HERE / f"{name}.cml")],
                          capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"camel {' '.join(flags)} {name} failed:\n{proc.stderr}")
    m = re.search(r"run ([0-9.]+) ms", proc.stderr)
    run_s = float(m.group(1)) / 1e3 if m else wall
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.stdout.strip(), run_s, cpu / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camel")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", help="comma-separated workload names")
    args = ap.parse_args()
    camel = find_camel(args.camel)
    names = args.only.split(",") if args.only else list(EXPECTED)
    try:
        load = open("/proc/loadavg").read().split()[0]
    except OSError:
        load = "?"
    par_flags = ["--scheduler=par", "--threads", str(args.threads)]
    print(f"camel: {camel}\nseq: --scheduler=seq   par: {' '.join(par_flags)}\n"
          f"best of {args.repeat} runs (interleaved); 1-minute load average at start: {load}\n")
    header = f"{'workload':<14}{'seq run s':>11}{'par run s':>11}{'speedup':>9}{'par cpu/wall':>14}"
    print(header)
    print("-" * len(header))
    for name in names:
        best_seq = best_par = float("inf")
        util = 0.0
        for _ in range(args.repeat):
            out_s, t_s, _ = run_once(camel, name, ["--scheduler=seq"])
            out_p, t_p, u_p = run_once(camel, name, par_flags)
            for sched, out in (("seq", out_s), ("par", out_p)):
                if out != str(EXPECTED[name]):
                    sys.exit(f"{name} ({sched}): got {out!r}, expected {EXPECTED[name]}")
            best_seq = min(best_seq, t_s)
            if t_p < best_par:
                best_par, util = t_p, u_p
        print(f"{name:<14}{best_seq:>11.3f}{best_par:>11.3f}{best_seq / best_par:>8.2f}x{util:>14.2f}")


if __name__ == "__main__":
    main()
