"""A value read from a dict of an object from outside the frame under an int
key (`cfg.table[0]`, id2label-style maps; deepcopy of such a dict) is guarded
by the source `...[0]`, which Source::item keeps as an index: the guard read
it as a sequence item, so it never held on a dict and every call recompiled,
then ran in Python (csrc/lib/capture/Guards.cpp). Compared with eager; the
recompiles are asserted (4 for the first case before the fix, 0 after)."""

import copy

import torch

from harness import check, r


class Table:
    def __init__(self):
        self.m = {0: [1.5], 1: [2.5], "k": 3}


OUT = Table()


def test_item_of_an_outside_dict_under_an_int_key():
    def f(x):
        return x * OUT.m[0][0] + OUT.m[1][0]

    check(f, r(3), graphs=1, breaks=0, max_recompiles=0)


def test_deepcopy_of_an_outside_dict_with_int_keys():
    def f(x):
        d = copy.deepcopy(OUT.m)
        d[0].append(4)
        return x * d[1][0], d, OUT.m

    check(f, r(3), graphs=1, breaks=0, max_recompiles=0)


def test_a_changed_entry_is_still_seen():
    table = {0: 2.0}

    def f(x):
        return x * table[0]

    from xacc.jit import jit
    g = jit(f)
    a = torch.randn(3)
    assert torch.equal(g(a), f(a))
    table[0] = 5.0
    assert torch.equal(g(a), f(a))
    del table[0]
    table[1] = 1.0
    try:
        f(a)
    except KeyError:
        pass
    else:
        raise AssertionError("eager should raise KeyError")
    try:
        g(a)
    except KeyError:
        pass
    else:
        raise AssertionError("the captured call should raise KeyError as eager")
