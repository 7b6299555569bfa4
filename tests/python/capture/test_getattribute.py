"""A `__getattribute__` written in Python on objects made in the frame (Note
[Attribute protocol] in csrc/lib/capture/translate/TranslateObjects.cpp):
every attribute read (`obj.name`, getattr, hasattr, vars, method loads,
`__class__`, `__dict__`) runs it inlined, and `super().__getattribute__` /
`object.__getattribute__` inside it are object's lookup. Each was a graph
break (GB002 "defines __getattribute__") before. What the translator does not
model exactly stays a break and still gives eager's result: an AttributeError
that meets a handler on its way out of it, a class with both __getattribute__
and __getattr__, isinstance() that only `obj.__class__` could answer. Each is
compared with eager (values, types, identity) and its counters."""

import abc

import torch

from attribute_map import AttributeMapped
from harness import check, r


class Mapped(AttributeMapped):
    # A configuration object that renames some attributes on read and write.
    attribute_map = {"hidden": "d_model", "heads": "n_heads"}

    def __init__(self, d_model, n_heads):
        self.d_model = d_model
        self.heads = n_heads  # written through the map

    def width(self):
        return self.hidden * 2


class Doubling:
    def __init__(self, v):
        self.v = v

    def __getattribute__(self, name):
        return object.__getattribute__(self, name) * 2


class Logged:
    def __init__(self):
        self.seen = []
        self.k = 3

    def __getattribute__(self, name):
        object.__getattribute__(self, "seen").append(name)
        return object.__getattribute__(self, name)

    def scale(self, x):
        return x * self.k


def test_python_getattribute_is_inlined_for_every_read():
    def f(x):
        c = Mapped(4, 2)
        c.hidden = 5  # the mapped write
        return (x * c.hidden + c.heads, c.width(), c.d_model, getattr(c, "heads"), hasattr(c, "n_heads"),
                getattr(c, "hidden", -1), vars(c), c.__dict__, c.__class__, type(c), c)

    check(f, r(3), graphs=1, breaks=0)


def test_object_getattribute_called_directly():
    def f(x):
        d = Doubling(x)
        return d.v, Doubling(3).v

    check(f, r(3), graphs=1, breaks=0)


def test_method_loads_and_dunder_reads_go_through_it_in_order():
    def f(x):
        o = Logged()
        y = o.scale(x)
        o.__dict__
        return y, hasattr(o, "__class__"), o.seen, isinstance(o, Logged)

    check(f, r(3), graphs=1, breaks=0)


def test_attribute_error_from_it_is_caught_by_hasattr_and_getattr():
    # object's lookup of a missing name raises AttributeError inside the
    # inlined __getattribute__; hasattr and getattr's default take it (Note
    # [AttributeError of a Python __getattribute__]). A break before.
    def f(x):
        c = Mapped(4, 2)
        return x + 1, hasattr(c, "missing"), getattr(c, "missing", "dflt"), getattr(c, "hidden", -1), c

    check(f, r(3), graphs=1, breaks=0)


def _generic(obj, name):
    return object.__getattribute__(obj, name)


class Slotted:
    __slots__ = ("a", "b", "seen")

    def __init__(self):
        self.a = 1
        self.seen = []

    def __getattribute__(self, name):
        _generic(self, "seen").append(name)  # an effect before the raise, kept as in Python
        return _generic(self, name)  # raised one frame further in


def test_attribute_error_through_a_helper_frame_and_effects_before_it():
    def f(x):
        o = Slotted()
        return x * o.a, hasattr(o, "b"), getattr(o, "b", 5), getattr(o, "a", 0), hasattr(o, "zz"), o.seen

    check(f, r(3), graphs=1, breaks=0)


class Swallowing:
    def __init__(self):
        self.log = []

    def __getattribute__(self, name):
        try:
            return object.__getattribute__(self, name)
        except AttributeError:
            return "fallback"


class Finally:
    def __init__(self):
        self.log = []

    def __getattribute__(self, name):
        try:
            return object.__getattribute__(self, name)
        finally:
            object.__getattribute__(self, "log").append(name)


def test_attribute_error_meeting_a_handler_breaks_and_matches_eager():
    # A handler inside __getattribute__ would run in Python: not taken as
    # hasattr's AttributeError, left to Python.
    def f(x):
        s = Swallowing()
        g = Finally()
        # (g's own log is not returned: after the break g reaches the resumed
        # code from outside the frame, and hasattr/getattr on such an object run
        # its __getattribute__ at trace time and in its guards, which it records.)
        return x + 1, hasattr(s, "missing"), getattr(s, "missing", 1), hasattr(g, "missing"), getattr(g, "m", 2)

    c = check(f, r(3), min_graphs=0)
    assert c["breaks"] >= 1


class Both:
    def __init__(self):
        self.a = 1

    def __getattribute__(self, name):
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        return name


def test_getattribute_with_getattr_fallback_breaks_and_matches_eager():
    def f(x):
        b = Both()
        return x + b.a, b.other

    c = check(f, r(3), min_graphs=0)
    assert c["breaks"] >= 1


class Base(abc.ABC):  # noqa: B024
    pass


class Disguised:
    def __getattribute__(self, name):
        if name == "__class__":
            return Base
        return object.__getattribute__(self, name)


def test_isinstance_answered_by_its_class_attribute_matches_eager():
    def f(x):
        return x + 1, isinstance(Disguised(), Base), isinstance(Disguised(), Disguised)

    check(f, r(3), min_graphs=0)
