"""`obj.__dict__` is one dict per object (Note [Instance dicts]): two reads of it
on an object made in the frame are the same object to `is`, also when one read
was stored on the object itself; deepcopy's memo (which finds copies by `is`)
then terminates on an object whose state reaches its own dict."""

import copy

import torch
from transformers.modeling_outputs import BaseModelOutput

from harness import check, r
from xacc.jit import counters, jit


class Plain:
    def __init__(self, v):
        self.v = v


def test_dict_read_twice_is_the_same_object():
    def f(x):
        a, b = Plain(1), Plain(2)
        return x + 1, a.__dict__ is a.__dict__, a.__dict__ is not b.__dict__, vars(a) is a.__dict__

    check(f, r(3), graphs=1, breaks=0)


def test_dict_stored_on_its_object_is_still_its_dict():
    # A silently wrong value before: `a.own is a.__dict__` was False (1 graph, 0 breaks).
    def f(x):
        a = Plain(1)
        a.own = a.__dict__
        return x + 1, a.own is a.__dict__, a.own is vars(a)

    check(f, r(3), graphs=1)


def test_deepcopy_of_object_whose_state_reaches_its_dict():
    def f(x):
        a = Plain(x)
        a.own = a.__dict__
        b = copy.deepcopy(a)
        return b.v * 2, b.own is b.__dict__, b.own is not a.own

    check(f, lambda i: (torch.randn(3),), min_graphs=0)


def test_cyclic_containers_from_outside_break_and_match_eager():
    # Wrapping a list/dict/model output that contains itself recursed without end (a hang).
    # (The harness's clone does not copy cycles, so the values are compared here.)
    def f(x, box):
        return x + box[0], len(box), box[1] is box

    def g(x, d):
        return x * d["k"], d["self"] is d

    def h(x, out):  # a transformers ModelOutput (an OrderedDict) holding itself
        return x - out.last_hidden_state, out.hidden_states is out

    jf, jg, jh = jit(f), jit(g), jit(h)
    for _ in range(2):
        x = torch.randn(3)
        box = [torch.randn(3)]
        box.append(box)
        want, got = f(x, box), jf(x, box)
        assert torch.equal(want[0], got[0]) and want[1:] == got[1:]
        d = {"k": 2.0}
        d["self"] = d
        want, got = g(x, d), jg(x, d)
        assert torch.equal(want[0], got[0]) and want[1:] == got[1:]
        out = BaseModelOutput(last_hidden_state=torch.randn(3))
        out["hidden_states"] = out
        want, got = h(x, out), jh(x, out)
        assert torch.equal(want[0], got[0]) and want[1:] == got[1:]
    assert counters()["internal_errors"] == 0
