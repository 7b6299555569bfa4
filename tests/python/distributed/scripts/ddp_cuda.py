"""A DDP training script written for CUDA and NCCL (one GPU per rank): 3 steps of
SGD on a small MLP, then 2 steps of gradient accumulation under no_sync.
Launched by torchrun (RANK in the environment) or by torch.multiprocessing.spawn
(2 processes). Every rank saves its parameters to <out>.rank<r>. The CPU/gloo
twin is ddp_cpu.py; under `python -m xjit --device cpu` this file must end with
the same parameters."""

import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

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


def accumulate_step(ddp, opt, batches):
    """Gradient accumulation: no all-reduce for the first micro-batches (no_sync)."""
    opt.zero_grad()
    with ddp.no_sync():
        for x, y in batches[:-1]:
            torch.nn.functional.mse_loss(ddp(x), y).backward()
    x, y = batches[-1]
    torch.nn.functional.mse_loss(ddp(x), y).backward()
    opt.step()


def worker(rank, world, out):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = Net().cuda(rank)
    ddp = DDP(model, device_ids=[rank], output_device=rank)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1 + rank)
    for _ in range(3):
        x = torch.randn(8, 16, generator=g).cuda(rank)
        y = torch.randn(8, 4, generator=g).to(f"cuda:{rank}")
        train_step(ddp, opt, x, y)
    for _ in range(2):
        batches = [(torch.randn(8, 16, generator=g).cuda(rank), torch.randn(8, 4, generator=g).cuda(rank))
                   for _ in range(2)]
        accumulate_step(ddp, opt, batches)
    torch.cuda.synchronize()
    torch.save({k: v.cpu() for k, v in model.state_dict().items()}, f"{out}.rank{rank}")
    teardown.finish()  # the group and its threads end here, not at exit (Note [Gloo group at exit])


if __name__ == "__main__":
    if "RANK" in os.environ:  # torchrun
        worker(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]), sys.argv[1])
    else:
        mp.spawn(worker, args=(2, sys.argv[1]), nprocs=2)
