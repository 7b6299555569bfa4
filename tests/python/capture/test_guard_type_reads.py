"""Guards and rebuilds run no user code that plain Python would not run (Note
[Guard reads of the type] in csrc/lib/capture/Guards.cpp, Note [Rebuilt
instance dicts] in csrc/lib/capture/translate/TranslateVars.cpp).

`len(x)`, `k in x`, `x[k]`, a method of `x` and bool(x) look the class up as
type(x), the object header's type: a class's __getattribute__ or a `__class__`
property never runs for them. The guards on those methods read the class the
same way. Before, they read `x.__class__` on every call: a logging
__getattribute__ logged `__class__` twice per call, and an object whose
`__class__` property names another class failed its guard on every call (a
recompile each time). An object made in the frame and rebuilt at a break is
filled and read through its instance dict itself: before, the rebuild read
`obj.__dict__` through the class's __getattribute__ and stored attributes with
STORE_ATTR, which runs a data descriptor's setter."""

import torch

from harness import check, r
from xacc.jit import counters, jit


class Logged:
    # Logs every attribute read that goes through the attribute protocol.
    def __init__(self):
        self.log = []

    def __getattribute__(self, name):
        object.__getattribute__(self, "log").append(name)
        return object.__getattribute__(self, name)


class LoggedBag(Logged):
    def __len__(self):
        return 3

    def __contains__(self, k):
        return k == 1

    def __getitem__(self, k):
        return k * 2


def _log(o):
    return object.__getattribute__(o, "log")


def test_special_method_guards_run_no_getattribute():
    def f(x, b):
        return x + len(b) + (1 in b) + b[2]

    eager, jitted = LoggedBag(), LoggedBag()
    jf = jit(f, device="cpu")
    for _ in range(3):
        x = torch.randn(3)
        assert torch.equal(jf(x, jitted), f(x, eager))
    assert _log(eager) == []
    assert _log(jitted) == _log(eager)  # was ['__class__'] * 10
    assert counters()["recompiles"] == 0


class Other:
    pass


class Disguised:
    # Answers another class for `obj.__class__`; Python's special method and
    # method lookups still use its own class.
    @property
    def __class__(self):
        return Other

    def __len__(self):
        return 2

    def __getitem__(self, k):
        return k + 1

    def scale(self, x):
        return x * 3


def test_a_class_property_does_not_fail_the_guards_every_call():
    # Was a recompile on every call: the guard read Other.__len__ (missing).
    c = check(lambda x, d: (x + len(d) + d[1], d.scale(x)), lambda i: (torch.randn(3), Disguised()),
              graphs=1, breaks=0)
    assert c["recompiles"] == 0


class Meta(type):
    def __len__(cls):
        return 0


class Plain(metaclass=Meta):
    pass


def test_truth_of_an_object_whose_metaclass_has_len():
    # bool(Plain()) is True: the metaclass's __len__ is the class's length, not
    # the instance's. Was a break (the translator read `__len__` on the class
    # through the attribute protocol, which finds the metaclass's).
    def f(x, p):
        if p:
            return x + 1
        return x - 1

    check(f, lambda i: (torch.randn(3), Plain()), graphs=1, breaks=0)


def test_object_made_in_the_frame_is_rebuilt_without_its_getattribute():
    def f(x):
        g = Logged()
        g.log
        print("break")  # a graph break: g is rebuilt for the rest of the frame
        return x + 1, _log(g)  # eager: ['log'] (was ['log', '__dict__', ...])

    check(f, r(3), min_graphs=1)


def test_instance_dict_and_its_view_are_rebuilt_without_its_getattribute():
    def f(x):
        g = Logged()
        g.k = 2
        d = g.__dict__  # through __getattribute__, as in Python: logged once
        keys = d.keys()
        print("break")
        return x * len(keys), d, list(keys), _log(g)

    check(f, r(3), min_graphs=1)


class Guarded:
    # A data descriptor named like an entry of the instance dict: an attribute
    # store runs its setter, a store into the dict does not.
    def __init__(self):
        self.writes = []

    @property
    def p(self):
        return "property"

    @p.setter
    def p(self, v):
        self.writes.append(v)


def test_rebuilt_attributes_go_into_the_instance_dict():
    def f(x):
        o = Guarded()
        o.__dict__.update({"p": 5})  # the dict entry, not the property
        print("break")
        return x + 1, o.p, vars(o), o.writes  # eager: 'property', {'writes': [], 'p': 5}, []

    check(f, r(3), min_graphs=1)


class LoggingMeta(type):
    # Logs every attribute read on its classes through the attribute protocol.
    reads = []

    def __getattribute__(cls, name):
        LoggingMeta.reads.append(name)
        return super().__getattribute__(name)


class MetaBag(metaclass=LoggingMeta):
    def __len__(self):
        return 2

    def __contains__(self, k):
        return k == 1

    def __getitem__(self, k):
        return k * 3

    def scale(self, x):
        return x * 2


def test_special_method_guards_run_no_metaclass_getattribute():
    # Python finds len(b)'s __len__ and b.scale on the class's MRO without the
    # metaclass; the guards that compare them read them the same way (was an
    # attribute read of type(b), logging '__len__', ... on every call).
    def f(x, b):
        return b.scale(x) + len(b) + (1 in b) + b[2]

    jf = jit(f, device="cpu")
    b = MetaBag()
    for _ in range(3):
        x = torch.randn(3)
        LoggingMeta.reads.clear()
        expected = f(x, b)
        eager_reads = list(LoggingMeta.reads)
        LoggingMeta.reads.clear()
        assert torch.equal(jf(x, b), expected)
        assert LoggingMeta.reads == eager_reads == []
    assert counters()["recompiles"] == 0
