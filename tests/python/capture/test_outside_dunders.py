"""Note [Dunders of outside objects] (TranslateValues.cpp): `obj[k]` and
`k in obj` on an object read from outside the frame inline its class's Python
`__getitem__`/`__contains__`; the function the class gives is guarded by
identity, so replacing it on the class after the first call recompiles. Before
the guard, the graph kept the old method's answer: a silently wrong value."""

import torch

import xacc


class Bag:
    def __getitem__(self, k):
        return k * 2

    def __contains__(self, k):
        return k == 1


BAG = Bag()


def read_bag(x):
    return x + BAG[3], 1 in BAG


def test_methods_replaced_on_the_class_are_seen():
    f = xacc.jit(read_bag)
    x = torch.zeros(2)
    got = f(x)
    assert torch.equal(got[0], read_bag(x)[0]) and got[1] is True
    old = Bag.__getitem__, Bag.__contains__
    try:
        Bag.__getitem__ = lambda self, k: k * 10
        Bag.__contains__ = lambda self, k: False
        want = read_bag(x)
        got = f(x)
        assert torch.equal(got[0], want[0]) and got[1] is want[1] is False, (got, want)
    finally:
        Bag.__getitem__, Bag.__contains__ = old
