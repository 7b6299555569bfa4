"""An FSDP2 (`fully_shard`) training script written for CUDA and NCCL: 3 steps
of SGD on a small MLP whose layers are sharded over the ranks. Launched by
torchrun (RANK in the environment) or torch.multiprocessing.spawn (2 processes).
argv: <out> [jit]: with "jit", the model's forward runs under xacc.jit. Every
rank saves the full (gathered) parameters to <out>.rank<r>. The CPU/gloo twin is
fsdp_cpu.py."""

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
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = Net().cuda()
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
        x = torch.randn(8, 16, generator=g).cuda()
        y = torch.randn(8, 4, generator=g).cuda()
        train_step(run, opt, x, y)
    full = {k: v.full_tensor().cpu() for k, v in model.state_dict().items()}
    torch.save(full, f"{out}.rank{rank}")
    # FSDP2 holds the group past destroy_process_group (plain PyTorch; Note [Gloo group at exit])
    teardown.finish(group_at_exit="FSDP2 keeps the group")


if __name__ == "__main__":
    jit = sys.argv[2:] == ["jit"]
    if "RANK" in os.environ:  # torchrun
        worker(int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"]), sys.argv[1], jit)
    else:
        mp.spawn(worker, args=(2, sys.argv[1], jit), nprocs=2)
