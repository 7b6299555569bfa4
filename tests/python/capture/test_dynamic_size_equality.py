"""Comparing two sizes computed from the same dynamic dims (Note [Size
relations] in TranslateScalars.cpp): `attn.size() != (bsz * heads, tgt, src)`
as transformers' attention layers check their shapes. The size read from a
tensor the graph made (`attn.size(0)`) and the number the code computed
(`bsz * heads`) have the same value in the real and the shadow run, so they
are the same symbolic size: the comparison is decided without specializing,
and one recompile covers every batch size. Before, no guard could name either
side, the frame fell back to static shapes (GB022) and recompiled for every
batch size."""

from __future__ import annotations

import torch

from harness import check, compare_call
from xacc._src.capture import convert
from xacc.jit import counters, jit

HEADS = 4
W = torch.randn(8, 8)


def attention_shape_check(x):
    bsz, tgt, _ = x.size()
    q = (x @ W).view(bsz, tgt, HEADS, 2).transpose(1, 2).reshape(bsz * HEADS, tgt, 2)
    attn = torch.bmm(q, q.transpose(1, 2))
    if attn.size() != (bsz * HEADS, tgt, tgt):
        raise ValueError(f"attention weights should be {(bsz * HEADS, tgt, tgt)}, not {attn.size()}")
    return attn.softmax(-1).view(bsz, HEADS, tgt, tgt)


def batches(*sizes):
    return lambda i: (torch.randn(sizes[i], 5, 8),)


def test_computed_sizes_compared_equal_stay_symbolic():
    c = check(attention_shape_check, batches(2, 3, 4, 6), calls=4, max_recompiles=1)
    assert c["breaks"] == 0, c
    last = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert "=s0" in " ".join(last.dynamic), last.dynamic
    assert not any("not used" in d for e in convert.EVENTS for d in e.dynamic), [e.dynamic for e in convert.EVENTS]


def unequal_sizes(x):
    bsz = x.size(0)
    y = x.reshape(bsz * 2, -1)
    if y.size(0) == bsz + 2:  # true for bsz == 2 only: must not be taken as an identity
        return y * 2
    return y - 1


def test_computed_sizes_equal_at_one_size_only_specialize():
    jf = jit(unequal_sizes)
    for b in (2, 3, 2, 4):
        compare_call(unequal_sizes, jf, (torch.randn(b, 6),))
    assert counters()["internal_errors"] == 0, counters()
