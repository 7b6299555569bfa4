"""copy.copy and copy.deepcopy of instances of Python classes run through the
reduce protocol in the graph (Note [Copies of instances] in
xacc/_src/capture/polyfills_copy.py): each case was a graph break (GB024,
"copy.deepcopy of a X is left to Python") before. Each is compared with eager
(values, types, identity among the parts, mutated inputs) and its counters;
what is left to Python (a class's own __deepcopy__, a memo passed in, tensors)
still gives eager's values."""

import copy
import dataclasses

import torch

from harness import check, r


class Box:
    def __init__(self, scale, dims):
        self.scale = scale
        self.dims = dims
        self.meta = {"name": "box", "dims": dims}


class Pair:
    def __init__(self, left, right):
        self.left = left
        self.right = right


class Reduced:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __reduce__(self):
        return (Reduced, (self.a, [self.b]), {"extra": self.a + 1})


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a):
        self.a = a


class WithState:
    def __init__(self, n):
        self.n = n

    def __getstate__(self):
        return {"n": self.n, "was": "got"}

    def __setstate__(self, state):
        self.n = state["n"] * 10
        self.seen = state["was"]


class OwnDeepcopy:
    def __init__(self, v):
        self.v = v

    def __deepcopy__(self, memo):
        return OwnDeepcopy([9] + self.v)


@dataclasses.dataclass
class Point:
    x: int
    ys: list


OUTSIDE = Box(3, [1, 2])


def test_deepcopy_of_instances_made_in_the_frame():
    def f(x):
        dims = [2, 3]
        a = Box(2, dims)
        p = Pair(a, a)
        c = copy.deepcopy(p)
        c.left.dims.append(4)  # the copy's one list, seen through both
        return (x * c.left.scale, p, c, c is p, c.left is c.right, c.left is a, c.left.dims is c.left.meta["dims"],
                dims)

    check(f, r(3), graphs=1, breaks=0)


def test_deepcopy_of_a_cycle():
    def f(x):
        a = Pair(1, None)
        b = Pair(a, [a])
        a.right = b
        c = copy.deepcopy(b)
        return x + 1, c, c.left.right is c, c.right[0] is c.left, c.left is a

    check(f, r(3), graphs=1, breaks=0)


def test_deepcopy_of_an_outside_instance():
    def f(x):
        c = copy.deepcopy(OUTSIDE)
        c.scale = 5
        c.dims.append(7)
        return x * c.scale, c, OUTSIDE.dims, OUTSIDE.scale

    check(f, r(3), graphs=1, breaks=0)


def test_copy_of_an_instance_is_shallow():
    def f(x):
        a = Box(2, [1])
        c = copy.copy(a)
        c.scale = 4
        c.dims.append(2)
        return x * a.scale, x * c.scale, a, c, c is a, c.dims is a.dims, c.meta is a.meta

    check(f, r(3), graphs=1, breaks=0)


def test_reduce_written_in_python():
    def f(x):
        a = Reduced(2, 3)
        c = copy.deepcopy(a)
        s = copy.copy(a)
        return x * c.extra, c, s, c.b, s.b, c is a

    check(f, r(3), graphs=1, breaks=0)


def test_slots_and_setstate():
    def f(x):
        s = Slotted([1])
        c = copy.deepcopy(s)
        w = copy.deepcopy(WithState(2))
        return x * w.n, c.a, c.a is s.a, hasattr(c, "b"), w.n, w.seen, type(c), type(w)

    check(f, r(3), graphs=1, breaks=0)


def test_dataclass_and_slice():
    def f(x):
        p = Point(1, [2, 3])
        c = copy.deepcopy(p)
        c.ys.append(4)
        s = slice(1, 3)
        d = copy.deepcopy(s)
        return x[d], p, c, c == p, c.ys is p.ys, d is s, d == s, copy.copy(s) is s

    check(f, r(5), graphs=1, breaks=0)


def test_left_to_python_still_gives_eagers_values():
    def own(x):
        o = OwnDeepcopy([1])
        c = copy.deepcopy(o)
        return x + 1, c.v, c is o

    def with_memo(x):
        a = Box(1, [2])
        c = copy.deepcopy(a, {})
        return x + 1, c, c.dims is a.dims

    def tensors(x):
        a = Pair(x, [x])
        c = copy.deepcopy(a)
        c.left.add_(1)
        return c, a, c.left is c.right[0], c.left is x

    for fn in (own, with_memo, tensors):
        check(fn, r(3))


def test_a_break_inside_a_reference_is_reported_at_the_call():
    # Note [Breaks inside polyfills]: the line is the user's copy.deepcopy
    # call, not the reference's raise in polyfills_copy.py.
    from xacc.explain import explain

    def own(x):
        o = OwnDeepcopy([1])
        c = copy.deepcopy(o)
        return x + 1, c.v

    out = explain(own)(torch.randn(3))
    b = out.break_reasons[0]
    assert b.filename.endswith("test_copy_instances.py"), b
    assert b.lineno == own.__code__.co_firstlineno + 2, b


SHARED = [1]
CONTAINERS = {"a": SHARED, "b": [1], "again": SHARED}
REGISTRY = {Box: 2, Pair: 3, "name": 4}


def test_identity_of_outside_containers_and_class_keyed_dicts():
    # What the references above ask of values read from outside: `is` between
    # two containers read through two sources (their Distinct guards keep them
    # apart), and a dict keyed by classes (copyreg.dispatch_table's shape,
    # Note [Classes as dict keys]).
    def f(x):
        same = CONTAINERS["a"] is CONTAINERS["again"]
        other = CONTAINERS["a"] is CONTAINERS["b"]
        return x * REGISTRY[Pair], same, other, Box in REGISTRY, Reduced in REGISTRY, REGISTRY.get(Slotted, 0)

    check(f, r(3), graphs=1, breaks=0)
