"""Camel vs CPython benchmarks (issue 3): recursive fib(30), a 1,000,000-step
tail-recursive accumulation, map/filter/reduce over 1,000,000 elements and
string building. Each Camel program (`*.cml` next to this file) runs under
`camel run --profile`; the same algorithm runs in CPython (3.11 when
available: `python3.11`, else `sys.executable`), with the recursion limit
raised as needed. Both are timed in one run of this script, best of
--repeat runs, and printed as a table with ratios (CPython time / Camel time:
above 1 means Camel is faster). Camel's "run" column is the runtime stage
alone (from --profile); "total" is the whole process (parse, sema, lowering,
passes, run); CPython's time is the algorithm alone (interpreter start-up
excluded), so the fair comparison is CPython vs Camel run. Camel runs with
--scheduler=seq (one thread, like CPython) unless --scheduler says otherwise
(`auto` is camel's own default; benchmarks/camel/parallel.py measures par).

Usage: python benchmarks/camel/run.py [--camel PATH] [--python PATH] [--repeat N]
                                      [--scheduler seq|par|auto]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

PYTHON_CODE = {
    "fib": """
import sys
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
result = fib(30)
""",
    "accumulate": """
import sys
sys.setrecursionlimit(2_000_000)
import threading
threading.stack_size(1 << 30)
out = []
def acc(n, total):
    return total if n == 0 else acc(n - 1, total + n % 7)
def body():
    out.append(acc(1_000_000, 0))
t = threading.Thread(target=body); t.start(); t.join()
result = out[0]
""",
    "map_filter_reduce": """
from functools import reduce
xs = list(range(0, 1_000_000))
ys = list(map(lambda v: v * 3 + 1, xs))
zs = list(filter(lambda v: v % 2 == 0, ys))
result = reduce(lambda a, b: a + b, zs, 0)
""",
    "strings": """
import sys
sys.setrecursionlimit(100_000)
def build(n, s):
    return s if n == 0 else build(n - 1, s + 'ab')
joined = ','.join(map(lambda v: str(v), range(0, 200_000)))
built = build(20_000, '')
result = len(joined) + len(built)
""",
}

TIMER = """
import time as _t
_src = {src!r}
_g = {{}}
_t0 = _t.perf_counter()
exec(compile(_src, 'bench', 'exec'), _g)
_dt = _t.perf_counter() - _t0
print(_g['result'])
print('SECONDS', _dt)
"""


def find_camel(explicit: str | None) -> str:
    if explicit:
        return explicit
    for d in (os.environ.get("XACC_BUILD_DIR"), str(REPO / "build")):
        if d and (Path(d) / "bin" / "camel").is_file():
            return str((Path(d) / "bin" / "camel").resolve())
    found = shutil.which("camel")
    if not found:
        sys.exit("camel binary not found (set XACC_BUILD_DIR or --camel)")
    return found


def find_python(explicit: str | None) -> str:
    return explicit or shutil.which("python3.11") or sys.executable


def run_camel(camel: str, name: str, scheduler: str = "seq") -> tuple[str, float, float]:
    t0 = time.perf_counter()
    proc = subprocess.run([camel, "run", "--profile", f"--scheduler={scheduler}", str(HERE / f"{name}.cml")],
                          capture_output=True, text=True, timeout=600)
    total = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"camel {name} failed:\n{proc.stderr}")
    m = re.search(r"run ([0-9.]+) ms", proc.stderr)
    return proc.stdout.strip(), total, float(m.group(1)) / 1e3 if m else total


def run_python(python: str, name: str) -> tuple[str, float]:
    return run_python_code(python, name, PYTHON_CODE[name])


def run_python_code(python: str, name: str, src: str, timeout: float = 600) -> tuple[str, float]:
    """Runs `src` under TIMER: (its first printed line, seconds it measured)."""
    proc = subprocess.run([python, "-c", TIMER.format(src=src)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"python {name} failed:\n{proc.stderr}")
    lines = proc.stdout.strip().splitlines()
    return lines[0], float(lines[-1].split()[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--camel")
    ap.add_argument("--python")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated benchmark names")
    ap.add_argument("--scheduler", default="seq", choices=["seq", "par", "auto"])
    args = ap.parse_args()
    camel, python = find_camel(args.camel), find_python(args.python)
    version = subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip()
    names = args.only.split(",") if args.only else list(PYTHON_CODE)
    print(f"camel: {camel}\npython: {python} ({version})\ncamel --scheduler={args.scheduler}; best of {args.repeat} runs\n")
    header = f"{'benchmark':<20}{'camel total s':>14}{'camel run s':>13}{'cpython s':>11}{'cpython/camel':>15}"
    print(header)
    print("-" * len(header))
    for name in names:
        best_total = best_run = best_py = float("inf")
        for _ in range(args.repeat):
            out, total, run = run_camel(camel, name, args.scheduler)
            pout, py = run_python(python, name)
            if out != pout:
                sys.exit(f"{name}: results differ: camel {out!r}, python {pout!r}")
            best_total, best_run, best_py = min(best_total, total), min(best_run, run), min(best_py, py)
        print(f"{name:<20}{best_total:>14.3f}{best_run:>13.3f}{best_py:>11.3f}{best_py / best_run:>15.2f}")


if __name__ == "__main__":
    main()
