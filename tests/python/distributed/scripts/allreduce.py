"""Collectives inside captured code (issue 25, criterion 3): on 2 ranks over gloo
(torch.multiprocessing.spawn), functions that call `dist.all_reduce` on an
activation (in place, as tensor-parallel layers do) and the functional
`_functional_collectives.all_reduce` run eagerly and under
`xacc.jit(fullgraph=True)` (a graph break raises), and an `async_op=True` call
that must break cleanly; every rank prints, per function, the largest difference
from eager, the number of graphs and the break codes as one line `rank R: ...`."""

import os
import sys

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp

import teardown  # before init_process_group (Note [Gloo group at exit])

import xacc
from xacc.jit import counters, reset


def row_parallel(x, w):
    h = x @ w
    dist.all_reduce(h)  # partial sums of a row-parallel linear layer
    return torch.relu(h) * 2


def functional(x, w, group):
    h = funcol.all_reduce(x @ w, "sum", group)  # group: the group's registered name
    return torch.tanh(h) + 1


def async_wait(x, w):
    h = x @ w
    work = dist.all_reduce(h, async_op=True)  # a Work object: not held by a graph (GB026)
    work.wait()
    return h * 2


def break_codes():
    from xacc._src.capture import convert
    return sorted({b.code for ev in convert.EVENTS for b in ev.breaks})


def worker(rank, world, device):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(rank)
    x, w = torch.randn(4, 8), torch.randn(8, 6)
    for fn, fullgraph in ((row_parallel, True), (functional, True), (async_wait, False)):
        reset()
        args = (x, w, dist.group.WORLD.group_name) if fn is functional else (x, w)
        eager = fn(*args)
        eager = eager.wait() if hasattr(eager, "wait") else eager  # an AsyncCollectiveTensor
        compiled = xacc.jit(fn, device=device, fullgraph=fullgraph)
        got = [compiled(*args) for _ in range(2)]
        c = counters()
        diff = max((g - eager).abs().max().item() for g in got)
        codes = ",".join(break_codes()) if not fullgraph else "-"
        # one write per line: the two ranks share the parent's stdout
        sys.stdout.write(f"rank {rank}: {fn.__name__} diff {diff:.3g} graphs {c['graphs']} breaks {codes}\n")
        sys.stdout.flush()
    teardown.finish()  # the group and its threads end here, not at exit (Note [Gloo group at exit])


if __name__ == "__main__":
    mp.spawn(worker, args=(2, sys.argv[1] if len(sys.argv) > 1 else "cpu"), nprocs=2)
