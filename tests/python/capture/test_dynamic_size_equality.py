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


# The truth of a size (LongT5's `if not all(x.shape)`): `size != 0`, which a
# dynamic dim's `>= 2` guard decides. It used to make the size a plain number
# (GB022): the frame compiled static, a recompile per batch size.

def truth_of_sizes(x):
    if not all(x.shape):
        return x.new_zeros(1)
    return x * 2 if x.size(0) else x + 1


def test_truth_of_a_dynamic_size():
    check(truth_of_sizes, lambda i: (torch.randn(i + 2, 3),), calls=4, max_recompiles=1)


# `0 in shape` (LongT5's `_split_into_blocks`: `if 0 in output_shape`, a tuple of
# sizes and constants): Python's `==` per item, each a size relation. It used to
# need the tuple as a constant (GB011): static shapes, a recompile per batch size.

def zero_in_shape(x):
    shape = x.shape[:1] + (2, x.shape[1] // 2)
    if 0 in shape:
        return torch.empty(shape)
    if 1 in shape or 3 in x.shape[1:]:
        return x.reshape(shape) * 3
    return x.reshape(shape)


def test_membership_in_a_tuple_of_sizes():
    check(zero_in_shape, lambda i: (torch.randn(i + 2, 4),), calls=4, max_recompiles=1)


def five_in_shape(x):
    return x * 2 if 5 in x.shape else x - 1


def test_membership_guarded_where_the_size_decides():
    # True at batch 5 only: the dynamic entry of batch 3 holds a guard `s0 != 5`,
    # so batch 5 compiles again and takes the other path (values checked).
    check(five_in_shape, lambda i: (torch.randn(i + 2, 4),), calls=4, max_recompiles=2)


# A size expression whose sign is fixed at every size the guards admit
# (transformers' DynamicLayer.get_seq_length: `self.keys.numel() == 0` of a
# cache tensor grown by cat): 512 * s0 is never 0 for s0 >= 2. It used to make
# the size a plain number (GB022): static shapes, a recompile per batch size.

def numel_is_zero(x, w):
    keys = torch.cat([x, x @ w], dim=-1)
    if keys.numel() == 0 or keys.numel() < 2 * x.size(-1) or x.size(0) * x.size(1) - 1 <= 0:
        return keys
    n = keys.shape[-1] if keys.numel() > 8 else 0
    return keys.sum(-1) + n


def test_size_sign_fixed_for_every_size():
    w = torch.randn(4, 4)
    check(numel_is_zero, lambda i: (torch.randn(i + 2, 3, 4), w), calls=4, max_recompiles=1)
