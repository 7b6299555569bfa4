"""Dims of results that Note [Size expressions] (symexpr.py) must know so that
a size read from them is one dynamic size, not an unknown one with the same
(real, shadow) pair, which makes the frame compile static and recompile per
batch size (the recorder cannot tell which of two such sizes an ATen int
argument came from): the elements of a list result (`split`, `unbind`, as
GPT-2's attention splits q, k, v) and `arange(n)` (n elements). Values are
compared with eager at every size. The arange case fails on the previous main
(a recompile per size); the split and unbind cases pass there too (they guard
the rule; the ambiguity needs GPT-2's context: GPT2LMHeadModel went from 2 to
1 recompile over batch 2, 3, 4 with the list rule)."""

import torch

from harness import check


def split_then_view(x):
    q, k = x.split(4, dim=1)
    b = x.shape[0]
    return q.view(q.shape[0], 2, 2) + k.view(b, 2, 2)


def test_split_elements_keep_the_dynamic_dim():
    check(split_then_view, lambda i: (torch.randn(i + 2, 8),), calls=4, max_recompiles=1)


def unbind_then_view(x):
    a, c = x.unbind(1)
    return a.view(a.shape[0], 1) * c.view(x.shape[0], 1)


def test_unbind_elements_keep_the_dynamic_dim():
    check(unbind_then_view, lambda i: (torch.randn(i + 2, 2),), calls=4, max_recompiles=1)


def arange_then_view(x):
    i = torch.arange(x.shape[0])
    return x + i.view(i.shape[0], 1) + x.new_ones(x.shape[0], 1)


def test_arange_has_n_elements():
    check(arange_then_view, lambda i: (torch.randn(i + 2, 3),), calls=4, max_recompiles=1)


def cat_and_unsqueeze_then_read(x):
    # Rotary-embedding code: cat((freqs, freqs), -1) and position_ids.unsqueeze(0),
    # their sizes read back (the same at every batch size, but only an exact
    # rule knows it: a cat dim is the sum of the operands', an unsqueezed dim is 1).
    emb = torch.cat((x, x * 2), dim=-1)
    pos = torch.arange(x.shape[1]).unsqueeze(0)
    half = emb[..., : emb.shape[-1] // 2]
    return half * pos.shape[0] + x.new_ones(emb.shape[-1]).sum(), pos.expand(pos.shape[0], -1)


def test_cat_and_unsqueeze_dims_have_expressions():
    check(cat_and_unsqueeze_then_read, lambda i: (torch.randn(i + 2, 8),), calls=4, max_recompiles=1)


def topk_indices_then_read(x):
    # MoE routing: top_k_index.size(-1) is k (topk's second result has the first's dims).
    vals, idx = torch.topk(x, 2, dim=-1)
    s, order = torch.sort(x, dim=-1)
    return x.new_zeros(idx.size(-1), order.shape[-1]) + vals.sum() + s[:, :1].sum()


def test_topk_and_sort_results_have_expressions():
    check(topk_indices_then_read, lambda i: (torch.randn(i + 2, 8),), calls=4, max_recompiles=1)


def repeat_and_stack_then_view(x, q):
    # DETR-style decoders: queries.unsqueeze(0).repeat(batch, 1, 1), then its
    # shape[:-1] in a view; the batch dim is the operand's 1 times the repeat.
    b = x.shape[0]
    qs = q.unsqueeze(0).repeat(b, 1, 1)
    h = torch.zeros_like(qs)  # no operand with the batch dim: only the repeat rule knows it
    st = torch.stack((qs, qs * 2), dim=-1)
    return (h + qs).view((*h.shape[:-1], -1, 2)).transpose(1, 2) + x.sum(), st.view(*st.shape[:-2], -1).sum(-1)


def test_repeat_and_stack_dims_have_expressions():
    check(repeat_and_stack_then_view, lambda i: (torch.randn(i + 2, 8), torch.randn(5, 8)), calls=4,
          max_recompiles=1)
