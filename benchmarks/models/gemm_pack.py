"""addmm vs MKL's packed GEMM on a weight packed once (Note [Packed GEMM weights]
in csrc/lib/backend/mlir/Executable.cpp): the table behind the xpu backend's
decision (with XACC_PACK_WEIGHTS=1, pack weights of >= 2^20 elements multiplied by
2 to 128 rows; off by default since no shape class gained with torch 2.13).

    PYTHONPATH=. python benchmarks/models/gemm_pack.py [--threads 1,2] [--rounds 5]

For each thread count, rows M and weight [K, N] (the MLP's, the encoder's,
GPT-2 small's and its LM head's), `torch.addmm(b, x, W)` and
`mkl::_mkl_linear(x, packed(W^T), W^T, b, M)` are timed round-robin (best of
--rounds rounds of n calls each); ratio < 1: the packed GEMM is faster. The
last column is what the backend does for that shape.
"""
from __future__ import annotations

import argparse
import time

import torch

SHAPES = [(128, 384), (256, 512), (768, 768), (768, 2304), (768, 3072), (3072, 768), (768, 50257)]
ROWS = [8, 32, 128, 512]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    for th in [int(t) for t in a.threads.split(",")]:
        torch.set_num_threads(th)
        print(f"threads {th}")
        print("   M      K      N   addmm ms  packed ms  ratio  backend")
        for m in ROWS:
            for k, n in SHAPES:
                x, w, b = torch.randn(m, k), torch.randn(k, n), torch.randn(n)
                packed = torch.ops.mkl._mkl_reorder_linear_weight(w.t().contiguous(), m)
                calls = max(3, int(2e7 / (m * k * n + 1e5)))
                fns = {"addmm": lambda: torch.addmm(b, x, w),
                       "packed": lambda: torch.ops.mkl._mkl_linear(x, packed, w.t(), b, m)}
                best = {name: float("inf") for name in fns}
                for _ in range(a.rounds):
                    for name, fn in fns.items():
                        t0 = time.perf_counter()
                        for _ in range(calls):
                            fn()
                        best[name] = min(best[name], (time.perf_counter() - t0) / calls * 1e3)
                choice = "packed if =1" if k * n >= 1 << 20 and 2 <= m <= 128 else "addmm"
                print(f"{m:4d} {k:6d} {n:6d} {best['addmm']:10.3f} {best['packed']:10.3f} "
                      f"{best['packed'] / best['addmm']:6.2f}  {choice}", flush=True)


if __name__ == "__main__":
    main()
