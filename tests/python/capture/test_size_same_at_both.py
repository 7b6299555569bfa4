"""A size read that has the same value in the run and in its shadow run (other
sizes) but is not a constant: `x[:16].size(0)` is 16 at batch 20 and at the
shadow's batch, 5 at batch 5. It was used as the graph's constant 16 with no
guard (a silently wrong shape from the third call on); the frame now compiles
static there (Host._size_unsure), and a constant dim sliced by constants has
its exact length (symexpr's slice rule: BERT's position_ids[:, :seq] stays one
dynamic graph). Every call is compared with eager."""

import torch

from harness import check


def clamped_slice_size(x):
    return x.new_ones(x[:16].size(0)) * x.shape[0]


def test_clamped_slice_size_follows_the_batch():
    sizes = [3, 20, 5, 30, 7]
    check(clamped_slice_size, lambda i: (torch.randn(sizes[i], 2),), calls=len(sizes), max_recompiles=4)


def constant_slice_of_a_buffer(x, pos):
    p = pos[:, :x.shape[1]]
    return x + p.shape[1] + p


def test_slice_of_a_constant_dim_stays_dynamic():
    pos = torch.arange(32.0).view(1, 32)
    check(constant_slice_of_a_buffer, lambda i: (torch.randn(i + 2, 16), pos), calls=4, max_recompiles=1)
