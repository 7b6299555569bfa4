#!/usr/bin/env python3
"""GIR core benchmark: builds (if needed) and runs csrc/tools/bench-ir (xacc-bench-ir)
on generated graphs of 10k, 100k and 1M nodes, then prints one table of milliseconds,
nodes per second and ns per node per phase, the ratio of per-node cost at the largest
size to the smallest (1.0 = linear), and the issue's two targets:

* 1M-node build + verify + dce + cse in under 10 s;
* per-node cost of build + verify + dce + cse at 1M within 2x of the cost at 10k
  (the ratio of every phase is printed too, and phases above 2x are listed).

How it measures: every size does the same total work (--total nodes, default the
largest size), so N=10k means a module of 100 graphs of 10k nodes and N=1M one graph
of 1M; per-node costs then differ only by graph size, not by a small graph staying in
the caches while a large one cannot. --total 0 times one graph per size instead. The
phases run in --repeat rounds (default 5) that each visit every size, in a rotating
order, so other processes' load is spread over all sizes; each cell is the median over
the rounds (--min: the minimum).

Usage: benchmarks/ir/run.py [--sizes 10000,100000,1000000] [--repeat N] [--total N]
                            [--min] [--wall] [--check] [--shape realistic|fanout] [--cold]
Environment: XACC_BUILD_DIR (default <repo>/build). Per-node costs and targets use CPU
time by default: on a shared machine wall time grows with other people's load, CPU time
does not (--wall uses wall time instead; both are printed). --check exits 1 when a
target is missed (the default is to report only).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
TARGET_SECONDS = 10.0
TARGET_RATIO = 2.0
PIPELINE = "build+verify+dce+cse"


def locate_tool(build: pathlib.Path) -> pathlib.Path:
    tool = build / "bin" / "xacc-bench-ir"
    if not tool.exists():
        if not (build / "CMakeCache.txt").exists():
            sys.exit(f"run.py: {build} is not a configured build tree; run `make build` "
                     "or set XACC_BUILD_DIR")
        print(f"-- building xacc-bench-ir in {build}", flush=True)
        subprocess.run([shutil.which("cmake") or "cmake", "--build", str(build), "--target",
                        "xacc-bench-ir"], check=True)
    return tool


def run(tool: pathlib.Path, args: argparse.Namespace) -> list[dict]:
    cmd = [str(tool), "--json", "--sizes", args.sizes, "--seed", str(args.seed), "--shape",
           args.shape, "--flush-mb", str(512 if args.cold else 0), "--repeat", str(args.repeat)]
    if args.total is not None:
        cmd += ["--total", str(args.total)]
    print("-- " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"run.py: xacc-bench-ir exited with {proc.returncode}")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=5, help="rounds (default 5)")
    ap.add_argument("--total", type=int, default=None,
                    help="nodes per size and round (default: the largest size; 0: one graph "
                         "per size)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--cold", action="store_true",
                    help="evict the caches (write 512 MiB) before each timed run")
    ap.add_argument("--shape", default="realistic", choices=["realistic", "fanout"],
                    help="fanout: one value used by every node (a stress case)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument("--wall", action="store_true", help="judge by wall time, not CPU time")
    ap.add_argument("--min", action="store_true",
                    help="judge by the minimum over the rounds, not the median")
    args = ap.parse_args()
    if args.wall:
        key = "wall_min" if args.min else "seconds"
    else:
        key = "cpu_min" if args.min else "cpu_seconds"
    clock = ("wall" if args.wall else "cpu") + (" (min)" if args.min else " (median)")

    build = pathlib.Path(os.environ.get("XACC_BUILD_DIR", REPO / "build")).resolve()
    rows = run(locate_tool(build), args)
    sizes = sorted({r["size"] for r in rows})
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    cell = {(r["size"], r["phase"]): r for r in rows}
    small, large = sizes[0], sizes[-1]
    graphs = {r["size"]: r["graphs"] for r in rows}
    rounds = len(rows[0]["cpu_samples"]) if rows else 0

    other = {"cpu_seconds": "cpu_min", "seconds": "wall_min", "cpu_min": "cpu_seconds",
             "wall_min": "seconds"}[key]
    other_name = "min" if "min" in other else "median"
    head = (f"{'phase':<22}" + "".join(f"{f'N={s:,}':>44}" for s in sizes)
            + f"{'ns/node ratio':>16}{f'({other_name})':>10}")
    print()
    print(f"{rounds} rounds; ms are medians; nodes/s, ns/node and ratios from {clock} time")
    print(f"{'':<22}" + "".join(f"{f'{graphs[s]} graph(s) of {s:,}':>44}" for s in sizes))
    print(head)
    print(f"{'':<22}" + "".join(f"{'wall ms':>10}{'cpu ms':>10}{'nodes/s':>12}{'ns/node':>12}"
                                for _ in sizes) + f"{f'{large:,}/{small:,}':>16}")
    print("-" * len(head))
    ratios = {}
    for phase in phases:
        line = f"{phase:<22}"
        for s in sizes:
            r = cell.get((s, phase))
            if r is None:
                line += f"{'-':>44}"
                continue
            secs, n = r[key], r["nodes"]
            line += (f"{r['seconds'] * 1e3:>10.1f}{r['cpu_seconds'] * 1e3:>10.1f}"
                     f"{n / secs:>12.3g}{secs * 1e9 / n:>12.1f}")
        a, b = cell.get((small, phase)), cell.get((large, phase))
        if a and b and len(sizes) > 1:
            ratios[phase] = (b[key] / b["nodes"]) / (a[key] / a["nodes"])
            alt = (b[other] / b["nodes"]) / (a[other] / a["nodes"])
            line += f"{ratios[phase]:>16.2f}{alt:>10.2f}"
        print(line)
    notes = [f"  {r['phase']} @ {r['size']:,}: {r['note'].strip()}" for r in rows
             if r["note"].strip() and r["size"] == large]
    if notes:
        print("\n".join(["", "pass statistics at the largest size:"] + notes))

    ok = True
    pipe = cell.get((large, PIPELINE))
    print()
    if pipe:
        verdict = pipe[key] < TARGET_SECONDS
        ok &= verdict or large < 1_000_000
        print(f"target: {PIPELINE} at N={large:,}: {pipe[key]:.2f} s {clock} "
              f"({pipe['seconds']:.2f} s wall, {pipe['cpu_seconds']:.2f} s cpu; "
              f"< {TARGET_SECONDS:.0f} s: {'yes' if verdict else 'NO'})")
    if PIPELINE in ratios:
        samples = "cpu_samples" if not args.wall else "wall_samples"
        for s in (small, large):
            r = cell[(s, PIPELINE)]
            per_node = ", ".join(f"{x * 1e9 / r['nodes']:.0f}" for x in r[samples])
            print(f"{PIPELINE} ns/node by round at N={s:,}: {per_node}")
        verdict = ratios[PIPELINE] <= TARGET_RATIO
        ok &= verdict
        print(f"target: per-node {clock} cost of {PIPELINE} at {large:,} vs {small:,}: "
              f"{ratios[PIPELINE]:.2f}x (<= {TARGET_RATIO:.0f}x: {'yes' if verdict else 'NO'})")
    worse = {p: r for p, r in ratios.items() if r > TARGET_RATIO}
    if worse:
        ok = False
        print("phases whose per-node cost grows more than 2x: "
              + ", ".join(f"{p} ({r:.2f}x)" for p, r in worse.items()))
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())
