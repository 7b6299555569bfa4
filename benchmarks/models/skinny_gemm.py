"""Skinny matrix products (Note [Skinny matrix products] in
csrc/lib/backend/aten/SkinnyGemm.cpp): `torch.addmm(b, x, W)` with a few rows
in x, eager ATen against the same call in a graph captured by
`xacc.jit(device="xpu0")` (a prepared direct call of the node), in both
weight layouts: "linear" (x @ w.t(), w [N, K] contiguous: nn.Linear) and
"conv1d" (x @ w, w [K, N] contiguous: GPT-2's Conv1D). Each shape cycles
through enough distinct weights (--working-set MB, default 400) that every
call reads its weight from memory, as a model's forward does; the table gives
the median call time and the weight bytes streamed per second. Set the
working set well above the machine's last-level cache (`lscpu`): a cache
that holds it measures the cache, not memory.

--small: products whose weights stay in cache (depth 32 to 512), twenty in a
chain per call (x @ w1 then @ w2, ten times) so that the graph call's own
cost is spread; the table gives the median chain time, eager and captured.
--kernel: the kernels alone (`xacc._C.skinny_gemm`) against `torch.addmm` on
small in-cache shapes, best of 7 rounds of 2000 calls, both layouts; a shape
the rows rule leaves to ATen shows "-".
These tables are behind the rows rule of the Note (skinnyShape).

    PYTHONPATH=. python benchmarks/models/skinny_gemm.py [--threads 1,2] [--rows 1,2,4,8,16]
                [--working-set MB] [--small | --kernel]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

import xacc
from xacc import _C
from xacc._src.jit import reset

SHAPES = [(768, 2304), (768, 3072), (3072, 768), (768, 50257)]
SMALL = [(32, 64), (64, 256), (128, 512), (256, 1024), (512, 2048)]


def timed(fn, args_list, reps: int) -> float:
    for a in args_list[:2]:
        fn(*a)
    ts = []
    for i in range(reps):
        a = args_list[i % len(args_list)]
        t0 = time.perf_counter()
        fn(*a)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def tables(a, title: str, header: str):
    """Yields each --rows row count under each --threads thread count, after
    printing that thread count's table heading."""
    for th in [int(t) for t in a.threads.split(",")]:
        torch.set_num_threads(th)
        print(f"threads {th}{title}")
        print(header)
        yield from (int(r) for r in a.rows.split(","))


def fresh_jit(fn):
    """xacc.jit(fn, device="xpu0") from an empty cache: every shape gets its own
    entry, never the recompile limit's plain-Python fallback."""
    reset()
    return xacc.jit(fn, device="xpu0")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rows", default="1,2,4,8,16")
    ap.add_argument("--small", action="store_true", help="chains of small products (weights in cache)")
    ap.add_argument("--kernel", action="store_true", help="the kernels alone against torch.addmm")
    ap.add_argument("--working-set", type=float, default=400, metavar="MB",
                    help="distinct weights cycled through per shape, in MB (default 400)")
    a = ap.parse_args()
    if a.small:
        small(a)
        return
    if a.kernel:
        kernel(a)
        return

    def linear(x, w, b):
        return torch.addmm(b, x, w.t())

    def conv1d(x, w, b):
        return torch.addmm(b, x, w)

    for m in tables(a, "", "layout     M     K      N   eager ms  GB/s   xacc ms  GB/s  xacc/eager"):
        for k, n in SHAPES:
            count = max(1, int(a.working_set * 1e6 / (k * n * 4)))
            for name, fn in (("linear", linear), ("conv1d", conv1d)):
                shape = (n, k) if name == "linear" else (k, n)
                args = [(torch.randn(m, k), torch.randn(*shape), torch.randn(n)) for _ in range(count)]
                jf = fresh_jit(fn)
                got, want = jf(*args[0]), fn(*args[0])
                torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-3)
                reps = max(20, 3 * count)
                te = timed(fn, args, reps)
                tx = timed(jf, args, reps)
                gb = k * n * 4 / 1e9
                print(f"{name:7} {m:4} {k:5} {n:6} {te*1e3:9.3f} {gb/te:5.1f} {tx*1e3:9.3f} {gb/tx:5.1f} {tx/te:10.2f}")
                del args


KERNEL_SHAPES = [(16, 64), (32, 2048), (64, 128), (64, 256), (96, 256), (128, 512), (256, 1024)]


def kernel(a) -> None:
    def best(f, n=2000) -> float:
        for _ in range(50):
            f()
        rounds = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            rounds.append((time.perf_counter() - t0) / n)
        return min(rounds)

    header = "    M     K      N   linear: addmm  kernel  ratio   conv1d: addmm  kernel  ratio"
    for m in tables(a, ": one product, y = b + x @ w (us)", header):
        for k, n in KERNEL_SHAPES:
            x, bias = torch.randn(m, k), torch.randn(n)
            cells = []
            for w in (torch.randn(n, k).t(), torch.randn(k, n)):
                ta = best(lambda: torch.addmm(bias, x, w))
                if _C.skinny_gemm(x, w, bias) is None:
                    cells.append(f"{ta * 1e6:14.2f} {'-':>7} {'-':>6}")
                    continue
                tk = best(lambda: _C.skinny_gemm(x, w, bias))
                cells.append(f"{ta * 1e6:14.2f} {tk * 1e6:7.2f} {tk / ta:6.2f}")
            print(f"{m:5} {k:5} {n:6} {cells[0]}  {cells[1]}")


def small(a) -> None:
    def chain_linear(x, w1, b1, w2, b2):
        for _ in range(10):
            x = torch.addmm(b2, torch.addmm(b1, x, w1.t()), w2.t())
        return x

    def chain_conv1d(x, w1, b1, w2, b2):
        for _ in range(10):
            x = torch.addmm(b2, torch.addmm(b1, x, w1), w2)
        return x

    header = "layout     M     K      N   eager us   xacc us  xacc/eager"
    for m in tables(a, ": chains of 20 products, x [M, K] -> [M, N] -> [M, K]", header):
        for k, n in SMALL:
            for name, fn in (("linear", chain_linear), ("conv1d", chain_conv1d)):
                s1, s2 = ((n, k), (k, n)) if name == "linear" else ((k, n), (n, k))
                args = (torch.randn(m, k), torch.randn(*s1) * 0.05, torch.randn(n), torch.randn(*s2) * 0.05,
                        torch.randn(k))
                jf = fresh_jit(fn)
                got, want = jf(*args), fn(*args)
                assert (got - want).abs().max() <= 1e-4 * want.abs().max(), name
                te = timed(fn, [args], 200)
                tx = timed(jf, [args], 200)
                print(f"{name:7} {m:4} {k:5} {n:6} {te*1e6:10.0f} {tx*1e6:9.0f} {tx/te:11.2f}")


if __name__ == "__main__":
    main()
