"""Profile-guided optimization: the same workloads with and without a profile, in ONE run.

    PYTHONPATH=. python benchmarks/pgo/run.py [--workloads mlp_example,tiny_gpt_example,mlp,encoder]
                                              [--devices cpu,xpu0] [--reps 7] [--threads 1]

For each workload and device a child process records a profile first (mode
"record": the profiling run, whose overheads are not measured), running the
workload exactly as one measured repeat does. Then this process times the
workload without PGO and with the profile (mode "use"), interleaved (off, pgo,
pgo, off, ... so neither variant always runs first), each repeat from a clean
XJIT cache (xacc.jit.reset()):
  * cold: the first run of the workload: capture, compiles and recompiles, and
    running it (MLIR kernels are cached process-wide, so after the first repeat,
    which is not counted, cold does not include compiling kernels: both
    variants alike). For the example programs this is the program's latency,
    what `python -m xjit examples/X.py` spends in main();
  * warm (models only): the next --warm-runs runs with everything compiled
    (median per run). The example programs run once per process, as profiled:
    repeating main() in one process would be another program than the one
    the profile describes (a frame called once per run becomes hot);
  * recompiles and graphs compiled (xacc.jit.counters()), and the PGO decisions.
Times are CPU time of this process (time.process_time; --threads 1 by default,
so that is the work done), which a machine shared with other jobs disturbs far
less than wall time; wall-time ratios are printed too.
Ratios are pgo / off of the medians over the repeats. Criteria (issue 9, 2): at
least one decision changed on the example models, and PGO is never slower than
without: no cold or warm median ratio above 1.03.

Workloads: `mlp_example` and `tiny_gpt_example` run the examples' main()
(examples/mlp.py trains 20 steps and evaluates; examples/tiny_gpt.py generates
12 tokens, its sequence length growing every step); `mlp` and `encoder` are the
models of benchmarks/models/run.py, called 20 times (inference).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "benchmarks" / "models"))
WORKLOADS = ("mlp_example", "tiny_gpt_example", "mlp", "encoder")
MARGIN = 1.03


def make(name: str):
    """A zero-argument callable running the workload once (plain PyTorch)."""
    import torch
    if name == "mlp_example":
        import mlp
        return mlp.main
    if name == "tiny_gpt_example":
        import tiny_gpt
        return tiny_gpt.main
    from run import build  # benchmarks/models/run.py
    m, args = build(name)

    def calls() -> None:
        with torch.no_grad():
            for _ in range(20):
                m(*args)
    return calls


def run_once(fn, device: str, session) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of one run of the workload."""
    from xacc._src.jit import _Capture
    from xacc._src.capture.convert import Options
    c0, t0 = time.process_time(), time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), _Capture(Options(device=device, pgo=session)):
        fn()
    return time.process_time() - c0, time.perf_counter() - t0


def is_program(name: str) -> bool:
    return name.endswith("_example")


def record(name: str, device: str, path: str, warm_runs: int) -> None:
    """Child: the profiling run, the same runs as one measured repeat."""
    import xacc
    from xacc._src.pgo import Config, resolve
    from xacc._src.jit import _ensure_installed
    _ensure_installed()
    fn = make(name)
    sess = resolve(Config(path, "record"))
    for _ in range(1 if is_program(name) else 1 + warm_runs):
        run_once(fn, device, sess)
    xacc.pgo.flush()


