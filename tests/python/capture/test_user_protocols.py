"""User objects made inside a captured function, beyond plain attributes (Note
[User objects] and Note [Operator protocols] in
csrc/lib/capture/translate/TranslateObjects.cpp): operators, len(), indexing
and truth through the class's dunder methods (reflected and in-place forms
included), a __setattr__ written in Python (frozen dataclasses), and
__slots__. Each case is compared with eager through the harness (values,
types, identity, aliasing, exceptions) and must capture without a break where
the translator models it."""

import dataclasses

import pytest
import torch

from harness import check, r, r2
from xacc.jit import counters, jit


class Vec:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        if isinstance(other, Vec):
            return Vec(self.t + other.t)
        return NotImplemented

    def __radd__(self, other):
        return Vec(self.t + other)

    def __mul__(self, k):
        return Vec(self.t * k)

    def __neg__(self):
        return Vec(-self.t)

    def __len__(self):
        return self.t.shape[0]

    def __getitem__(self, i):
        return self.t[i]

    def __setitem__(self, i, v):
        self.t = torch.cat([self.t[:i], v.reshape(1, -1), self.t[i + 1:]])

    def __lt__(self, other):
        return self.t.shape[0] < other.t.shape[0]


class Empty:
    def __len__(self):
        return 0


class Flag:
    def __init__(self, on):
        self.on = on

    def __bool__(self):
        return self.on


class Acc:
    def __init__(self, t):
        self.t = t

    def __iadd__(self, other):
        self.t = self.t + other
        return self


class Base:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return "base"

    def __radd__(self, other):
        return "base-r"


class Derived(Base):
    def __radd__(self, other):
        return Derived(self.t + other.t)


def test_binary_operators_and_reflection():
    def f(x):
        a, b = Vec(x), Vec(x * 2)
        c = a + b           # __add__
        d = 1.5 + a         # int/float give NotImplemented: __radd__
        e = -(a * 3)        # __mul__, __neg__
        return c.t, d.t, e.t, type(c).__name__

    check(f, r(3, 4), graphs=1, breaks=0)


def test_returned_object_made_by_an_operator_keeps_identity():
    def f(x):
        a = Vec(x)
        s = a + a
        return s, s, a

    out = check(f, r(3), graphs=1, breaks=0)


def test_len_getitem_setitem_and_truth():
    def f(x):
        v = Vec(x)
        last = v[len(v) - 1]
        v[0] = x[1] * 10
        n = 1 if Empty() else 2
        m = 3 if Flag(True) else 4
        k = 5 if Flag(False) else 6
        return last, v.t, n, m, k, bool(v)

    check(f, r(4, 2), graphs=1, breaks=0)


def test_comparisons_mirror_and_identity_equality():
    def f(x):
        a, b = Vec(x), Vec(x[:2])
        return x + 1, b < a, a > b, a == a, a == b, a != b, a == 3

    check(f, r(4), graphs=1, breaks=0)


def test_inplace_operator_and_fallback():
    def f(x):
        acc = Acc(x)
        same = acc
        acc += x            # __iadd__ returns self
        v = Vec(x)
        w = v
        v += Vec(x)         # no __iadd__: __add__ makes a new object
        return acc.t, acc is same, v.t, v is w

    check(f, r(3), graphs=1, breaks=0)


def test_subclass_reflected_method_runs_first():
    def f(x):
        r1 = Base(x) + Derived(x * 2)   # Derived overrides __radd__: it runs first
        r2 = Base(x) + Base(x)
        return r1.t, type(r1).__name__, r2

    check(f, r(3), graphs=1, breaks=0)


def test_unsupported_operand_raises_like_eager():
    def f(x):
        return Vec(x) + "a"

    check(f, r(3), min_graphs=0)


def test_dunder_method_replaced_on_the_class_recompiles():
    class Box:
        def __init__(self, t):
            self.t = t

        def __add__(self, other):
            return self.t + other

    def f(x):
        return Box(x) + 1

    jfn = jit(f)
    x = torch.randn(3)
    assert torch.equal(jfn(x), x + 1)
    old = Box.__add__
    Box.__add__ = lambda self, other: self.t - other
    try:
        assert torch.equal(jfn(x), x - 1)
    finally:
        Box.__add__ = old
    assert counters()["breaks"] == 0


class Doubling:
    def __init__(self, v):
        self.v = v

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * 2)


@dataclasses.dataclass(frozen=True)
class Frozen:
    k: int
    scale: float = 0.5


def test_setattr_written_in_python_is_inlined():
    def f(x):
        d = Doubling(x)
        d.w = x + 1
        return d.v, d.w, d

    out = check(f, r(3), graphs=1, breaks=0)


def test_frozen_dataclass_built_read_and_returned():
    def f(x):
        fr = Frozen(2, scale=3.0)
        return x[: fr.k] * fr.scale, fr

    out = check(f, r(4), graphs=1, breaks=0)


def test_frozen_dataclass_write_raises_like_eager():
    def f(x):
        fr = Frozen(2)
        fr.k = 3
        return x * fr.k

    check(f, r(3), min_graphs=0)


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


class SlottedChild(Slotted):
    __slots__ = ("c",)


def test_slots_built_read_written_and_returned():
    def f(x, y):
        s = Slotted(x, 2)
        s.b = y
        c = SlottedChild(x, y)
        c.c = x * y
        return s.a * s.b, s, c

    out = check(f, r2(3), graphs=1, breaks=0)


def test_unset_slot_and_unknown_attribute_raise_like_eager():
    def unset(x):
        c = SlottedChild(x, 1)
        return c.c

    def unknown(x):
        s = Slotted(x, 1)
        s.z = 3
        return s.a

    check(unset, r(3), min_graphs=0)
    check(unknown, r(3), min_graphs=0)


class Keyed:
    def __init__(self, k, t):
        self.k = k
        self.t = t

    def __eq__(self, other):
        return isinstance(other, Keyed) and self.k == other.k


def test_ne_inverts_a_user_eq():
    def f(x):
        a, b, c = Keyed(1, x), Keyed(1, x + 1), Keyed(2, x)
        return x * 2, a == b, a != b, a != c, a == c, a != 1

    check(f, r(3), graphs=1, breaks=0)
