"""Module hooks are modelled, not broken on (issue #18; Note [Module hooks] in
TranslateModuleHooks.cpp): nn.Module.__call__'s forward pre-hooks and forward
hooks, torch's global ones first, each dict in its own order, with kwargs
variants and results that replace args or the output, are inlined into the
graph; a hook registered, prepended or removed later fails a guard; backward
and `always_call` hooks keep the call native (GB012). Each case compares with
eager on values and on what the hooks saw (the order they ran in)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from xacc.jit import counters, jit


def _pair():
    """Two equal Linear modules: one for eager, one for xacc."""
    torch.manual_seed(0)
    a, b = nn.Linear(3, 3), nn.Linear(3, 3)
    b.load_state_dict(a.state_dict())
    return a, b


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x, scale=1.0):
        return self.lin(x) * scale


def _log_hooks(log):
    """Hooks that record their order into the tensor `log` (_trace)."""
    def pre(mod, args):
        log.mul_(10).add_(1)
        return (args[0] + 1,)

    def pre_kw(mod, args, kwargs):
        log.mul_(10).add_(2)
        return args, {**kwargs, "scale": 3.0}

    def pre_none(mod, args):
        log.mul_(10).add_(3)  # None: args unchanged

    def post(mod, args, out):
        log.mul_(10).add_(4)
        return out * 2 + args[0].sum()

    def post_kw(mod, args, kwargs, out):
        log.mul_(10).add_(5)
        return out - kwargs["scale"]

    def post_none(mod, args, out):
        log.mul_(10).add_(6)

    return pre, pre_kw, pre_none, post, post_kw, post_none


def _register(m, log):  # order run: pre_none, pre, pre_kw, post_none, post, post_kw
    pre, pre_kw, pre_none, post, post_kw, post_none = _log_hooks(log)
    return [m.register_forward_pre_hook(pre), m.register_forward_pre_hook(pre_kw, with_kwargs=True),
            m.register_forward_pre_hook(pre_none, prepend=True), m.register_forward_hook(post),
            m.register_forward_hook(post_kw, with_kwargs=True), m.register_forward_hook(post_none, prepend=True)]


def _trace():
    """What the hooks saw: each multiplies it by 10 and adds its number (a tensor:
    no guard on its value, so the graph is reused)."""
    return torch.zeros((), dtype=torch.float64)


def test_pre_and_forward_hooks_are_captured_in_order():
    torch.manual_seed(0)
    me, mj = Model(), Model()
    mj.load_state_dict(me.state_dict())
    te, tj = _trace(), _trace()
    _register(me, te)
    _register(mj, tj)
    jm = jit(lambda t: mj(t, scale=0.5))  # the hooked call inside the captured frame
    xs = [torch.randn(2, 3) for _ in range(3)]
    expected = []
    for x in xs:  # eager first: the hooks' code then runs under capture only from jm
        expected.append((me(x, scale=0.5), te.item()))
        te.zero_()
    for x, (e, seen) in zip(xs, expected):
        assert torch.allclose(e, jm(x), atol=1e-6)
        assert tj.item() == seen == 312645  # prepended hooks first, pre-hooks before forward hooks
        tj.zero_()
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1 and c["recompiles"] == 0, c


def test_hooks_on_a_submodule_inside_the_graph():
    torch.manual_seed(0)
    me, mj = Model(), Model()
    mj.load_state_dict(me.state_dict())
    te, tj = _trace(), _trace()
    for lin, t in ((me.lin, te), (mj.lin, tj)):
        pre, _, pre_none, post, _, post_none = _log_hooks(t)
        lin.register_forward_pre_hook(pre)
        lin.register_forward_pre_hook(pre_none)
        lin.register_forward_hook(post_none)
        lin.register_forward_hook(post, prepend=True)
    jm = jit(lambda t: mj(t))
    xs = [torch.randn(2, 3) for _ in range(2)]
    expected = []
    for x in xs:
        expected.append((me(x), te.item()))
        te.zero_()
    for x, (e, seen) in zip(xs, expected):
        assert torch.allclose(e, jm(x), atol=1e-6)
        assert tj.item() == seen == 1346  # post prepended before post_none
        tj.zero_()
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1 and c["recompiles"] == 0, c


def test_hook_added_and_removed_after_the_first_call():
    """Guards on each hook dict's keys: a hook registered later (appended or
    prepended) or one removed recompiles, and the new graph runs the hooks as
    they are then."""
    le, lj = _pair()
    loge, logj = [], []

    def f(lin, log):
        def run(x):
            return lin(x).relu()
        return run

    fe, fj = f(le, loge), jit(f(lj, logj))
    first = {"e": None, "j": None}
    first["e"] = le.register_forward_hook(lambda m, a, o: loge.append("first") or o + 1)
    first["j"] = lj.register_forward_hook(lambda m, a, o: logj.append("first") or o + 1)
    x = torch.randn(2, 3)
    assert torch.allclose(fe(x), fj(x))
    # a second hook, prepended: runs before the first one
    he = le.register_forward_hook(lambda m, a, o: loge.append("second") or o * 3, prepend=True)
    hj = lj.register_forward_hook(lambda m, a, o: logj.append("second") or o * 3, prepend=True)
    assert torch.allclose(fe(x), fj(x))
    assert logj == loge == ["first", "second", "first"], (loge, logj)
    first["e"].remove()
    first["j"].remove()
    assert torch.allclose(fe(x), fj(x))
    he.remove()
    hj.remove()
    loge.clear()
    logj.clear()
    assert torch.allclose(fe(x), fj(x))
    assert loge == logj == []
    assert counters()["breaks"] == 0, counters()


def test_global_hooks_run_before_the_modules_own():
    le, lj = _pair()
    log = []
    own = [lin.register_forward_hook(lambda m, a, o: log.append("own") or o + 1) for lin in (le, lj)]
    glob = nn.modules.module.register_module_forward_hook(lambda m, a, o: log.append("global") or o * 2)
    try:
        x = torch.randn(2, 3)
        e = le(x)
        n = len(log)
        g = jit(lambda t: lj(t))(x)
        assert torch.allclose(e, g)
        assert log[n:] == log[:n] == ["global", "own"], log
    finally:
        glob.remove()
        for h in own:
            h.remove()
    assert counters()["breaks"] == 0, counters()


def test_pre_hook_mutates_kwargs_in_place():
    torch.manual_seed(0)
    me, mj = Model(), Model()
    mj.load_state_dict(me.state_dict())

    def pre(mod, args, kwargs):
        kwargs["scale"] = 4.0  # returns None: forward gets the changed dict

    for m in (me, mj):
        m.register_forward_pre_hook(pre, with_kwargs=True)
    x = torch.randn(2, 3)
    assert torch.allclose(me(x, scale=1.0), jit(lambda t: mj(t, scale=1.0))(x))
    assert counters()["breaks"] == 0, counters()


@pytest.mark.parametrize("kind", ["backward", "always_call"])
def test_unmodelled_hooks_run_natively(kind):
    le, lj = _pair()
    log = []
    for lin in (le, lj):
        if kind == "backward":
            lin.register_full_backward_hook(lambda m, gi, go: log.append("bwd"))
        else:
            lin.register_forward_hook(lambda m, a, o: log.append("always") or o + 1, always_call=True)
    x = torch.randn(2, 3, requires_grad=kind == "backward")
    e = le(x)
    g = jit(lambda t: lj(t) * 1)(x)
    assert torch.allclose(e, g)
    if kind == "backward":
        e.sum().backward()
        g.sum().backward()
        assert log == ["bwd", "bwd"]
    else:
        assert log == ["always", "always"]
    assert counters()["breaks"] >= 1  # GB012: the call ran natively, its hooks with it
