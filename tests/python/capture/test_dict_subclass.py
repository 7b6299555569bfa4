"""`super().__getitem__(key)` in a dict subclass's own __getitem__ (a registry
that instantiates what it stores, as transformers' ACT2FN does): dict's
__getitem__ reads the storage, each entry guarded through
`dict.__getitem__(obj, key)` (the subclass's __getitem__ is not run by the
guards); a later change to the storage is seen; a subclass with __missing__
is left to Python."""

from collections import OrderedDict

import torch
from torch import nn

from harness import check, r
from xacc.jit import counters, jit


class _Instantier(OrderedDict):
    def __getitem__(self, key):
        content = super().__getitem__(key)
        cls, kwargs = content if isinstance(content, tuple) else (content, {})
        return cls(**kwargs)


_ACTS = _Instantier({"relu": nn.ReLU, "leaky": (nn.LeakyReLU, {"negative_slope": 0.25}), "tanh": nn.Tanh})


def _act(x, name):
    return _ACTS[name](x)


def test_super_getitem_of_a_dict_subclass_is_one_graph():
    def f(x):
        return _act(x, "leaky") + _act(x * 2, "relu")

    check(f, r(3, 4), graphs=1, breaks=0)


def test_storage_change_after_the_first_call_is_seen():
    def f(x):
        return _act(x, "tanh") * 3

    jf = jit(f)
    x = torch.randn(5)
    assert torch.allclose(jf(x), f(x))
    dict.__setitem__(_ACTS, "tanh", nn.Sigmoid)
    try:
        want = f(x)
        assert torch.allclose(want, torch.sigmoid(x) * 3)
        assert torch.allclose(jf(x), want)
    finally:
        dict.__setitem__(_ACTS, "tanh", nn.Tanh)
    assert torch.allclose(jf(x), f(x))
    assert counters()["internal_errors"] == 0


class _Defaulting(dict):
    def __missing__(self, key):
        return nn.Identity

    def __getitem__(self, key):
        return super().__getitem__(key)()


_WITH_MISSING = _Defaulting({"relu": nn.ReLU})


def test_subclass_with_missing_keeps_python_semantics():
    def f(x):
        return _WITH_MISSING["relu"](x) + _WITH_MISSING["absent"](x)

    check(f, r(4), min_graphs=0)


def test_missing_key_raises_keyerror_as_in_python():
    def f(x):
        try:
            return _ACTS["nope"](x)
        except KeyError:
            return x - 1

    check(f, r(4), min_graphs=0)
