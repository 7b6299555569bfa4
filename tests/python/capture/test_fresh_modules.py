"""Modules built inside traced code (Note [Fresh modules] in
TranslateFreshModules.cpp): container modules of stateless torch.nn modules
and nn.Module subclasses that only add a forward (transformers' ACT2FN
activations) are captured without a break, are a new object per call where
they escape, keep the identity of their children, and anything whose
construction could run other code (its own __init__, random numbers,
registration hooks, a data descriptor) still breaks and matches eager."""

import pytest
import torch
import torch.nn as nn

from harness import check, r
from xacc.jit import counters, jit


class SiLUOnly(nn.Module):
    """Like transformers' SiLUActivation: nn.Module's constructor, a forward of its own."""

    def forward(self, x):
        return nn.functional.silu(x)


class Registry(dict):
    """Like transformers' ClassInstantier: each lookup builds a new module."""

    def __getitem__(self, key):
        return super().__getitem__(key)()


ACTS = Registry(silu=SiLUOnly, tanh=nn.Tanh)


def module_list(x):
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
    for layer in layers:
        x = layer(x)
    return x


def sequential(x):
    return nn.Sequential(nn.ReLU(), nn.Dropout(p=0.0), nn.Softplus())(x)


def module_dict(x):
    acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
    return acts["tanh"](x) + acts.relu(x)


def subclass_forward(x):
    return SiLUOnly()(x) + ACTS["silu"](x) * ACTS["tanh"](x)


def nested(x):
    inner = nn.Sequential(nn.Tanh(), nn.ReLU())
    return nn.Sequential(inner, nn.ModuleList([nn.Sigmoid()])[0], nn.Softmax(dim=-1))(x), inner[0].training


@pytest.mark.parametrize("fn", [module_list, sequential, module_dict, subclass_forward, nested])
def test_built_inside_is_one_graph(fn):
    check(fn, r(3, 10), graphs=1, breaks=0)


def test_returned_container_is_new_per_call_and_shares_its_children():
    def f(x):
        a = nn.ReLU()
        lst = [a, nn.Tanh()]
        m = nn.Sequential(*lst)
        ml = nn.ModuleList(lst)
        lst.append(nn.Sigmoid())  # after the constructors: not a child of either
        return m(x), m, ml, a, lst

    check(f, r(4), graphs=1, breaks=0)
    jf = jit(f)
    _, m, ml, a, lst = jf(torch.randn(4))
    _, m2, _, a2, _ = jf(torch.randn(4))
    assert type(m) is nn.Sequential and type(ml) is nn.ModuleList and len(m) == 2 and len(ml) == 2
    assert m[0] is a and ml[0] is a and m[1] is ml[1] and lst[0] is a and len(lst) == 3
    assert m is not m2 and a is not a2
    assert counters()["breaks"] == 0


def test_subclass_forward_replaced_on_the_class_is_called():
    class Act(nn.Module):
        def forward(self, x):
            return x + 1

    def f(x):
        return Act()(x)

    jf = jit(f)
    x = torch.randn(3)
    assert torch.equal(jf(x), x + 1) and counters()["breaks"] == 0
    Act.forward = lambda self, x: x * 3
    assert torch.equal(jf(x), x * 3)


def test_registration_hook_added_later_runs_as_in_eager():
    seen = []

    def f(x):
        return nn.Sequential(nn.ReLU(), nn.Tanh())(x)

    jf = jit(f)
    x = torch.randn(3)
    assert torch.equal(jf(x), f(x)) and counters()["breaks"] == 0
    h = torch.nn.modules.module.register_module_module_registration_hook(
        lambda mod, name, sub: seen.append(name))
    try:
        f(x)
        want = list(seen)
        seen.clear()
        assert torch.equal(jf(x), f(x))
        assert seen[: len(want)] == want and want == ["0", "1"]
    finally:
        h.remove()


class OwnInit(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = float(torch.rand(()))  # draws a random number

    def forward(self, x):
        return x * self.scale


class Logged(nn.Module):
    log = []

    @property
    def training(self):
        return self.__dict__.get("_t", True)

    @training.setter
    def training(self, v):  # reached by nn.Module.__init__'s super().__setattr__
        Logged.log.append(v)
        self.__dict__["_t"] = v

    def forward(self, x):
        return x - 1


class LoggedLinear(nn.Linear):
    def reset_parameters(self):  # called by nn.Linear.__init__
        Logged.log.append("reset")
        super().reset_parameters()


@pytest.mark.parametrize("cls", [OwnInit, Logged, nn.Linear, LoggedLinear])
def test_construction_that_runs_other_code_breaks_and_matches_eager(cls):
    def f(x):
        m = cls(3, 3) if issubclass(cls, nn.Linear) else cls()
        return m(x), torch.rand(2)  # the generator's state after construction shows

    jf = jit(f)
    x = torch.randn(2, 3)
    for _ in range(3):
        Logged.log.clear()
        torch.manual_seed(0)
        want = f(x)
        want_log = list(Logged.log)
        Logged.log.clear()
        torch.manual_seed(0)
        got = jf(x)
        assert Logged.log == want_log == {Logged: [True], LoggedLinear: ["reset"]}.get(cls, [])
        assert all(torch.allclose(a, b) for a, b in zip(want, got))
    c = counters()
    assert c["breaks"] >= 1 and c["internal_errors"] == 0


def test_container_of_an_existing_module_holds_that_module():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            m = nn.Sequential(self.lin, nn.Tanh())
            return m(x), m

    net = Net()
    jn = jit(net)
    x = torch.randn(2, 4)
    out, m = jn(x)
    assert torch.allclose(out, torch.tanh(net.lin(x))) and m[0] is net.lin and type(m[1]) is nn.Tanh
    assert counters()["breaks"] == 0
    with torch.no_grad():
        net.lin.weight.mul_(2)  # the child is read through its source: the new weight is used
    out2, m2 = jn(x)
    assert torch.allclose(out2, torch.tanh(net.lin(x))) and m2 is not m and m2[0] is net.lin
