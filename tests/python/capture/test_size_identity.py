"""Two symbolic sizes are one size only when that is exact (Note [Size
expressions] in xacc/_src/capture/symexpr.py). Under dynamic shapes a size has
a value in the real run and one in the shadow run (its dynamic dims times a
prime); two sizes that agree in both runs need not agree at other sizes:
`b * b` and `12 * b - 32` are 16 and 64 at b = 4 (shadow 8) and 25 and 28 at
b = 5. Comparing them, or naming an ATen size argument by that pair, must not
take one for the other: every call is compared with eager at sizes 3, 4 (the
dynamic compile) and then sizes where the two differ."""

from __future__ import annotations

import torch

from harness import compare_call
from xacc.jit import counters, jit


def run(fn, sizes, make=lambda b: (torch.randn(b, 3),)):
    jf = jit(fn)
    for b in sizes:
        compare_call(fn, jf, make(b))
    assert counters()["internal_errors"] == 0, counters()


def square_equals_line(x):
    b = x.size(0)
    if b * b == 12 * b - 32:  # true at b = 4 and 8 only
        return x + 1
    return x - 1


def test_comparison_of_sizes_equal_at_both_runs_only():
    run(square_equals_line, (3, 4, 5, 6, 8, 3))


def line_named_by_its_pair(x):
    b = x.size(0)
    square = b * b
    line = 12 * b - 32  # the same (real, shadow) pair as `square` at b = 4
    return x.new_ones(line) * square


def test_size_argument_not_confused_with_another_of_the_same_pair():
    run(line_named_by_its_pair, (3, 4, 5, 6))


def vanishing_product(x):
    b = x.size(0)
    z = (b - 4) * (b - 8)  # 0 at b = 4 and at its shadow 8
    return x.new_zeros(z + 2)


def test_size_equal_in_both_runs_is_not_a_constant():
    run(vanishing_product, (3, 4, 5, 6))


def clamped_slice(x):
    b = x.size(0)
    y = x[:16]  # b rows up to 16: its size agrees with b at b = 4 and its shadow 8
    if y.size(0) == b:
        return y * 2
    return y - 1


def test_size_of_a_clamped_slice_is_not_the_dim():
    run(clamped_slice, (3, 4, 20, 5, 17))
