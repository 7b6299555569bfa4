"""The inliner's recursion guard counts one *function* (its code with its
closure), not one code object: a decorator's wrapper shares its code among all
the functions it wraps, and wrappers nesting around nested forwards (what
transformers' @deprecate_kwarg does on every layer) are not recursion. Real
recursion still stops at the guard and breaks there."""

import functools

import torch
from torch import nn

from harness import check, r
from xacc._src.capture import convert


def _renaming(old: str, new: str):
    """A keyword-renaming decorator: one wrapper code object for every function it wraps."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)
        return wrapper
    return deco


class _Leaf(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    @_renaming("past", "cache")
    def forward(self, x, cache=None):
        return self.lin(x) if cache is None else self.lin(x) + cache


class _L2(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Leaf()

    @_renaming("past", "cache")
    def forward(self, x, cache=None):
        return self.inner(x, cache=cache).relu() + 1


class _L3(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _L2()

    @_renaming("past", "cache")
    def forward(self, x, cache=None):
        return self.inner(x, cache=cache) * 2


class _L4(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _L3()

    @_renaming("past", "cache")
    def forward(self, x, cache=None):
        return self.inner(x, cache=cache) - x


class _L5(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _L4()

    @_renaming("past", "cache")
    def forward(self, x, cache=None):
        return self.inner(x, cache=cache).sigmoid()


class _L6(nn.Module):
    """Six levels of different forwards, each wrapped by the same decorator."""

    def __init__(self):
        super().__init__()
        self.inner = _L5()

    @_renaming("past", "cache")
    def forward(self, x, cache=None):
        return self.inner(x, cache=cache) + 3


def _codes(n0: int) -> list[str]:
    return [b.code for ev in convert.EVENTS[n0:] for b in ev.breaks]


def test_one_decorator_wrapping_nested_forwards_is_one_graph():
    m = _L6().eval()
    n0 = len(convert.EVENTS)
    check(m, r(2, 4), graphs=1, breaks=0)
    assert _codes(n0) == []


def test_decorated_forwards_with_renamed_keyword_are_one_graph():
    m = _L6().eval()

    def f(x):
        return m(x, past=x * 2)

    check(f, r(3, 4), graphs=1, breaks=0)


def test_real_recursion_still_stops_at_the_guard():
    def down(x, n):
        return x if n == 0 else down(x + 1, n - 1)

    def f(x):
        return down(x, 12) * 2

    n0 = len(convert.EVENTS)
    check(f, r(3), min_graphs=0, max_recompiles=100)
    assert "GB016" in _codes(n0)


def test_recursion_through_one_closure_still_stops_at_the_guard():
    def f(x):
        def rec(y, n):
            return y if n == 0 else rec(y * 1.5, n - 1)
        return rec(x, 12)

    n0 = len(convert.EVENTS)
    check(f, r(3), min_graphs=0, max_recompiles=100)
    assert "GB016" in _codes(n0)
