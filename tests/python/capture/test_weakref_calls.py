"""Calling a weakref.ref read from a module or closure (Note [Weakref calls]):
`ref()` is its referent while that lives and None once it died, read again
through its own source at every call. torch.nn.RNNBase._weights_have_changed
compares `ref() is not weight` for each flat weight (encodec's LSTM, issue #18):
that call broke the frame (GB002 weakref.ReferenceType) before."""

import gc
import weakref

import pytest
import torch

from harness import check, compare_call, counters, r
from xacc.jit import jit


class WeightRefs(torch.nn.Module):
    """The pattern of RNNBase._weights_have_changed over its own parameters."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4))
        self._refs = [weakref.ref(self.w), None]
        self._names = ["w", "missing"]

    def changed(self):
        for ref, name in zip(self._refs, self._names, strict=True):
            weight = getattr(self, name) if hasattr(self, name) else None
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def forward(self, x):
        if self.changed():
            return x - 1
        return x * self.w


def test_weakref_to_a_parameter_is_captured():
    m = WeightRefs()
    check(m, r(4), graphs=1, breaks=0)


def test_replaced_parameter_takes_the_other_branch():
    # The weakref still points at the old parameter, which a local keeps alive:
    # `ref() is not weight` is now True, as in eager.
    m = WeightRefs()
    jm = jit(m)
    x = torch.randn(4)
    compare_call(m, jm, (x,))
    old = m.w
    m.w = torch.nn.Parameter(torch.randn(4))
    out = compare_call(m, jm, (x,))
    assert torch.equal(out, x - 1)
    del old


class HeldRef(torch.nn.Module):
    def __init__(self, t):
        super().__init__()
        self.ref = weakref.ref(t)

    def forward(self, x):
        t = self.ref()
        if t is None:
            return x + 1
        return x * t


def test_referent_that_dies_is_none_at_the_next_call():
    t = torch.randn(4)
    m = HeldRef(t)
    jm = jit(m)
    x = torch.randn(4)
    assert torch.equal(compare_call(m, jm, (x,)), x * t)
    del t
    gc.collect()
    assert torch.equal(compare_call(m, jm, (x,)), x + 1)
    assert counters()["breaks"] == 0


def test_referent_identity_is_kept():
    t = torch.randn(3)
    ref = weakref.ref(t)

    def f(x):
        return ref(), x + 1

    got = jit(f)(torch.randn(3))
    assert got[0] is t
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1, c


class Sub(weakref.ref):
    def __call__(self):
        return None


def test_weakref_subclass_overriding_call_is_not_modelled_as_ref():
    t = torch.randn(3)
    ref = Sub(t)

    def f(x):
        y = ref()
        return x + 1 if y is None else x * y

    out = jit(f)(torch.randn(3))
    x = torch.randn(3)
    assert torch.equal(jit(f)(x), x + 1)
    del out


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU])
def test_rnn_weights_have_changed_does_not_break(cls):
    m = cls(4, 5, batch_first=True).eval()
    with torch.no_grad():
        check(m, r(2, 3, 4), graphs=1, breaks=0)