def measure(name: str, device: str, path: str, reps: int, warm_runs: int) -> dict:
    import torch
    from xacc._src.capture import convert
    from xacc._src.pgo import Config, resolve
    from xacc._src.jit import _ensure_installed, counters, reset
    _ensure_installed()
    sess = resolve(Config(path, "use"))
    fn = make(name)
    res = {v: {"cold": [], "warm": [], "cold_wall": [], "warm_wall": [], "recompiles": [], "graphs": []}
           for v in ("off", "pgo")}
    decisions: list[str] = []
    for rep in range(reps + 1):
        order = ("off", "pgo") if rep % 2 == 0 else ("pgo", "off")
        for v in order:
            reset()
            torch.manual_seed(0)
            s = sess if v == "pgo" else None
            cold, cold_wall = run_once(fn, device, s)
            c = counters()
            warms = [run_once(fn, device, s) for _ in range(0 if is_program(name) else warm_runs)] or [(0.0, 0.0)]
            warm, warm_wall = statistics.median(w[0] for w in warms), statistics.median(w[1] for w in warms)
            if v == "pgo" and not decisions:
                decisions = [f"{ev.function}: {n}" for ev in convert.EVENTS for n in ev.pgo]
            if rep == 0:
                continue  # warm-up repeat (MLIR kernels, allocator, imports)
            res[v]["cold"].append(cold)
            res[v]["warm"].append(warm)
            res[v]["cold_wall"].append(cold_wall)
            res[v]["warm_wall"].append(warm_wall)
            res[v]["recompiles"].append(c["recompiles"])
            res[v]["graphs"].append(c["graphs"])
    out = {"workload": name, "device": device, "decisions": decisions, "reps": reps}
    for v in ("off", "pgo"):
        out[v] = {k + "_ms": statistics.median(res[v][k]) * 1e3 for k in ("cold", "warm", "cold_wall", "warm_wall")}
        out[v].update(recompiles=max(res[v]["recompiles"]), graphs=max(res[v]["graphs"]))
    out["cold_ratio"] = out["pgo"]["cold_ms"] / out["off"]["cold_ms"]
    out["cold_wall_ratio"] = out["pgo"]["cold_wall_ms"] / out["off"]["cold_wall_ms"]
    program = is_program(name)
    out["warm_ratio"] = 1.0 if program else out["pgo"]["warm_ms"] / out["off"]["warm_ms"]
    out["warm_wall_ratio"] = 1.0 if program else out["pgo"]["warm_wall_ms"] / out["off"]["warm_wall_ms"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--devices", default="cpu,xpu0")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--warm-runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--record", nargs=3, metavar=("WORKLOAD", "DEVICE", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ns = ap.parse_args()
    import torch
    torch.set_num_threads(ns.threads)
    if ns.record:
        record(*ns.record, ns.warm_runs)
        return
    from xacc._C import capture as C
    devices = [d for d in ns.devices.split(",") if C.device_available(d)]
    tmp = tempfile.mkdtemp(prefix="xacc-pgo-bench-")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    rows = []
    for name in ns.workloads.split(","):
        for dev in devices:
            path = os.path.join(tmp, f"{name}-{dev}.json")
            p = subprocess.run([sys.executable, __file__, "--threads", str(ns.threads), "--warm-runs", str(ns.warm_runs),
                                "--record", name, dev, path],
                               env=env, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"{name} {dev}: profiling run failed:\n{p.stderr[-2000:]}", file=sys.stderr)
                sys.exit(1)
            r = measure(name, dev, path, ns.reps, ns.warm_runs)
            rows.append(r)
            warm = ("warm     -" + " " * 34 if is_program(name) else
                    f"warm off {r['off']['warm_ms']:8.2f} ms  pgo {r['pgo']['warm_ms']:8.2f} ms (x{r['warm_ratio']:.3f})")
            print(f"{name:18s} {dev:5s} cold off {r['off']['cold_ms']:8.1f} ms  pgo {r['pgo']['cold_ms']:8.1f} ms "
                  f"(x{r['cold_ratio']:.3f})  {warm}  recompiles {r['off']['recompiles']} -> {r['pgo']['recompiles']}  "
                  f"graphs {r['off']['graphs']} -> {r['pgo']['graphs']}  (wall x{r['cold_wall_ratio']:.3f} / "
                  f"x{r['warm_wall_ratio']:.3f})", flush=True)
            for d in r["decisions"]:
                print(f"    {d}", flush=True)
    examples = [r for r in rows if r["workload"].endswith("_example")]
    changed = sum(len(r["decisions"]) for r in examples)
    worst = max(rows, key=lambda r: max(r["cold_ratio"], r["warm_ratio"]))
    worst_ratio = max(worst["cold_ratio"], worst["warm_ratio"])
    print(f"\nthreads {torch.get_num_threads()}, {ns.reps} interleaved repeats (+1 warm-up), medians of CPU time "
          f"(time.process_time: on a loaded machine wall time mostly measures the other processes; wall ratios in "
          f"parentheses); ratio = pgo / off")
    print(f"criterion: PGO changes at least one decision on the example models: {changed} decision(s) -> "
          f"{'PASS' if changed else 'FAIL'}")
    print(f"criterion: PGO never slower (every cold and warm median ratio <= {MARGIN}): worst x{worst_ratio:.3f} "
          f"({worst['workload']} {worst['device']}) -> {'PASS' if worst_ratio <= MARGIN else 'FAIL'}")
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
