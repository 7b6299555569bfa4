"""Dynamic shapes through strided layouts (transformers' Longformer/LED
attention): a batch dim of a non-contiguous view (`mask[:, 0, 0, :]`; Note
[Dynamic dims of strided tensors] in dynamic.py), dims that `unsqueeze` and
`F.pad` make (Note [Size expressions] in symexpr.py), and strides read by
Python to build an `as_strided` view (Note [Symbolic strides] in host.py).
Each used to compile the frame static, so every batch size compiled again;
now one recompile makes the batch dim dynamic. Every call is compared with
eager (values, strides where they matter)."""

import torch
import torch.nn.functional as F

from harness import compare_call
from xacc._src.capture.symexpr import Expr
from xacc.jit import counters, jit


def _over_batches(fn, make, batches=(2, 3, 4, 5)):
    jf = jit(fn)
    for b in batches:
        torch.manual_seed(b)
        got = compare_call(fn, jf, make(b))
    return counters(), got


def masked(h, mask):
    return h * mask[:, :, None] + 1


def _strided_mask(b):
    # The (b, 1, n, n) 4-d mask's [:, 0, 0, :]: (b, n) with strides (n * n, 1).
    big = torch.randn(b, 1, 6, 6)
    return torch.randn(b, 6, 3), big[:, 0, 0, :]


def test_the_outer_dim_of_a_strided_view_is_dynamic():
    # Before: only broadcast dims of non-contiguous tensors were dynamic: the
    # mask's batch stayed static, 3 recompiles over batch 2, 3, 4, 5.
    c, _ = _over_batches(masked, _strided_mask)
    assert c["recompiles"] == 1 and c["breaks"] == 0, c


def _transposed_mask(b):
    # (b, n) viewed from a (n, b) buffer: strides (1, b) change with b.
    return torch.randn(b, 6, 3), torch.randn(6, b).t()


def test_a_layout_whose_strides_follow_the_size_stays_exact():
    c, _ = _over_batches(masked, _transposed_mask)
    assert c["breaks"] == 0 and c["internal_errors"] == 0, c


def reads_new_dims(x, m):
    fm = m[:, :, None, None]  # m's shape does not change: only x's batch does
    ones = fm.new_ones(fm.size())
    p = F.pad(m, (0, 1))
    q = p.new_zeros(p.size())
    return x * 2, ones, q


def test_unsqueeze_and_pad_dims_have_expressions():
    # Before: the dims unsqueeze and F.pad made had no expression, so reading
    # m's size (the same in both runs) compiled the frame static: 3 recompiles.
    c, _ = _over_batches(reads_new_dims, lambda b: (torch.randn(b, 3), torch.randn(2, 5)))
    assert c["recompiles"] == 1 and c["breaks"] == 0, c


def chunk(x, w):
    # Longformer's query chunking: a seq-major (seq, b, e) projection viewed
    # per head, then overlapping chunks built with as_strided from strides read
    # off the tensor (the second one depends on b).
    seq, b, e = x.size()
    q = x.view(seq, b, 2, e // 2).transpose(0, 1)
    q = q.transpose(1, 2).reshape(b * 2, seq, e // 2)
    h = q.view(q.size(0), torch.div(q.size(1), 2 * w, rounding_mode="trunc"), 2 * w, q.size(2))
    size = list(h.size())
    size[1] = size[1] * 2 - 1
    stride = list(h.stride())
    stride[1] = stride[1] // 2
    return h.as_strided(size=size, stride=stride) * 1, h.stride(1)


def test_strides_read_by_python_are_symbolic():
    # Before: the stride read differed from the shadow run's: static, 3 recompiles.
    c, _ = _over_batches(lambda x: chunk(x, 2), lambda b: (torch.randn(16, b, 6),))
    assert c["recompiles"] == 1 and c["breaks"] == 0, c


def square_stride(x):
    # x is (b, b, 4): stride 0 is 4 * b * b, a form no pair of two runs identifies.
    return x.as_strided((x.size(0), 2), (x.stride(0) // x.size(0), 1)) + 0


def test_a_stride_no_form_identifies_stays_exact():
    c, _ = _over_batches(square_stride, lambda b: (torch.randn(b, b, 4),))
    assert c["breaks"] == 0 and c["internal_errors"] == 0, c


def test_floor_division_by_a_common_factor_folds():
    s = Expr.symbol("s0")
    e = Expr.const(24) * s + Expr.const(6)
    assert e.divmod_atom("//", Expr.const(2)) == Expr.const(12) * s + Expr.const(3)
    assert e.divmod_atom("%", Expr.const(6)) == Expr.const(0)
    assert e.divmod_atom("//", Expr.const(5)) != Expr.const(4) * s + Expr.const(1)  # 24 = 5 * 4 + 4: kept as an atom
