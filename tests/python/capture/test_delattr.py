"""`del obj.name`, delattr() and object.__delattr__ on objects made in the
frame (Note [Deleting attributes] in csrc/lib/capture/translate/TranslateVars.cpp):
each was a graph break (GB007 "del .name") before. After the delete, hasattr
answers False (or finds the class attribute), and reading a name that is not
set, or deleting it again, raises AttributeError as in eager (a break: Python
raises it). Each is compared with eager (values, types, identity) and its
counters."""

import torch

from harness import check, r


class Plain:
    kind = "class default"

    def __init__(self, a, b):
        self.a = a
        self.b = b


class Logged:
    def __init__(self):
        self.log = []
        self.v = 1

    def __delattr__(self, name):
        self.log.append(name)
        object.__delattr__(self, name)


class WithProperty:
    def __init__(self):
        self._x = 3

    @property
    def x(self):
        return self._x

    @x.deleter
    def x(self):
        del self._x


class Slots:
    __slots__ = ("a", "b")


def test_del_and_delattr_on_objects_made_in_the_frame():
    def f(x):
        p = Plain(2, [1])
        del p.a
        delattr(p, "b")
        p.kind = "own"
        del p.kind  # the class attribute shows again
        q = Plain(3, 4)
        object.__delattr__(q, "b")
        return x * q.a, hasattr(p, "a"), hasattr(p, "b"), p.kind, getattr(p, "a", "gone"), vars(p), p, q

    check(f, r(3), graphs=1, breaks=0)


def test_delattr_through_python_delattr_property_and_slots():
    def f(x):
        g = Logged()
        del g.v
        w = WithProperty()
        del w.x
        s = Slots()
        s.a = 1
        s.b = 2
        del s.a
        return x + 1, g.log, hasattr(g, "v"), hasattr(w, "_x"), hasattr(s, "a"), s.b, g

    check(f, r(3), graphs=1, breaks=0)


def test_deleting_a_missing_attribute_raises_as_in_eager():
    def twice(x):
        p = Plain(1, 2)
        del p.a
        del p.a
        return x

    def read_after(x):
        p = Plain(1, 2)
        del p.a
        return x + p.a

    for fn in (twice, read_after):
        check(fn, r(3))


OUTSIDE = Plain(1, 2)


def test_delattr_on_an_outside_object_still_breaks_and_matches_eager():
    def f(x):
        o = Plain(5, 6)
        OUTSIDE.extra = 1
        del OUTSIDE.extra
        return x + o.a, hasattr(OUTSIDE, "extra")

    check(f, r(3))
