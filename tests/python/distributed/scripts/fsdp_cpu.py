"""The CPU/gloo twin of fsdp_cuda.py (the reference run): 3 steps of SGD on an
FSDP2-sharded MLP over 2 ranks. argv: <out> [jit] (jit: the forward runs under
xacc.jit). Every rank saves the full parameters to <out>.rank<r>; under jit,
also `xacc.jit.counters()` to <out>.rank<r>.xacc, as JSON."""

import json
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed.fsdp import fully_shard

import teardown  # before init_process_group (Note [Gloo group at exit])


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def train_step(model, opt, x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


def worker(rank, world, out, jit):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = Net()
    fully_shard(model.fc1)
    fully_shard(model.fc2)
    fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    run = model
    if jit:
        import xacc
        run = xacc.jit(model)
    g = torch.Generator().manual_seed(1 + rank)
    for _ in range(3):
        x = torch.randn(8, 16, generator=g)
        y = torch.randn(8, 4, generator=g)
        train_step(run, opt, x, y)
    full = {k: v.full_tensor().cpu() for k, v in model.state_dict().items()}
    torch.save(full, f"{out}.rank{rank}")
    if jit:
        from xacc.jit import counters
        with open(f"{out}.rank{rank}.xacc", "w") as f:
            json.dump(counters(), f)
    # FSDP2 holds the group past destroy_process_group (plain PyTorch; Note [Gloo group at exit])
    teardown.finish(group_at_exit="FSDP2 keeps the group")


if __name__ == "__main__":
    jit = sys.argv[2:] == ["jit"]
    if "RANK" in os.environ:  # torchrun
        worker(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]), sys.argv[1], jit)
    else:
        mp.spawn(worker, args=(2, sys.argv[1], jit), nprocs=2)
