"""Instances of dict subclasses made while tracing (Note [Dict subclasses] in
TranslateDictSubclass.cpp): the storage is the modelled dict, the class's own
Python methods (`__init__`, `__getattr__`, `__getitem__`, `__setitem__`, new
methods, properties) run inlined, and an instance that is returned is rebuilt
as the same class with the same items. Classes whose other overrides the model
cannot run (here: `keys`, `__missing__`) still break and stay eager-equal."""

import torch

from harness import check, r
from xacc.jit import counters, jit


class Record(dict):
    def __getattr__(self, name):
        return self[name]


class Scaled(dict):
    def __init__(self, scale, **kw):
        super_kw = {k: v * scale for k, v in kw.items()}
        for k, v in super_kw.items():
            self[k] = v
        self["scale"] = scale

    def total(self):
        return sum(v for k, v in self.items() if k != "scale")

    @property
    def first(self):
        return next(iter(self.values()))


class Doubling(dict):
    def __setitem__(self, key, value):
        super().__setitem__(key, value * 2)

    def __getitem__(self, key):
        return super().__getitem__(key) + 1


class OwnKeys(dict):
    def keys(self):
        return ["a"]


class Missing(dict):
    def __missing__(self, key):
        return 0


def test_getattr_reading_keys_is_one_graph():
    def f(x):
        rec = Record(logits=x, loss=x.sum())
        return rec.logits * rec.loss

    check(f, r(4, 4), graphs=1, breaks=0)


def test_returned_instance_keeps_its_class_and_items():
    def f(x):
        rec = Record({"a": x}, b=x * 2)
        rec["c"] = rec.a + rec.b
        return rec, len(rec), "b" in rec, list(rec)

    jf = jit(f)
    for k in range(2):
        x = torch.randn(3)
        got, want = jf(x), f(x)
        assert type(got[0]) is Record and list(got[0]) == list(want[0])
        for key in want[0]:
            assert torch.allclose(got[0][key], want[0][key])
        assert got[1:] == want[1:]
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1, c


def test_own_init_methods_and_properties_run_inlined():
    def f(x):
        s = Scaled(3, a=x, b=x + 1)
        return s.total() * s.first, s["scale"]

    check(f, r(5), graphs=1, breaks=0)


def test_own_getitem_and_setitem_through_super():
    def f(x):
        d = Doubling()
        d["t"] = x
        return d["t"], dict.__getitem__(d, "t")

    check(f, r(2, 3))


def test_a_replaced_method_is_seen():
    def f(x):
        return Record(v=x).v * 2

    jf = jit(f)
    x = torch.randn(3)
    assert torch.allclose(jf(x), f(x))
    old = Record.__getattr__
    Record.__getattr__ = lambda self, name: self[name] + 100
    try:
        want = f(x)
        assert torch.allclose(want, (x + 100) * 2)
        assert torch.allclose(jf(x), want)
    finally:
        Record.__getattr__ = old
    assert torch.allclose(jf(x), f(x))


def test_unmodelled_overrides_still_break_and_are_exact():
    def f(x):
        k = OwnKeys(a=x, b=x * 2)
        m = Missing(a=x)
        return list(k.keys()), k["b"], m["zz"], m["a"]

    c = check(f, r(3))
    assert c["breaks"] >= 1, c


def test_fromkeys_of_an_instance_makes_the_subclass():
    def f(x):
        made = Record(a=x).fromkeys(["p", "q"], x * 2)
        return made, type(made).__name__

    jf = jit(f)
    x = torch.randn(3)
    got, want = jf(x), f(x)
    assert type(got[0]) is Record and got[1] == want[1] == "Record"
    assert list(got[0]) == list(want[0]) and torch.allclose(got[0].p, want[0].p)
