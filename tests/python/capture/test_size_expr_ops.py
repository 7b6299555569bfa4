"""Dims of results that Note [Size expressions] (symexpr.py) must know so that
a size read from them is one dynamic size, not an unknown one with the same
(real, shadow) pair, which makes the frame compile static and recompile per
batch size (the recorder cannot tell which of two such sizes an ATen int
argument came from): the elements of a list result (`split`, `unbind`, as
GPT-2's attention splits q, k, v) and `arange(n)` (n elements). Values are
compared with eager at every size. The arange case and GPT-2's attention
shape code (`gpt2_attention_shapes`: the view sizes come from a split element's
`shape[:-1]`) fail without the rules (a recompile per size); the plain split
and unbind cases pass without them too (they guard the rule). Later rules,
each with a case that fails without it: the pieces of `split` and
`split_with_sizes`, reductions' kept and dropped dims, the lengths a conv or a
pool computes from a constant dim, results of ops whose operands all have
constant shapes (Note [Shapes of constant shapes] in host_state.py), and expand's
-1."""

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


def gpt2_attention_shapes(x, w):
    # GPT2Attention's shape code: q, k, v split off one projection, then viewed
    # by their own leading dims and merged back by the output's.
    q, k, v = (x @ w).split(4, dim=2)
    shape_q = (*q.shape[:-1], -1, 2)
    shape_kv = (*k.shape[:-1], -1, 2)
    q = q.view(shape_q).transpose(1, 2)
    k = k.view(shape_kv).transpose(1, 2)
    v = v.view(shape_kv).transpose(1, 2)
    a = ((q @ k.transpose(-1, -2)).softmax(-1) @ v).transpose(1, 2).contiguous()
    return a.reshape(*a.shape[:-2], -1).contiguous()


def test_split_element_shapes_as_view_arguments_stay_dynamic():
    w = torch.randn(8, 12)
    check(gpt2_attention_shapes, lambda i: (torch.randn(i + 2, 5, 8), w), calls=4, max_recompiles=1)


# stack/cat (encodec's residual vector quantizer: `torch.stack(all_indices)`,
# then `len(codes)` and a loop over it): the stacked dim is the number of the
# graph's operands and a cat dim the sum of theirs. Without the rule the read
# `len(codes)` (2 at every batch size, no expression) compiled the frame static:
# a recompile per batch size.

def stack_then_len(x):
    codes = torch.stack([x + 1, x * 2])
    out = x.new_zeros(x.shape)
    for i in range(len(codes)):
        out = out + codes[i]
    return out, codes.new_ones(codes.size(0), codes.size(1))


def test_stack_dim_is_the_operand_count():
    check(stack_then_len, lambda i: (torch.randn(i + 2, 3),), calls=4, max_recompiles=1)


def cat_then_sizes(x):
    y = torch.cat([x, x[:, :1]], dim=1)
    z = torch.cat([x, x], dim=0)
    return y.new_ones(y.size(0), y.size(1)) + y.sum(), z.new_zeros(z.size(0), z.size(1))


def test_cat_dim_is_the_sum_of_the_operands():
    check(cat_then_sizes, lambda i: (torch.randn(i + 2, 3),), calls=4, max_recompiles=1)


# unsqueeze (transformers' masking_utils reads `position_ids.shape[0]` of
# `arange(n).unsqueeze(0)`, mimi_encoder): the new dim is 1 at every size.

def unsqueeze_then_size(x):
    p = torch.arange(x.shape[1]).unsqueeze(0)
    if x.shape[0] != p.shape[0]:
        p = p.expand(x.shape[0], -1)
    return x + p, p.new_ones(p.shape[0], 1)


def test_unsqueeze_dim_is_one():
    check(unsqueeze_then_size, lambda i: (torch.randn(i + 2, 3),), calls=4, max_recompiles=1)


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


