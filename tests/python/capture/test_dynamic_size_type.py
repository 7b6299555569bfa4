"""A shape read from a tensor with a dynamic dim stays a torch.Size (Note
[Symbolic shapes keep their type] in Translator.cpp): its type, isinstance,
slices, `+` and `*` with tuples, and the value returned or carried across a
break. Before, a size change made it a plain tuple: `type(x.shape[:-1])` was
`tuple` under xacc from the second batch size on, a silently wrong result."""

from __future__ import annotations

import pytest
import torch

import xacc
from xacc._src.jit import counters, reset


def shapes(x):
    s = x.shape
    a = s[:-1]
    b = a + (4,)
    c = (1,) + a
    d = a * 2
    y = x.view(b) * 2
    return y, type(a), isinstance(b, torch.Size), type(c), type(d), a, b, c, d, s, x.size()


def shape_across_break(x):
    a = x.shape[:-1]
    print("break")  # a graph break: `a` is carried to the resume function
    return x.sum(-1).view(a) + 1, type(a), a, isinstance(a, torch.Size)


@pytest.mark.parametrize("fn", [shapes, shape_across_break])
def test_shape_keeps_torch_size_type_over_batch_sizes(fn, capsys):
    reset()
    jf = xacc.jit(fn)
    for n in (2, 3, 4, 5):
        x = torch.randn(n, 4)
        got, want = jf(x), fn(x)
        assert torch.equal(got[0], want[0])
        for g, w in zip(got[1:], want[1:]):
            assert type(g) is type(w) and g == w, (n, g, w)
    if fn is shapes:  # no break: the size change makes the dim dynamic once
        assert counters()["recompiles"] <= 2


class SizeAttr(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.shape = torch.Size([2, 3])

    def forward(self, x):
        return x.view(self.shape) + 1, str(self.shape), repr(self.shape), type(self.shape)


def test_size_attribute_used_as_a_constant_stays_torch_size():
    # A torch.Size read from an attribute has constant items: used where a
    # constant is needed (str, repr) it is the torch.Size, not a plain tuple.
    reset()
    m = SizeAttr()
    jm = xacc.jit(m)
    x = torch.randn(6)
    got, want = jm(x), m(x)
    assert torch.equal(got[0], want[0])
    assert got[1:] == want[1:]
