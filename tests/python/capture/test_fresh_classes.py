"""Classes made inside traced code by a class factory (Note [Fresh classes] in
TranslateFreshClasses.cpp): `collections.namedtuple(...)` on constants is
captured without a break; where the class or an instance escapes it is a new
class per call, as in eager, with eager's __module__ and fields, one class for
every reference in a call; a factory call on a non-constant still breaks."""

import collections

import pytest
import torch

from harness import check, r
from xacc.jit import counters, jit


def used_inside(x):
    Pair = collections.namedtuple("Pair", ["a", "b"])
    p = Pair(x, x * 2)
    return p.a + p.b, p[1] - p.a, len(Pair._fields)


def with_defaults(x):
    Point = collections.namedtuple("Point", "x y z", defaults=(0.5,))
    p = Point(x, x + 1)
    return p.x * p.z + p.y


@pytest.mark.parametrize("fn", [used_inside, with_defaults])
def test_namedtuple_used_inside_is_one_graph(fn):
    check(fn, r(4, 4), graphs=1, breaks=0)


def test_escaping_instances_get_a_new_class_per_call_shared_within_a_call():
    def f(x):
        Pair = collections.namedtuple("Pair", ["a", "b"])
        names = ["u", "v"]
        Other = collections.namedtuple("Other", names)
        names.append("w")  # after the call: not a field of Other
        return Pair(x, x + 1), Pair(x * 2, x), Other(x, -x), Pair

    jf = jit(f)
    x = torch.randn(3)
    p, q, o, cls = jf(x)
    p2, _, _, cls2 = jf(x)
    e, _, eo, ecls = f(x)
    assert counters()["breaks"] == 0 and counters()["graphs"] >= 1
    assert type(p) is type(q) is cls and cls is not cls2 and type(p2) is cls2
    assert cls is not ecls and cls.__name__ == "Pair" and cls._fields == ("a", "b")
    assert cls.__module__ == ecls.__module__ == __name__
    assert type(o)._fields == type(eo)._fields == ("u", "v")
    assert torch.equal(p.b, e.b) and torch.equal(o.v, eo.v) and isinstance(p, tuple)


def test_factory_on_a_non_constant_still_breaks_and_matches_eager():
    def f(x):
        P = collections.namedtuple("P", iter(["a", "b"]))  # an iterator: not a constant
        return P(x, x)[0] + 1

    check(f, r(3), max_recompiles=8)  # each call's class is new to the resume function's guards
    assert counters()["breaks"] >= 1
