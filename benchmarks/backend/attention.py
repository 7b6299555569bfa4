"""CPU time of scaled_dot_product_attention per call: eager, xacc.jit on cpu and
xpu0, and torch.compile, in one run, one thread (Note [Attention as one node]
in xacc/_src/capture/sdpa.py). `--decomposed` adds xpu0 with the call traced
through its math decomposition (what capture recorded before the flash node).

    PYTHONPATH=. python benchmarks/backend/attention.py [--decomposed] [--no-compile] [--quick]
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

import xacc
from xacc._src.capture import sdpa
from xacc.jit import reset

SHAPES = [(2, 4, 8, 8), (2, 4, 16, 16), (2, 2, 7, 16), (1, 12, 32, 64), (2, 12, 32, 64), (1, 12, 128, 64),
          (1, 12, 512, 64)]


def causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def masked(q, k, v, m):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=m)


def best_us(fn, args: tuple, n: int) -> float:
    for _ in range(20):
        fn(*args)
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(n):
            fn(*args)
        best = min(best, (time.process_time() - t0) / n * 1e6)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decomposed", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--quick", action="store_true", help="the first shape only")
    a = ap.parse_args()
    torch.set_num_threads(1)
    print("shape (B, H, L, E), mask: CPU us per call (best of 5)")
    for b, h, l, e in SHAPES[:1] if a.quick else SHAPES:
        for with_mask in (False, True):
            q, k, v = (torch.randn(b, h, l, e) for _ in range(3))
            fn, args = (masked, (q, k, v, torch.rand(b, 1, l, l) > 0.2)) if with_mask else (causal, (q, k, v))
            n = max(20, int(3e5 / (b * h * l * l * e / 64 + 100)))
            row = {}
            with torch.no_grad():
                row["eager"] = best_us(fn, args, n)
                for dev in ("cpu", "xpu0"):
                    reset()
                    row[f"xacc {dev}"] = best_us(xacc.jit(fn, device=dev), args, n)
                if a.decomposed:
                    keep, sdpa.flash_call = sdpa.flash_call, lambda *_: None
                    try:
                        reset()
                        row["xpu0 decomposed"] = best_us(xacc.jit(fn, device="xpu0"), args, n)
                    finally:
                        sdpa.flash_call = keep
                        reset()
                if not a.no_compile:
                    torch._dynamo.reset()
                    row["torch.compile"] = best_us(torch.compile(fn), args, n)
            cells = ", ".join(f"{k} {v:.1f}" for k, v in row.items())
            print(f"{(b, h, l, e)} {'bool mask' if with_mask else 'causal'}: {cells}", flush=True)


if __name__ == "__main__":
    main()
