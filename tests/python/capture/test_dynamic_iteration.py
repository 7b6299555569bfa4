"""Iterating a tensor under dynamic shapes: how many items there are is a
Python-level fact, so a size change that made dim 0 dynamic must not let a
graph traced for one item count run for another (Translator::unpack: the
count is made concrete, Note [Symbolic sizes]). Before, the items were fixed
to the traced count while the dynamic-dim guard let other batch sizes in:
a wrong sum, or `list index out of range` from the executor."""

from __future__ import annotations

import pytest
import torch

import xacc
from xacc._src.jit import reset


def rows_sum(x):
    out = x[0] * 0
    for r in x:
        out = out + r * 2
    return out


def regulate(enc, dur):
    # transformers' FastSpeech2Conformer length_regulator: a data-dependent
    # repeat_interleave (a break) inside a loop over zip(tensor, tensor).
    max_len = torch.sum(dur, dim=1).max()
    hs = torch.zeros((enc.size(0), max_len, enc.size(2)))
    for i, (e, d) in enumerate(zip(enc, dur)):
        r = torch.repeat_interleave(e, d, dim=0)
        hs[i, : r.size(0)] = r
    return hs


@pytest.mark.parametrize("sizes", [(2, 3, 2), (3, 4, 2, 5)])
def test_iteration_count_follows_the_batch(sizes):
    reset()
    f = xacc.jit(rows_sum)
    for b in sizes:
        x = torch.randn(b, 3)
        torch.testing.assert_close(f(x), rows_sum(x), rtol=0, atol=0)


def test_loop_with_a_break_over_zipped_tensors_after_size_changes():
    reset()
    f = xacc.jit(regulate)
    g = torch.Generator().manual_seed(0)
    for b in (2, 3, 2, 4):
        enc = torch.randn(b, 4, 5, generator=g)
        dur = torch.randint(1, 3, (b, 4), generator=g)
        torch.testing.assert_close(f(enc, dur), regulate(enc, dur), rtol=0, atol=0)
