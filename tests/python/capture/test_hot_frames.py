"""Note [Hot frames] (issue 22): with hot_calls=N (python -m xjit uses 2) a
frame is translated at its N-th call and runs as plain Python before that;
constructors and frames without tensor or module arguments are never
translated; a frame whose translation gave no graph is not translated again.
Results are those of plain Python throughout. Real hook, real translator."""

import torch
import torch.nn as nn

import xacc
from xacc._src.capture import convert, hotness


def _events(name):
    return [ev for ev in convert.EVENTS if ev.function.startswith(name)]


def test_translated_at_the_second_call_not_the_first():
    def f(x):
        return torch.relu(x * 2 + 1).sum(dim=0)

    g = xacc.jit(f, hot_calls=2)
    x = torch.randn(4, 3)
    assert torch.equal(g(x), torch.relu(x * 2 + 1).sum(dim=0))
    assert _events("test_translated_at_the_second_call_not_the_first.<locals>.f") == []
    cold = [c for c in hotness.LEFT_ALONE.values() if c.function.endswith("<locals>.f")]
    assert len(cold) == 1 and cold[0].calls == 1 and cold[0].reason == hotness.FIRST_CALLS
    for _ in range(3):
        x = torch.randn(4, 3)
        assert torch.equal(g(x), torch.relu(x * 2 + 1).sum(dim=0))
    evs = _events("test_translated_at_the_second_call_not_the_first.<locals>.f")
    assert [(ev.outcome, ev.calls) for ev in evs] == [("graph", 2)]
    assert not any(c.function.endswith("<locals>.f") for c in hotness.LEFT_ALONE.values())


def test_default_still_translates_on_the_first_call():
    def h(x):
        return x.cos() + 1

    xacc.jit(h)(torch.ones(2))
    assert [(ev.outcome, ev.calls) for ev in _events("test_default_still_translates_on_the_first_call")] == \
        [("graph", 1)]


class Scale(nn.Module):
    def __init__(self, x):
        super().__init__()
        self.w = nn.Parameter(x.clone())
        self.n = x.numel()


def test_constructors_are_left_alone_for_good():
    def make(x):
        m = Scale(x)
        return m.w * 3

    g = xacc.jit(make, hot_calls=2)
    for _ in range(4):
        x = torch.randn(3)
        assert torch.equal(g(x), x * 3)
    assert _events("Scale.__init__") == []
    rec = [c for c in hotness.LEFT_ALONE.values() if c.function == "Scale.__init__"]
    assert len(rec) == 1 and rec[0].reason == hotness.CONSTRUCTOR and rec[0].permanent


def test_frames_without_tensors_are_left_alone():
    def outer(x):
        return x + setup(3)

    def setup(n):
        return sum(i * i for i in range(n))

    g = xacc.jit(outer, hot_calls=2)
    for _ in range(3):
        assert torch.equal(g(torch.ones(2)), torch.ones(2) + 5)
    rec = [c for c in hotness.LEFT_ALONE.values() if c.function.endswith("<locals>.setup")]
    assert len(rec) == 1 and rec[0].reason == hotness.NO_TENSORS
    assert _events("test_frames_without_tensors_are_left_alone.<locals>.setup") == []


def test_a_frame_without_a_graph_is_not_translated_again():
    def same(x):
        return x

    g = xacc.jit(same, hot_calls=2)
    x = torch.ones(2)
    for _ in range(5):
        assert g(x) is x
    evs = _events("test_a_frame_without_a_graph_is_not_translated_again")
    assert [(ev.outcome, ev.calls) for ev in evs] == [("skip", 2)]


def test_hot_calls_is_checked():
    import pytest
    with pytest.raises(xacc.ConfigError):
        xacc.jit(lambda x: x, hot_calls=0)


def test_module_and_class_bodies_never_reach_the_callback():
    """Note [Unoptimized frames] (EvalFrameImpl.inc): code run by exec and
    class bodies, met while a hooked frame runs as plain Python, are marked
    skip by the hook itself: no call of the Python callback (a program that
    imports a large package after the hook is installed runs thousands)."""
    from xacc._C import capture as C

    sources = [compile(f"v = {i} * 2\nclass K{i}:\n    w = v + 1\n", f"<body {i}>", "exec") for i in range(40)]

    def f(x):
        spaces = []
        for src in sources:
            ns = {}
            exec(src, ns)
            spaces.append(ns)
        return x + sum(ns["v"] for ns in spaces), spaces

    g = xacc.jit(f, hot_calls=2)
    x = torch.ones(2)
    before = C.stats()["compiles"]
    out, spaces = g(x)  # the first call: plain Python (not hot yet)
    assert C.stats()["compiles"] - before <= 2, C.stats()["compiles"] - before  # f itself; not 80 bodies
    assert torch.equal(out, x + sum(i * 2 for i in range(40)))
    assert [ns[f"K{i}"].w for i, ns in enumerate(spaces)] == [i * 2 + 1 for i in range(40)]


def test_translation_runs_without_the_cyclic_collector(monkeypatch):
    """Note [Translation without cyclic GC] (convert.py): automatic collection
    is off while a frame is translated and on again after (when it was on)."""
    import gc

    seen = []
    inner = convert._compile_frame

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return inner(*a, **k)

    monkeypatch.setattr(convert, "_compile_frame", spy)
    assert gc.isenabled()
    g = xacc.jit(lambda x: torch.tanh(x) * 3)
    x = torch.randn(5)
    assert torch.equal(g(x), torch.tanh(x) * 3)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:  # a program that turned the collector off keeps it off
        h = xacc.jit(lambda x: torch.sigmoid(x) - 1)
        assert torch.equal(h(x), torch.sigmoid(x) - 1)
        assert seen == [False, False] and not gc.isenabled()
    finally:
        gc.enable()
