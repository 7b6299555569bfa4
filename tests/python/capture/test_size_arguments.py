"""Sizes carried across a graph break (Note [Size arguments] in
xacc/_src/capture/host.py): `s = x.shape`, a break, then `x.view(s[0], -1)`
in the resume function, which receives `s[0]` as an int argument, not as a
dim of a tensor. Once its value changes it is a symbolic size of its own, so a
new batch size recompiles the frame and its resume function once, as
torch.compile does, instead of once per batch size; every call is compared
with eager, and a use as a plain number (a branch) still specializes."""

from __future__ import annotations

import torch

from harness import compare_call
from xacc.jit import counters, jit


def run(fn, sizes, make):
    jf = jit(fn)
    for b in sizes:
        compare_call(fn, jf, make(b))
    c = counters()
    assert c["internal_errors"] == 0, c
    return c


def shape_across_break(x):
    s = x.shape
    print("x")
    return x.view(s[0], -1) * 2




def size_across_break(x, y):
    n = x.size(0)
    print("y")
    return y.new_zeros(n, 2) + y.sum() * n


def test_int_size_carried_across_a_break_recompiles_once():
    c = run(size_across_break, (2, 3, 4, 5), lambda b: (torch.randn(b, 3), torch.randn(4)))
    assert c["recompiles"] <= 1, c


def size_across_break_branches(x):
    s = x.shape
    print("z")
    if s[0] > 3:  # a plain number: compiled for each outcome, never a wrong one
        return x.view(s[0], -1) + 1
    return x.view(s[0], -1) - 1


def test_shape_carried_across_a_break_recompiles_once():
    c = run(shape_across_break, (2, 3, 4, 5, 6), lambda b: (torch.randn(b, 3, 2),))
    assert c["recompiles"] <= 1, c
    # Used as a plain number, the size specializes: each outcome compiled, values as eager's.
    run(size_across_break_branches, (2, 3, 4, 5, 3, 2), lambda b: (torch.randn(b, 2, 2),))


def size_and_dim_across_break(x, y):
    n = x.size(0)
    print("w")
    return y.view(n, -1) + x.sum()


def test_size_argument_equal_to_another_dim_is_guarded():
    # n equals y's dim 0 while both change; then y keeps a size n no longer has.
    sizes = [(2, 2), (3, 3), (4, 4), (5, 5)]
    c = run(size_and_dim_across_break, range(4), lambda i: (torch.randn(sizes[i][0], 2), torch.randn(sizes[i][1], 6)))
    assert c["recompiles"] <= 1, c
    jf = jit(size_and_dim_across_break)
    for a, b in ((2, 2), (3, 3), (4, 4), (3, 4)):  # the last: view(3, -1) of 4*6 elements
        compare_call(size_and_dim_across_break, jf, (torch.randn(a, 2), torch.randn(b, 6)))
