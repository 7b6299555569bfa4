"""copy.copy / copy.deepcopy of instances whose class has its own
`__getattribute__` (Note [Copies of instances] in
xacc/_src/capture/polyfills_copy.py): the reference reads the original only
where copy.py and object.__reduce_ex__ read it, through that
`__getattribute__`, and follows only answers that are object's own methods
and the instance dict itself; anything else is left to Python (a break) and
still gives eager's values, types and identity. Each case compares with eager.
All of these were left to Python before (GB024 "copy.deepcopy of a ... is left
to Python"); the captured ones assert their counters."""

import copy
import copyreg

import torch

from attribute_map import AttributeMapped
from harness import check, r


class Mapped(AttributeMapped):
    # Renames some attributes on read and write, as configuration classes do.
    attribute_map = {"hidden": "d_model"}

    def __init__(self, d_model, sizes):
        self.d_model = d_model
        self.sizes = sizes


class MappedWithSetstate(Mapped):
    def __setstate__(self, state):
        self.__dict__.update(state)
        self.restored = True


class FakeDict(MappedWithSetstate):
    # Answers `__dict__` with another dict: Python's copy reads the real one.
    def __getattribute__(self, key):
        if key == "__dict__":
            return {"d_model": -1, "sizes": ["fake"]}
        return super().__getattribute__(key)


class OwnReduceEx(MappedWithSetstate):
    # Answers `__reduce_ex__` itself: copy.py calls what it answers.
    def __getattribute__(self, key):
        if key == "__reduce_ex__":
            return lambda protocol: (MappedWithSetstate, (9, ["own"]))
        return super().__getattribute__(key)


class Slotted(MappedWithSetstate):
    __slots__ = ("extra",)


for _cls in (Mapped, MappedWithSetstate, FakeDict, OwnReduceEx, Slotted):
    copyreg._slotnames(_cls)  # the cache deepcopy fills on its first call

WITH_SETSTATE = MappedWithSetstate(4, [1, [2]])
PLAIN = Mapped(4, [1, [2]])
FAKE = FakeDict(3, [5])
OWN = OwnReduceEx(3, [5])
SLOTTED = Slotted(6, [7])
SLOTTED.extra = [8]


def test_outside_instance_with_setstate_is_captured():
    def f(x):
        c = copy.deepcopy(WITH_SETSTATE)
        s = copy.copy(WITH_SETSTATE)
        c.sizes[1].append(3)
        return (x * c.hidden, c.hidden, c.sizes, c.restored, type(c), s.sizes is WITH_SETSTATE.sizes, s.restored,
                WITH_SETSTATE.sizes, c.__dict__)

    check(f, r(3), graphs=1, breaks=0)


def test_slots_read_through_getattribute_match_eager():
    # The slot is read through the class's __getattribute__; the copy's
    # `__dict__` beside a slot is not modelled yet (a break).
    def f(x):
        c = copy.deepcopy(SLOTTED)
        return x + c.hidden, c.extra, c.extra is SLOTTED.extra, c.sizes, c.__dict__

    check(f, r(3), min_graphs=0)


def test_instance_dict_answered_by_the_class_matches_eager():
    def f(x):
        c = copy.deepcopy(FAKE)
        return x + 1, object.__getattribute__(c, "__dict__")

    check(f, r(3), min_graphs=0)


def test_reduce_ex_answered_by_the_class_matches_eager():
    def f(x):
        c = copy.deepcopy(OWN)
        return x + 1, type(c), c.hidden, c.sizes

    check(f, r(3), min_graphs=0)


def test_missing_setstate_is_captured():
    # hasattr(copy, "__setstate__") runs the class's __getattribute__, whose
    # AttributeError hasattr takes (Note [AttributeError of a Python
    # __getattribute__]); the state goes into the copy's dict.
    def f(x):
        c = copy.deepcopy(PLAIN)
        s = copy.copy(PLAIN)
        return x * c.hidden, c.sizes, c.sizes[1] is PLAIN.sizes[1], s.sizes is PLAIN.sizes, c.__dict__, type(s)

    check(f, r(3), graphs=1, breaks=0)


def test_instance_made_in_the_frame_matches_eager():
    def f(x):
        a = MappedWithSetstate(2, [x.shape[0]])
        c = copy.deepcopy(a)
        return x + c.hidden, c.sizes, c.restored

    check(f, r(3), min_graphs=0)


class Plain:
    def __init__(self, n):
        self.n = n
        self.items = [n]


def _newargs():
    return (5, 6)


def test_instance_dict_getnewargs_is_not_asked():
    # object.__reduce_ex__ looks __getnewargs__ up on the type only, so an
    # instance-dict entry is state like any other: captured (a break before).
    def f(x):
        a = Plain(2)
        a.__getnewargs__ = _newargs
        c = copy.deepcopy(a)
        return x + c.n, c.items, c.__getnewargs__ is _newargs, type(c)

    check(f, r(3), graphs=1, breaks=0)
