"""DDP with small gradient buckets (bucket_cap_mb=0.05, about 52 KB) on a 4-layer
MLP, 2 ranks over gloo (torch.multiprocessing.spawn): 3 steps of SGD, then 2
steps of gradient accumulation under no_sync. `plain` runs DDP as it is; `xacc`
runs xacc.jit on the DDP module. A comm hook (the default all-reduce) notes, for
each bucket it reduces, whether the first layer's weight already has its
gradient: in eager autograd the buckets of the later layers are reduced before
it does (the all-reduce overlaps the rest of the backward). Every rank saves
its parameters, those notes, xacc's counters and what its cache entries report to
<out>.rank<r>.

    python ddp_split.py plain|xacc OUT"""

import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
from torch.nn.parallel import DistributedDataParallel as DDP

import teardown  # before init_process_group (Note [Gloo group at exit])


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                               torch.nn.ReLU(), torch.nn.Linear(128, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 16))


def worker(rank, world, mode, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = make_model()
    ddp = DDP(model, bucket_cap_mb=0.05)
    notes = []  # per reduced bucket: (step, the first layer's weight had no gradient yet)
    step = [0]

    def hook(state, bucket):
        notes.append((step[0], model[0].weight.grad is None))
        return allreduce_hook(None, bucket)

    ddp.register_comm_hook(None, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    run = ddp
    if mode == "xacc":
        import xacc
        run = xacc.jit(ddp)
    g = torch.Generator().manual_seed(1 + rank)
    for i in range(3):
        step[0] = i
        x, y = torch.randn(8, 64, generator=g), torch.randn(8, 16, generator=g)
        opt.zero_grad()
        torch.nn.functional.mse_loss(run(x), y).backward()
        opt.step()
    for i in range(3, 5):
        step[0] = i
        batches = [(torch.randn(8, 64, generator=g), torch.randn(8, 16, generator=g)) for _ in range(2)]
        opt.zero_grad()
        with ddp.no_sync():
            for x, y in batches[:-1]:
                torch.nn.functional.mse_loss(run(x), y).backward()
        x, y = batches[-1]
        torch.nn.functional.mse_loss(run(x), y).backward()
        opt.step()
    counters, entries = {}, []
    if mode == "xacc":
        from xacc._C import capture
        from xacc._src.capture import convert
        from xacc._src.jit import counters as xacc_counters
        counters = xacc_counters()
        # What each captured graph's cache entry reports.
        entries = [{k: capture.entries(ev.code)[ev.entry][k] for k in ("plan", "graph", "device")}
                   for ev in convert.EVENTS if ev.graph_id]
    torch.save({"params": {k: v.detach().clone() for k, v in model.state_dict().items()},
                "notes": notes, "counters": counters, "entries": entries}, f"{out}.rank{rank}")
    teardown.finish()  # the group and its threads end here, not at exit (Note [Gloo group at exit])


if __name__ == "__main__":
    mp.spawn(worker, args=(2, sys.argv[1], sys.argv[2]), nprocs=2)
