"""A module's forward replaced by a class decorator's closure (what
transformers' MoE `use_experts_implementation` does): the closure's cells
hold a registry object and the original forward. Called through the module,
the forward is read as `type(m).forward`, so the cell contents are read and
guarded through that source: a method of the registry object is traced, and a
later change to the registry is seen."""

import functools

import torch
from torch import nn

from harness import check, r
from xacc.jit import counters, jit


class _Registry:
    def __init__(self):
        self.table = {}

    def lookup(self, name, default):
        return self.table.get(name, default)


def _dispatching(registry):
    def deco(cls):
        original = cls.forward

        @functools.wraps(original)
        def forward(self, *args, **kwargs):
            impl = registry.lookup(self.impl, original)
            return impl(self, *args, **kwargs)

        cls.forward = forward
        return cls
    return deco


_REG = _Registry()


@_dispatching(_REG)
class _Experts(nn.Module):
    def __init__(self, impl: str):
        super().__init__()
        self.impl = impl
        self.w = nn.Parameter(torch.randn(4, 4), requires_grad=False)

    def forward(self, x):
        return x @ self.w


class _Block(nn.Module):
    def __init__(self, impl: str):
        super().__init__()
        self.experts = _Experts(impl)

    def forward(self, x):
        return self.experts(x).relu() + x


def test_forward_from_a_class_decorator_closure_is_one_graph():
    m = _Block("eager").eval()
    check(m, r(3, 4), graphs=1, breaks=0)


def test_registry_change_after_the_first_call_is_seen():
    reg_key = "twice"
    m = _Block(reg_key).eval()
    jm = jit(m)
    x = torch.randn(3, 4)
    _REG.table.pop(reg_key, None)
    try:
        assert torch.allclose(jm(x), m(x))
        _REG.table[reg_key] = lambda self, y: 2 * (y @ self.w)
        want = m(x)
        assert torch.allclose(jm(x), want)
        assert not torch.allclose(want, (x @ m.experts.w).relu() + x)
    finally:
        _REG.table.pop(reg_key, None)
    assert counters()["internal_errors"] == 0
