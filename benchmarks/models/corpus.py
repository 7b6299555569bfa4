"""The model corpus of issue #8 under eager, torch.compile and xacc, in ONE run.

    PYTHONPATH=. python benchmarks/models/corpus.py [--models bert,vit,...] [--skip-inductor]
        [--no-train] [--modes dynamo,inductor,xacc_cpu,xacc_xpu0] [--csv PATH] [--jobs N] [--timeout S]

Models are those of zoo.py (transformers models built from small configs with
random weights, plus classic models written there). Every (model, mode) runs
in its own child process (crash isolation; fresh xacc, Dynamo and inductor
caches, so compile times are cold and counters belong to that mode alone).
Each child builds the model and its inputs from the same seeds and computes
the eager reference itself. Modes:

  dynamo     torch._dynamo.explain on the batch-2 call: Dynamo's graph count,
             graph-break count and break reasons (no backend compile), the
             yardstick for "xacc reports no more breaks than torch.compile";
  inductor   torch.compile(backend="inductor") (a counting wrapper around it);
  xacc_cpu   xacc.jit(model) (the ATen executor);
  xacc_xpu0  xacc.jit(model, device="xpu0") (the MLIR backend).

Per compiled mode: correctness (every output tensor allclose to eager,
rtol 1e-3 / atol 1e-4, on each of the batch sizes 2, 3, 4 in that order);
graphs and breaks of the first call (batch 2) with their reasons; recompiles
caused by the batch-3 and batch-4 calls (xacc: frames recompiled, from
xacc.jit.counters(); inductor: backend compilations after the first call);
compile time = first call minus one eager call; latency at batch 2 as the
median of interleaved rounds (eager, compiled, eager, ...) in the same child,
so the speedup compares timings taken under the same load. The training step
(unless --no-train) is the whole function `forward; loss = mean of squares of
the float outputs; loss.backward(); SGD step; zero_grad` compiled by the mode
and run 5 times on batch 2; train_ok says whether every parameter is then
allclose (rtol 1e-3 / atol 1e-5) to 5 eager steps from the same start. Models
run in eval mode for both (dropout off, batch-norm running statistics) so
eager and compiled compute the same function.

At the end: a table, the CSV (--csv), the remaining xacc break reasons by
count, and the criteria of issue 8 (2, 3, 4) judged on this run.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

MODES = ("dynamo", "inductor", "xacc_cpu", "xacc_xpu0")
BATCHES = (2, 3, 4)
TRAIN_STEPS = 5
RTOL, ATOL = 1e-3, 1e-4
FIELDS = ["model", "kind", "mode", "status", "correct", "max_diff", "graphs", "breaks", "break_reasons",
          "recompiles", "compile_s", "eager_ms", "ms", "speedup", "train_ok", "train_max_diff",
          "train_graphs", "train_breaks", "error"]


# -- child side ---------------------------------------------------------------------------------

def _outputs(out):
    from zoo import flatten_output
    return [t.detach() for t in flatten_output(out)]


def _compare(ref: list, got: list) -> tuple[bool, float]:
    import torch
    if len(ref) != len(got):
        return False, float("inf")
    ok, worst = True, 0.0
    for r, g in zip(ref, got):
        if not isinstance(g, torch.Tensor) or r.shape != g.shape or r.dtype != g.dtype:
            return False, float("inf")
        if r.is_floating_point():
            d = float((r - g).abs().max()) if r.numel() else 0.0
            worst = max(worst, d)
            ok &= bool(torch.allclose(r, g, rtol=RTOL, atol=ATOL))
        else:
            ok &= bool(torch.equal(r, g))
    return ok, worst


def _loss(out):
    from zoo import flatten_output
    total = 0.0
    for t in flatten_output(out):
        if t.is_floating_point():
            total = total + t.pow(2).mean()
    return total


def train_step(model, opt, args, kwargs):
    loss = _loss(model(*args, **kwargs))
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.detach()


def _compiler(mode: str, counts: dict):
    """fn -> compiled fn for `mode`, and a function returning (graphs, breaks, recompiles, reasons)."""
    import torch
    if mode == "inductor":
        from torch._inductor.compile_fx import compile_fx

        def backend(gm, example_inputs):
            counts["compiles"] += 1
            return compile_fx(gm, example_inputs)

        def stats():
            return counts["compiles"], None, None, []
        return (lambda fn: torch.compile(fn, backend=backend)), stats
    import xacc
    from xacc._src.capture import convert
    device = "cpu" if mode == "xacc_cpu" else "xpu0"
    mark = [len(convert.EVENTS)]

    def stats():
        from xacc.jit import counters
        c = counters()
        reasons = [f"{b.code} {b.reason}: {b.detail}" for ev in convert.EVENTS[mark[0]:] for b in ev.breaks]
        return c["graphs"], c["breaks"], c["recompiles"], reasons
    return (lambda fn: xacc.jit(fn, device=device)), stats


def _timed(fn, *a, **k):
    t0 = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t0


def run_dynamo(name: str) -> dict:
    import torch
    import torch._dynamo
    from zoo import build
    model, make = build(name)
    args, kwargs = make(BATCHES[0])
    with torch.no_grad():
        ex = torch._dynamo.explain(model)(*args, **kwargs)
    reasons = []
    for r in ex.break_reasons:
        frame = r.user_stack[-1] if r.user_stack else None
        where = f" ({os.path.basename(frame.filename)}:{frame.lineno})" if frame is not None else ""
        reasons.append(f"{r.reason.splitlines()[0][:200]}{where}")
    return {"graphs": ex.graph_count, "breaks": ex.graph_break_count, "break_reasons": reasons}


def run_mode(name: str, mode: str, train: bool, rounds: int, target_ms: float) -> dict:
    import torch
    from zoo import build
    if mode == "dynamo":
        return run_dynamo(name)
    res: dict = {}
    model, make = build(name)
    inputs = [make(b) for b in BATCHES]
    counts = {"compiles": 0}
    compile_fn, stats = _compiler(mode, counts)
    with torch.no_grad():
        refs = [_outputs(model(*a, **k)) for a, k in inputs]
        _, eager_one = _timed(model, *inputs[0][0], **inputs[0][1])
        cmodel = compile_fn(model)
        g0 = stats()
        out, first = _timed(cmodel, *inputs[0][0], **inputs[0][1])
        g1 = stats()
        res["compile_s"] = max(first - eager_one, 0.0)
        ok, worst = _compare(refs[0], _outputs(out))
        if mode == "inductor":
            res["graphs"] = g1[0] - g0[0]
        else:
            res["graphs"], res["breaks"] = g1[0] - g0[0], g1[1] - g0[1]
            res["break_reasons"] = g1[3]
        for (a, k), ref in zip(inputs[1:], refs[1:]):
            o = cmodel(*a, **k)
            ok2, w2 = _compare(ref, _outputs(o))
            ok, worst = ok and ok2, max(worst, w2)
        g2 = stats()
        res["recompiles"] = (g2[0] - g1[0]) if mode == "inductor" else (g2[2] - g1[2])
        res["correct"], res["max_diff"] = ok, worst
        # Latency at batch 2, interleaved with eager in this process.
        a, k = inputs[0]
        one = statistics.median(_timed(model, *a, **k)[1] for _ in range(3))
        n = max(2, min(100, int(target_ms / 1e3 / max(one, 1e-6))))
        times = {"eager": [], "mode": []}
        for _ in range(rounds):
            for key, f in (("eager", model), ("mode", cmodel)):
                t0 = time.perf_counter()
                for _ in range(n):
                    f(*a, **k)
                times[key].append((time.perf_counter() - t0) / n)
        res["eager_ms"] = statistics.median(times["eager"]) * 1e3
        res["ms"] = statistics.median(times["mode"]) * 1e3
        res["speedup"] = res["eager_ms"] / res["ms"]
    if train:
        res.update(_train(name, mode, compile_fn, stats))
    return res


def _train(name: str, mode: str, compile_fn, stats) -> dict:
    import torch
    from zoo import build
    a, k = build(name)[1](BATCHES[0])
    ref_model, _ = build(name)
    model, _ = build(name)
    ref_opt = torch.optim.SGD(ref_model.parameters(), lr=0.05)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    step = compile_fn(train_step)
    g0 = stats()
    for i in range(TRAIN_STEPS):
        train_step(ref_model, ref_opt, a, k)
        step(model, opt, a, k)
        if i == 0:
            g1 = stats()
    ok, worst = True, 0.0
    for (n1, p1), (n2, p2) in zip(ref_model.named_parameters(), model.named_parameters()):
        d = float((p1.detach() - p2.detach()).abs().max()) if p1.numel() else 0.0
        worst = max(worst, d)
        ok &= bool(torch.allclose(p1.detach(), p2.detach(), rtol=RTOL, atol=1e-5))
    out = {"train_ok": ok, "train_max_diff": worst, "train_graphs": g1[0] - g0[0]}
    if mode != "inductor":
        out["train_breaks"] = g1[1] - g0[1]
    return out


def child_main(a) -> None:
    import torch
    torch.set_num_threads(a.threads)
    try:
        res = run_mode(a.one, a.mode, not a.no_train, a.rounds, a.target_ms)
        res["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - reported as this mode's failure
        import traceback
        res = {"status": "error", "error": f"{type(e).__name__}: {e}"[:500]}
        traceback.print_exc()
    print("RESULT " + json.dumps(res, default=float))


# -- parent side ---------------------------------------------------------------------------------

def run_child(model: str, mode: str, a) -> dict:
    from zoo import MODELS
    row = {"model": model, "kind": MODELS[model].kind, "mode": mode}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "inductor"),
                   XACC_CACHE_DIR=os.path.join(cache, "xacc"),
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        cmd = [sys.executable, __file__, "--one", model, "--mode", mode, "--threads", str(a.threads),
               "--rounds", str(a.rounds), "--target-ms", str(a.target_ms)] + (["--no-train"] if a.no_train else [])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            row.update(status="timeout", error=f"no result within {a.timeout} s")
            return row
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        row.update(status="crash", error=f"exit {p.returncode}: {p.stderr.strip()[-400:]}")
        return row
    row.update(json.loads(lines[-1][len("RESULT "):]))
    if row.get("status") == "error" and a.verbose:
        print(p.stderr[-2000:], file=sys.stderr)
    return row


def _fmt(v, spec: str = "") -> str:
    if v is None or v == "":
        return "-"
    if isinstance(v, bool):
        return "ok" if v else "FAIL"
    return format(v, spec)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", help="comma-separated names from zoo.py (default: all)")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--skip-inductor", action="store_true", help="no inductor runs (Dynamo's explain still runs)")
    ap.add_argument("--no-train", action="store_true", help="inference only")
    ap.add_argument("--csv", help="write one row per (model, mode) here")
    ap.add_argument("--jobs", type=int, default=1, help="children at a time")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per child")
    ap.add_argument("--threads", type=int, default=1, help="torch threads in every child")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--target-ms", type=float, default=20.0)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        child_main(a)
        return
    from zoo import MODELS
    models = a.models.split(",") if a.models else list(MODELS)
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        raise SystemExit(f"unknown models: {', '.join(unknown)} (known: {', '.join(MODELS)})")
    modes = [m for m in a.modes.split(",") if not (a.skip_inductor and m == "inductor")]
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise SystemExit(f"unknown modes: {', '.join(bad)} (known: {', '.join(MODES)})")
    t_start = time.perf_counter()
    jobs = [(m, md) for m in models for md in modes]
    rows = []
    with ThreadPoolExecutor(max(1, a.jobs)) as pool:
        # Each row is reported as it comes (a long run that is cut short
        # still leaves its rows, in --csv's .partial.jsonl too).
        partial = open(a.csv + ".partial.jsonl", "w") if a.csv else None
        for r in pool.map(lambda j: run_child(j[0], j[1], a), jobs):
            rows.append(r)
            print(f"[{len(rows)}/{len(jobs)} {time.perf_counter() - t_start:.0f}s] {r['model']} {r['mode']}: "
                  f"{r.get('status')} correct={r.get('correct')} graphs={r.get('graphs')} breaks={r.get('breaks')} "
                  f"recompiles={r.get('recompiles')} train_ok={r.get('train_ok')}", flush=True)
            if partial:
                partial.write(json.dumps(r, default=float) + "\n")
                partial.flush()
        if partial:
            partial.close()
    by = {(r["model"], r["mode"]): r for r in rows}
    _table(models, modes, by, a)
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                r = dict(r)
                if isinstance(r.get("break_reasons"), list):
                    r["break_reasons"] = " | ".join(r["break_reasons"])
                w.writerow(r)
        print(f"wrote {a.csv}")
    _criteria(models, modes, by, a)
    print(f"corpus wall time {time.perf_counter() - t_start:.0f} s ({len(jobs)} children, --jobs {a.jobs})")


def _table(models, modes, by, a) -> None:
    cols = [m for m in modes if m != "dynamo"]
    head = f"{'model':>17} {'kind':>11} {'dyn g/b':>7}"
    for m in cols:
        head += f" | {m:>9} ok  g/b  rc  comp_s     ms   x" + ("  train" if not a.no_train else "")
    print(head)
    for model in models:
        d = by.get((model, "dynamo"), {})
        line = f"{model:>17} {by[(model, cols[0] if cols else 'dynamo')]['kind']:>11} "
        line += f"{_fmt(d.get('graphs'))}/{_fmt(d.get('breaks'))}".rjust(7) if d.get("status") == "ok" else \
            f"{d.get('status', '-'):>7}"
        for m in cols:
            r = by[(model, m)]
            if r.get("status") != "ok":
                line += f" | {r.get('status', '?'):>9} {(r.get('error') or '')[:40]}"
                continue
            gb = f"{r.get('graphs')}/{_fmt(r.get('breaks'))}"
            line += (f" | {'':>9} {_fmt(r.get('correct')):>4} {gb:>5} {_fmt(r.get('recompiles')):>3} "
                     f"{r.get('compile_s', 0):>6.2f} {r.get('ms', 0):>6.2f} {r.get('speedup', 0):>4.2f}")
            if not a.no_train:
                line += f" {_fmt(r.get('train_ok')):>6}"
        print(line)
    errs = [r for r in by.values() if r.get("status") not in (None, "ok")]
    for r in errs:
        print(f"  {r['model']} / {r['mode']}: {r['status']}: {r.get('error')}")


def _criteria(models, modes, by, a) -> None:
    n = len(models)
    print()
    xmodes = [m for m in ("xacc_cpu", "xacc_xpu0") if m in modes]
    if not xmodes:
        print("criteria not judged (no xacc mode ran)")
        return
    reasons = Counter()
    for model in models:
        for m in xmodes:
            for r in by[(model, m)].get("break_reasons") or []:
                reasons[f"[{m}] {r}"] += 1
    if reasons:
        print("xacc break reasons by count (first call, batch 2):")
        for r, c in reasons.most_common():
            print(f"  {c:>3}  {r}")

    def ok_all(model, key):
        return all(by[(model, m)].get("status") == "ok" and by[(model, m)].get(key) for m in xmodes)

    correct = sum(ok_all(m, "correct") for m in models)
    zero = sum(all(by[(m, x)].get("status") == "ok" and by[(m, x)].get("breaks") == 0 for x in xmodes)
               for m in models)
    rec_ok = sum(all(by[(m, x)].get("status") == "ok" and (by[(m, x)].get("recompiles") or 0) <= 1
                     for x in xmodes) for m in models)
    label = "+".join(xmodes)
    print(f"criterion 2: at most one recompile over batch sizes {BATCHES} ({label}): {rec_ok}/{n} models: "
          f"{'PASS' if rec_ok == n else 'FAIL'}")
    if not a.no_train:
        tr = sum(ok_all(m, "train_ok") for m in models)
        print(f"criterion 3: training parameters allclose to eager after {TRAIN_STEPS} steps ({label}): "
              f"{tr}/{n} models: {'PASS' if tr >= 10 else 'FAIL'} (needs >= 10)")
    else:
        print("criterion 3: not judged (--no-train)")
    print(f"criterion 4a: correct under xacc ({label}): {correct}/{n} = {100 * correct / n:.1f}%: "
          f"{'PASS' if correct >= 0.95 * n else 'FAIL'} (needs >= 95%)")
    print(f"criterion 4b: zero graph breaks ({label}): {zero}/{n} = {100 * zero / n:.1f}%: "
          f"{'PASS' if zero >= 0.90 * n else 'FAIL'} (needs >= 90%)")
    if "dynamo" in modes:
        worse = []
        for m in models:
            d = by[(m, "dynamo")]
            for x in xmodes:
                r = by[(m, x)]
                if d.get("status") != "ok" or r.get("status") != "ok" or r.get("breaks", 0) > d["breaks"]:
                    worse.append(f"{m}[{x}]: xacc {r.get('breaks')} vs dynamo {d.get('breaks')}")
        print(f"criterion 4c: no model with more xacc breaks than torch.compile: "
              f"{'PASS' if not worse else 'FAIL'} ({len(worse)} worse: {'; '.join(worse[:10])})")
    else:
        print("criterion 4c: not judged (dynamo mode not run)")


if __name__ == "__main__":
    main()
