"""Class statements inside traced code (Note [Local classes] in
TranslateFreshClasses.cpp): a class whose body only fills its namespace
(constants, methods, super() cells) is made at capture time and used without a
break; a body that could run other code, a metaclass or a base with
__init_subclass__ still breaks; a class that escapes is eager's, a new class
per call."""

import torch

from harness import check, r
from xacc.jit import counters, jit


def local_class(x):
    class Local:
        """doc"""
        scale = 3

        def __init__(self, v):
            self.v = v

        def get(self):
            return self.v * self.scale + 1

    obj = Local(x)
    return obj.get(), Local.__doc__, Local.__qualname__, Local.__module__, isinstance(obj, Local)


class Base:
    def get(self):
        return 2


def subclass_with_super(x):
    class Child(Base):
        def get(self):
            return super().get() + 1

    return x * Child().get()


def test_local_class_used_inside_is_one_graph():
    check(local_class, r(3), graphs=1, breaks=0)


def test_local_subclass_with_super_is_one_graph():
    check(subclass_with_super, r(3), graphs=1, breaks=0)


class Meta(type):
    pass


class Hooked:
    def __init_subclass__(cls):
        cls.tag = 5


def decorated_method(x):
    class D:
        @staticmethod
        def k():
            return 2

    return x * D.k()


def with_metaclass(x):
    class M(metaclass=Meta):
        pass

    return x + 1, type(M) is Meta


def with_init_subclass(x):
    class H(Hooked):
        pass

    return x + H.tag


def test_class_bodies_that_could_run_code_still_break_and_match_eager():
    for fn in (decorated_method, with_metaclass, with_init_subclass):
        check(fn, r(3), max_recompiles=8)
        assert counters()["breaks"] >= 1, fn.__name__


def escapes(x):
    class E:
        def __init__(self, v):
            self.v = v

    return E(x + 1), E


def test_an_escaping_class_is_a_new_class_per_call_as_in_eager():
    jf = jit(escapes)
    x = torch.randn(3)
    o1, c1 = jf(x)
    o2, c2 = jf(x)
    assert type(o1) is c1 and type(o2) is c2 and c1 is not c2
    assert c1.__qualname__ == "escapes.<locals>.E" and torch.equal(o1.v, x + 1)


def test_local_class_collected_between_calls_does_not_recompile():
    # Nothing guards the template (Note [Local classes]): its namespace reads
    # are fixed by the class body. Before, `K[0].get` (a weak proxy of the
    # template) was guarded and failed once the template was collected.
    import gc

    f = jit(local_class)
    x = torch.randn(3)
    before = dict(counters())
    first = f(x)
    gc.collect()
    second = f(x)
    c = {k: counters()[k] - before.get(k, 0) for k in ("graphs", "recompiles", "breaks")}
    assert c == {"graphs": 1, "recompiles": 0, "breaks": 0}, c
    assert torch.equal(first[0], second[0]) and first[1:] == second[1:]
