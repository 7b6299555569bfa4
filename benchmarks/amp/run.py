"""Automatic mixed precision (issue 9, criterion 3): matmul-heavy models under
eager float32, `xacc.jit` (precision="float32", the default) and
`xacc.jit(precision="auto")`, timed interleaved in one run (each repeat runs
every variant once, in rotating order), median per variant.

Models: an MLP with 4096-wide hidden layers, and a transformer block (layer
norms, attention with softmax, a 4x GELU MLP). Prints per model the median
latencies, the speed-up of auto over eager and over xacc float32, the max
relative error of each variant against eager float32 (max|y - ref| / max|ref|,
the metric precision="auto" checks), the per-region precision report, and one
CRITERION line: auto is faster than xacc float32 on the MLP and within the
tolerance on every model.

Usage: python benchmarks/amp/run.py [--repeat N] [--threads T] [--device cpu|xpu0]
                                    [--tolerance TOL] [--models mlp,block]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402

import xacc  # noqa: E402
from xacc._src.amp import rel_error  # noqa: E402


class MLP(torch.nn.Module):
    def __init__(self, d_in: int = 1024, hidden: int = 4096, d_out: int = 1024) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(d_in, hidden)
        self.fc2 = torch.nn.Linear(hidden, hidden)
        self.fc3 = torch.nn.Linear(hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.nn.functional.gelu(self.fc1(x))
        h = torch.relu(self.fc2(h))
        return self.fc3(h)


class Block(torch.nn.Module):
    """Pre-norm transformer block, attention written out (softmax stays float32)."""

    def __init__(self, d: int = 1024, heads: int = 16) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, 4 * d)
        self.fc2 = torch.nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, t, h, d // h).transpose(1, 2)
        k = k.reshape(b, t, h, d // h).transpose(1, 2)
        v = v.reshape(b, t, h, d // h).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / (d // h) ** 0.5), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


def models(names: list[str]) -> dict:
    out = {}
    if "mlp" in names:
        out["mlp"] = (MLP(), torch.randn(512, 1024))
    if "block" in names:
        out["block"] = (Block(), torch.randn(4, 256, 1024))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--tolerance", type=float, default=1e-2)
    p.add_argument("--models", default="mlp,block")
    ns = p.parse_args()
    torch.set_num_threads(ns.threads)
    torch.manual_seed(0)
    ok_all = True
    mlp_speedup = None
    print(f"threads {ns.threads}, device {ns.device}, tolerance {ns.tolerance:g}, repeat {ns.repeat} "
          "(interleaved; median)")
    with torch.no_grad():
        for name, (model, x) in models(ns.models.split(",")).items():
            model.eval()
            variants = {
                "eager f32": model,
                "xacc f32": xacc.jit(model, device=ns.device),
                "xacc auto": xacc.jit(model, device=ns.device, precision="auto", tolerance=ns.tolerance),
            }
            ref = model(x)
            errors, compile_s = {}, {}
            for v, fn in variants.items():
                t0 = time.perf_counter()
                y = fn(x)  # first call: capture + compile (+ the accuracy check for auto)
                compile_s[v] = time.perf_counter() - t0
                errors[v] = rel_error(ref, y)
                assert y.dtype == ref.dtype
            times: dict[str, list[float]] = {v: [] for v in variants}
            names = list(variants)
            for r in range(ns.repeat):
                for v in names[r % len(names):] + names[:r % len(names)]:
                    t0 = time.perf_counter()
                    variants[v](x)
                    times[v].append(time.perf_counter() - t0)
            med = {v: statistics.median(ts) for v, ts in times.items()}
            print(f"\n== {name}: input {list(x.shape)} ==")
            for v in names:
                print(f"  {v:10s} median {med[v] * 1e3:9.2f} ms  (min {min(times[v]) * 1e3:9.2f})  "
                      f"max rel error vs eager f32 {errors[v]:.3g}  first call {compile_s[v]:.2f} s")
            s_eager = med["eager f32"] / med["xacc auto"]
            s_f32 = med["xacc f32"] / med["xacc auto"]
            print(f"  speed-up of auto: {s_eager:.2f}x over eager f32, {s_f32:.2f}x over xacc f32")
            for rep in xacc.precision_report(variants["xacc auto"]):
                print("  " + str(rep).replace("\n", "\n  "))
            within = errors["xacc auto"] <= ns.tolerance
            ok_all &= within
            if name == "mlp":
                mlp_speedup = s_f32
    faster = mlp_speedup is not None and mlp_speedup > 1.0
    print(f"\nCRITERION precision=auto faster than xacc float32 on the matmul-heavy MLP: "
          f"{'yes' if faster else 'no'} ({mlp_speedup if mlp_speedup is not None else float('nan'):.2f}x); "
          f"outputs within tolerance {ns.tolerance:g} on every model: {'yes' if ok_all else 'no'}")
    return 0 if faster and ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
