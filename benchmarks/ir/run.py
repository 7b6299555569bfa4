#!/usr/bin/env python3
"""GIR core benchmark: builds (if needed) and runs csrc/tools/bench-ir (xacc-bench-ir)
on generated graphs of 10k, 100k and 1M nodes, then prints one table of milliseconds,
nodes per second and ns per node per phase, the ratio of per-node cost at the largest
size to the smallest (1.0 = linear), and the issue's two targets:

* 1M-node build + verify + dce + cse in under 10 s;
* per-node cost at 1M within 2x of the cost at 10k (for that pipeline and each phase).

Usage: benchmarks/ir/run.py [--sizes 10000,100000,1000000] [--repeat N] [--wall] [--check]
                            [--shape realistic|fanout] [--cold]
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


def run(tool: pathlib.Path, sizes: str, repeat: int | None, seed: int,
        shape: str, flush_mb: int) -> list[dict]:
    cmd = [str(tool), "--json", "--sizes", sizes, "--seed", str(seed), "--shape", shape,
           "--flush-mb", str(flush_mb)]
    if repeat:
        cmd += ["--repeat", str(repeat)]
    rows: list[dict] = []
    size = None
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            obj = json.loads(line)
            if "size" in obj:
                size = obj["size"]
                print(f"-- N = {size} (median of {obj['repeat']})", flush=True)
                continue
            obj["size"] = size
            rows.append(obj)
    if proc.returncode != 0:
        sys.exit(f"run.py: xacc-bench-ir exited with {proc.returncode}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--cold", action="store_true",
                    help="evict the caches (write 512 MiB) before each timed run, so small "
                         "graphs are not timed hot while large ones cannot be")
    ap.add_argument("--shape", default="realistic", choices=["realistic", "fanout"],
                    help="fanout: one value used by every node (a stress case)")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument("--wall", action="store_true", help="judge by wall time, not CPU time")
    args = ap.parse_args()
    key = "seconds" if args.wall else "cpu_seconds"
    clock = "wall" if args.wall else "cpu"

    build = pathlib.Path(os.environ.get("XACC_BUILD_DIR", REPO / "build")).resolve()
    rows = run(locate_tool(build), args.sizes, args.repeat, args.seed, args.shape,
               512 if args.cold else 0)
    sizes = sorted({r["size"] for r in rows})
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    cell = {(r["size"], r["phase"]): r for r in rows}
    small, large = sizes[0], sizes[-1]

    head = f"{'phase':<22}" + "".join(f"{f'N={s:,}':>44}" for s in sizes) + f"{'ns/node ratio':>16}"
    print()
    print(f"times in ms; nodes/s and ns/node from {clock} time")
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
            line += f"{ratios[phase]:>16.2f}"
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
