"""Training steps of the model corpus (zoo.py) through xacc's compiled backward
(issue #8, criterion 3; xacc/_src/capture/training.py).

    PYTHONPATH=. python benchmarks/models/training.py [--models bert,vit,...] [--device cpu|xpu0]
        [--opt sgd|adam] [--jobs N] [--timeout S] [--csv PATH]

Per model, in a child process: the training step of corpus.py (forward; loss =
mean of squares of the float outputs; loss.backward(); optimizer step;
zero_grad) compiled with xacc.jit and run 5 times on batch 2 next to 5 eager
steps from the same start (models in eval mode, as in corpus.py). Reported:
train_ok (every parameter allclose, rtol 1e-3 / atol 1e-5), the largest
difference, and from xacc.jit.counters() whether the gradients came from the
compiled backward: training graphs compiled, compiled backward runs, graphs
that fell back to replay with eager autograd (with the reason). A model
counts for the criterion when train_ok holds, the compiled backward ran on
every step and no graph fell back.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

STEPS = 5
RTOL, ATOL = 1e-3, 1e-5


def child(name: str, device: str, opt_name: str) -> dict:
    import torch
    from corpus import BATCHES, train_step
    from zoo import build

    import xacc
    from xacc._src.capture import training
    from xacc.jit import counters

    a, k = build(name)[1](BATCHES[0])
    ref_model, _ = build(name)
    model, _ = build(name)

    def opt(m):
        if opt_name == "adam":
            return torch.optim.Adam(m.parameters(), lr=1e-3)
        return torch.optim.SGD(m.parameters(), lr=0.05)

    ref_opt, xopt = opt(ref_model), opt(model)
    step = xacc.jit(train_step, device=device)
    for _ in range(STEPS):
        train_step(ref_model, ref_opt, a, k)
        step(model, xopt, a, k)
    ok, worst = True, 0.0
    for (_, p1), (_, p2) in zip(ref_model.named_parameters(), model.named_parameters()):
        d = float((p1.detach() - p2.detach()).abs().max()) if p1.numel() else 0.0
        worst = max(worst, d)
        ok &= bool(torch.allclose(p1.detach(), p2.detach(), rtol=RTOL, atol=ATOL))
    c = counters()
    return {"train_ok": ok, "max_diff": worst, "training_graphs": c["training_graphs"],
            "backward_runs": c["compiled_backward_runs"], "fallbacks": c["training_fallbacks"],
            "fallback_reasons": [f"{f}: {why}" for f, why in training.FALLBACKS][:5],
            "graphs": c["graphs"], "breaks": c["breaks"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--opt", default="sgd", choices=["sgd", "adam"])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--csv", default="")
    ap.add_argument("--one", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        try:
            res = child(a.one, a.device, a.opt)
            res["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - reported per model
            res = {"status": "error", "error": f"{type(e).__name__}: {e}"[:400]}
        print("RESULT " + json.dumps(res))
        return
    from zoo import MODELS
    names = [n for n in a.models.split(",") if n] or list(MODELS)

    def run(name: str) -> tuple[str, dict]:
        cmd = [sys.executable, __file__, "--one", name, "--device", a.device, "--opt", a.opt]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, cwd=ROOT)
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
            if lines:
                return name, json.loads(lines[-1][7:])
            return name, {"status": "error", "error": (p.stderr.strip().splitlines() or ["no result"])[-1][:400]}
        except subprocess.TimeoutExpired:
            return name, {"status": "error", "error": f"timeout after {a.timeout:.0f}s"}

    with ThreadPoolExecutor(a.jobs) as ex:
        results = dict(ex.map(run, names))
    good = []
    print(f"{'model':22s} {'ok':>5s} {'max_diff':>9s} {'tg':>3s} {'bwd':>4s} {'fb':>3s} {'g/b':>6s}  notes")
    for n in names:
        r = results[n]
        if r["status"] != "ok":
            print(f"{n:22s} error: {r['error']}")
            continue
        through = r["train_ok"] and r["fallbacks"] == 0 and r["backward_runs"] >= STEPS
        if through:
            good.append(n)
        note = "; ".join(r["fallback_reasons"])
        print(f"{n:22s} {str(r['train_ok']):>5s} {r['max_diff']:9.2e} {r['training_graphs']:3d} {r['backward_runs']:4d} "
              f"{r['fallbacks']:3d} {r['graphs']:3d}/{r['breaks']:<3d} {note[:300]}")
    print(f"\nmatch eager after {STEPS} {a.opt} steps through the compiled backward ({a.device}): "
          f"{len(good)}/{len(names)}: {', '.join(good)}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["model", "status", "train_ok", "max_diff", "training_graphs", "backward_runs", "fallbacks",
                        "graphs", "breaks", "notes"])
            for n in names:
                r = results[n]
                w.writerow([n, r["status"], r.get("train_ok"), r.get("max_diff"), r.get("training_graphs"),
                            r.get("backward_runs"), r.get("fallbacks"), r.get("graphs"), r.get("breaks"),
                            "; ".join(r.get("fallback_reasons", [])) or r.get("error", "")])


if __name__ == "__main__":
    main()