def split_heads_by_last_dim(x, w):
    # The pieces of a split along a constant dim, then one piece's length read
    # as a Python number (OpenAI GPT's split_heads: x.size(-1) // n_head).
    q, k, v = (x @ w).split(4, dim=2)
    shape = q.size()[:-1] + (2, q.size(-1) // 2)
    return q.view(*shape) + k.view(*shape) * v.view(*shape)


def test_split_pieces_have_the_split_length():
    w = torch.randn(8, 12)
    check(split_heads_by_last_dim, lambda i: (torch.randn(i + 2, 5, 8), w), calls=4, max_recompiles=1)


def uneven_pieces_then_read(x):
    # split(k) leaves the rest for the last piece; split_with_sizes takes each
    # piece's length from its list (here sizes that differ from every other dim).
    a, b = x.split(5, dim=1)
    c, d = x.split_with_sizes([3, 4], dim=1)
    return a.sum(1) * b.size(1) + c.view(-1, c.size(1)).sum(1) * d.size(1)


def test_uneven_split_pieces_have_their_lengths():
    check(uneven_pieces_then_read, lambda i: (torch.randn(i + 2, 7),), calls=4, max_recompiles=1)


def reduce_keepdim_then_read(x):
    # A reduction's kept dim is 1 (MoE routing: scores.max(-1, keepdim=True)
    # then an index's size(-1) read as a number); a dropped one is gone.
    m, i = x.max(dim=-1, keepdim=True)
    s = x.sum(dim=(0, 2), keepdim=True)
    k = torch.cat((i, i), dim=-1)
    return x[..., : k.size(-1)] * m + s.size(0) + x.mean(1).size(-1)


def test_reduction_dims_have_expressions():
    check(reduce_keepdim_then_read, lambda i: (torch.randn(i + 2, 3, 4),), calls=4, max_recompiles=1)


def conv_pool_then_trim(x, w):
    # An audio encoder's length bookkeeping: the output lengths of a conv and a
    # pool over a constant time dim, both read to trim to the shorter one
    # (SEW's min(position_embeddings.size(-1), pooled.size(-1))). The batch dim
    # is the dynamic one.
    a = torch.nn.functional.conv1d(x, w, padding=2)
    p = torch.nn.functional.avg_pool1d(x, 2)
    n = min(a.size(-1), p.size(-1))
    return a[..., :n] + p[..., :n].sum(1, keepdim=True)


def test_conv_and_pool_lengths_over_a_constant_dim_are_constants():
    w = torch.randn(3, 2, 4)
    check(conv_pool_then_trim, lambda i: (torch.randn(i + 2, 2, 11), w), calls=4, max_recompiles=1)


def constant_operands_then_read(x, w):
    # An op whose operands all have constant shapes gives a constant shape,
    # here windows of a weight (unfold: no copy rule) read as a number while
    # the batch is dynamic.
    win = w.unfold(1, 2, 1)
    return x[:, : win.size(1)] * win.size(2)


def test_results_of_constant_shapes_are_constants():
    w = torch.randn(3, 5)
    check(constant_operands_then_read, lambda i: (torch.randn(i + 2, 6), w), calls=4, max_recompiles=1)



# Convolution, pooling and resampling (SEW's `min(pos_conv.size(-1),
# pool.size(-1))`, TimeSformer's patch embedding read back by `.size(1)`): the
# batch dim is the operand's, the other dims are computed from constants only.
# Without the rule the read (the same at every batch size, no expression)
# compiled the frame static: a recompile per batch size.

def conv_pool_then_read(x, w, w2):
    h = torch.nn.functional.conv1d(x, w, padding=1)
    p = torch.nn.functional.avg_pool1d(h, 2)
    n = min(h.size(-1), p.size(-1))
    img = torch.nn.functional.conv2d(x.unsqueeze(1), w2, stride=2)
    m = torch.nn.functional.max_pool2d(img, 2)
    u = torch.nn.functional.interpolate(m, scale_factor=2.0)
    t = torch.nn.functional.conv_transpose1d(h, w.transpose(0, 1))
    return (h[..., :n] + p[..., :n], img.new_zeros(img.size(1), img.shape[-1]) + u.shape[-2],
            t.view(t.size(0), t.size(1) * t.size(2)))


def test_windowed_op_dims_have_expressions():
    w, w2 = torch.randn(4, 3, 3), torch.randn(2, 1, 2, 2)
    c = check(conv_pool_then_read, lambda i: (torch.randn(i + 2, 3, 10), w, w2), calls=4, max_recompiles=1)
    assert c["dynamic_followups"] == 0, c


def conv_along_changing_length(x, w):
    # The length changes, not the batch: the result's length depends on a
    # dynamic dim, so the rule must not call it a constant (values checked
    # against eager at every length; an unbatched input too).
    h = torch.nn.functional.conv1d(x, w, stride=2)
    u = torch.nn.functional.conv1d(x[0], w)
    return h.new_ones(h.size(0), h.size(-1)) * h.sum(), u.new_zeros(u.shape[-1]) + u.size(0)


def test_windowed_op_on_a_dynamic_length_is_exact():
    w = torch.randn(4, 3, 3)
    check(conv_along_changing_length, lambda i: (torch.randn(2, 3, 9 + 4 * i), w), calls=4, max_recompiles=8)


# expand's -1 keeps the operand's dim (TimeSformer/ViT: a class token expanded
# to the batch, concatenated, then `embeddings.size(1)` compared with the
# position table's). The -1 dims had no expression: a recompile per batch size.

def expand_cls_then_cat(x, cls):
    c = cls.expand(x.size(0), -1, -1)
    e = torch.cat((c, x), dim=1)
    if e.size(1) != x.size(1) + 1:
        return e
    return e + e.new_ones(e.size(1), e.size(2))


def test_expand_minus_one_keeps_the_operand_dim():
    cls = torch.randn(1, 1, 4)
    check(expand_cls_then_cat, lambda i: (torch.randn(i + 2, 3, 4), cls), calls=4, max_recompiles=1)


# The pieces of a split along a constant dim (OpenAI GPT's split_heads reads
# `x.size(-1) // n_head` of a piece of `c_attn(x).split(64, dim=2)`) and
# arange(start, end) (ProphetNet: `arange(1, n).repeat(...)`, then `.size(-1)`):
# known sizes. Both were reads without an expression: a recompile per batch size.

def split_piece_then_heads(x, w):
    q, k, v = (x @ w).split(4, dim=2)
    a, b = x.chunk(2, dim=-1)
    shape = q.size()[:-1] + (2, q.size(-1) // 2)
    pos = torch.arange(1, x.size(1) + 1).repeat(x.size(0), 1)
    return q.view(*shape) + k.view(*shape) * v.view(*shape), a.new_ones(a.size(-1)) + b.size(-1), \
        pos.new_zeros(pos.size(-1)) + pos.size(0)


def test_split_pieces_and_arange_have_expressions():
    w = torch.randn(6, 12)
    check(split_piece_then_heads, lambda i: (torch.randn(i + 2, 3, 6), w), calls=4, max_recompiles=1)


def split_along_a_dynamic_dim(x):
    # The split dim is the one that changes: the last piece's size depends on
    # it, so no constant may stand for it (values checked against eager).
    parts = x.split(2, dim=0)
    return [p.new_ones(p.size(0)) * p.sum() for p in parts[:1]], parts[-1].new_zeros(parts[-1].size(0))


def test_split_along_a_dynamic_dim_is_exact():
    check(split_along_a_dynamic_dim, lambda i: (torch.randn(i + 3, 2),), calls=4, max_recompiles=8)


# Reductions with keepdim=True (PhiMoE's router: `max(dim=-1, keepdim=True)`,
# gather by its indices, cat of two such columns, then `.size(-1)` read by the
# experts' code): the reduced dims are 1. They had no expression: a recompile
# per batch size.

def keepdim_reductions_then_read(x):
    v, i = x.max(dim=-1, keepdim=True)
    g = x.gather(-1, i)
    both = torch.cat((g, x.sum(-1, keepdim=True), x.amax(dim=(1, 2), keepdim=True).expand(-1, 3, -1)), dim=-1)
    return both.new_zeros(both.size(-1), both.size(1)) + v.sum() + x.mean(dim=None, keepdim=True).size(0)


def test_keepdim_reductions_have_expressions():
    check(keepdim_reductions_then_read, lambda i: (torch.randn(i + 2, 3, 5),), calls=4, max_recompiles=1)


def dynamic_tuple_plus_constant_shape(x, mask):
    # A tuple holding a dynamic size plus the torch.Size of a tensor with
    # constant dims (ProphetNet's `(batch_size, heads) + causal_mask.shape`).
    shape = (x.size(0), 1) + mask.shape
    full = mask[None, None].expand(shape)
    return x[:, None] + full, type(shape).__name__, list(mask.shape) + [x.size(0)]


def test_tuple_plus_constant_torch_size_stays_dynamic():
    mask = torch.randn(3, 4)
    check(dynamic_tuple_plus_constant_shape, lambda i: (torch.randn(i + 2, 3, 4), mask), calls=4, max_recompiles=1)
