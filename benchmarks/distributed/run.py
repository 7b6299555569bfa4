"""Step time of DDP training on 2 processes over gloo (issue 25): plain DDP,
`xacc.jit` on the DDP module, and `torch.compile` on the DDP module (Dynamo's
DDPOptimizer), on the same MLP, in the same run, one after the other.

Each mode spawns 2 ranks (torch.multiprocessing.spawn, loopback, a free port);
every rank runs --warmup steps (capture and compilation happen there), then
--steps timed steps, each step ending in a barrier; rank 0 reports the median
wall time and the median CPU time of its process (all threads: gloo's too),
which a loaded machine changes much less than the wall time.
Parameters after the run are compared with plain DDP's (max abs difference).
Criterion 4 of issue 25: xacc.jit + DDP's step time at most torch.compile +
DDP's. Times on a shared machine are noisy: say "under load" when quoting them.

    PYTHONPATH=. python benchmarks/distributed/run.py [--steps N] [--warmup N]
                [--width W] [--modes plain,xacc,compile]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.distributed.nn  # noqa: F401  before init_process_group (see worker's end)
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model(width: int) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                               torch.nn.Linear(4 * width, 4 * width), torch.nn.GELU(),
                               torch.nn.Linear(4 * width, width))


def worker(rank: int, world: int, mode: str, args: argparse.Namespace, out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    ddp = DDP(make_model(args.width))
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    if mode == "xacc":
        import xacc
        run = xacc.jit(ddp)
    elif mode == "compile":
        run = torch.compile(ddp)
    else:
        run = ddp
    g = torch.Generator().manual_seed(1 + rank)
    data = [(torch.randn(args.batch, args.width, generator=g), torch.randn(args.batch, args.width, generator=g))
            for _ in range(4)]
    times, cpu = [], []
    for i in range(args.warmup + args.steps):
        x, y = data[i % len(data)]
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(run(x), y)
        loss.backward()
        opt.step()
        dist.barrier()
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    if rank == 0:
        torch.save({"median": statistics.median(times), "cpu": statistics.median(cpu),
                    "params": ddp.module.state_dict()}, out)
    # Every rank is done before rank 0, which hosts the store, can exit first; the
    # group ends here, not at the interpreter's exit, because torch.distributed.nn
    # (which DDP's and torch.compile's imports reach) was imported before
    # init_process_group (Note [Gloo group at exit], tests/python/distributed/scripts/teardown.py).
    dist.barrier()
    dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--modes", default="plain,xacc,compile")
    args = p.parse_args()
    modes = args.modes.split(",")
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            os.environ["MASTER_PORT"] = str(free_port())
            out = os.path.join(tmp, mode)
            t0 = time.perf_counter()
            mp.spawn(worker, args=(2, mode, args, out), nprocs=2)
            results[mode] = torch.load(out)
            print(f"{mode:8s} step {results[mode]['median'] * 1e3:8.2f} ms, cpu {results[mode]['cpu'] * 1e3:6.2f} ms "
                  f"(medians of {args.steps}; whole run {time.perf_counter() - t0:.1f} s)", flush=True)
    base = results.get("plain")
    for mode, r in results.items():
        if base is not None and mode != "plain":
            diff = max((r["params"][k] - base["params"][k]).abs().max().item() for k in base["params"])
            print(f"{mode:8s} vs plain: {r['median'] / base['median']:.2f}x step time, params max diff {diff:.2g}")
    if "xacc" in results and "compile" in results:
        ok = results["xacc"]["median"] <= results["compile"]["median"]
        print(f"xacc.jit + DDP {'<=' if ok else '>'} torch.compile + DDP "
              f"({results['xacc']['median'] * 1e3:.2f} vs {results['compile']['median'] * 1e3:.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
