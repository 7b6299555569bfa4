"""The C++ runner of training graphs (Note [Native training runner] in
csrc/python/training_runner.cpp): the compiled forward inside a libtorch custom
autograd function whose node runs the compiled backward with no Python. Each
test compares with eager PyTorch; the Python runner (training.NATIVE_RUNNER =
False, the autograd.Function kept for graphs with non-tensor results) is the
second reference where both must agree bit for bit."""

from __future__ import annotations

import threading

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import xacc
from xacc._C import capture as C
from xacc._src.capture import training
from xacc.jit import counters, jit

D = torch.float64


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 3))


def _train(model, step, n=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(n):
        x, y = torch.randn(8, 6, generator=g), torch.randn(8, 3, generator=g)
        opt.zero_grad()
        loss = F.mse_loss(step(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.fixture
def runners(monkeypatch):
    """Every runner training.build makes, in order."""
    made = []
    real = training._make_runner

    def recording(*a, **k):
        r = real(*a, **k)
        made.append(r)
        return r

    monkeypatch.setattr(training, "_make_runner", recording)
    return made


def test_training_graphs_run_through_the_native_runner(runners):
    eager, mine = _mlp(), _mlp()
    want = _train(eager, eager)
    got = _train(mine, jit(mine))
    assert got == want
    for p, q in zip(mine.parameters(), eager.parameters()):
        assert torch.equal(p, q)
    assert len(runners) == 1 and isinstance(runners[0], C.TrainingRunner)
    assert runners[0].forward_graph.num_nodes > 0 and runners[0].backward_graph.num_nodes > 0
    c = counters()
    assert c["compiled_forward_runs"] == 3 and c["compiled_backward_runs"] == 3, c
    assert c["python_runners"] == 0


def test_native_and_python_runners_give_the_same_bits(monkeypatch, runners):
    got = {}
    for native in (True, False):
        monkeypatch.setattr(training, "NATIVE_RUNNER", native)
        xacc._src.jit.reset()
        m = _mlp()
        got[native] = (_train(m, jit(m)), [p.detach().clone() for p in m.parameters()])
    assert isinstance(runners[0], C.TrainingRunner) and not isinstance(runners[1], C.TrainingRunner)
    assert counters()["python_runners"] == 1
    assert got[True][0] == got[False][0]
    for a, b in zip(got[True][1], got[False][1]):
        assert torch.equal(a, b)


def test_non_contiguous_and_missing_cotangents():
    # out.t() hands the backward a transposed (non-contiguous) cotangent for y;
    # z is never used, so its cotangent is missing and zero-filled.
    def f(x, w):
        y = (x @ w).sin()
        z = x.exp()
        return y, z

    x, w = torch.randn(4, 5, dtype=D), torch.randn(5, 3, dtype=D)
    c = torch.randn(3, 4, dtype=D)
    grads = []
    for fn in (f, jit(f)):
        xs, ws = x.clone().requires_grad_(), w.clone().requires_grad_()
        y, z = fn(xs, ws)
        (y.t() * c).sum().backward()
        grads.append((xs.grad, ws.grad))
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=1e-12)
    assert counters()["compiled_backward_runs"] == 1


def test_non_differentiable_results_match_eager():
    def f(x):
        y = x.sin() * 2
        return y, y.argmax(-1), (y > 0)

    x = torch.randn(3, 4, requires_grad=True)
    want, got = f(x), jit(f)(x)
    for a, b in zip(got, want):
        assert a.requires_grad == b.requires_grad and a.dtype == b.dtype
        assert torch.equal(a.detach(), b.detach())
    assert got[0].grad_fn is not None and got[1].grad_fn is None


def test_backward_from_another_thread():
    # The node runs on the thread that calls backward, which holds no GIL there.
    m = _mlp()
    j = jit(m)
    x = torch.randn(8, 6)
    loss = j(x).pow(2).sum()
    errors = []

    def run():
        try:
            loss.backward()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join(60)
    assert not t.is_alive() and not errors, errors
    ref = _mlp()
    ref(x).pow(2).sum().backward()
    for p, q in zip(m.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=0, atol=0)
    assert counters()["compiled_backward_runs"] == 1


def test_graph_tap_sees_the_backward():
    # The tap (export, xacc.debug.compare) takes the GIL on the engine's thread.
    seen = []
    f = jit(lambda x, w: (x @ w).tanh().sum())
    x, w = torch.randn(3, 4, requires_grad=True), torch.randn(4, 2, requires_grad=True)
    out = f(x, w)
    C.set_graph_tap(lambda gid, what, vals: seen.append((gid, what, len(vals))))
    try:
        out.backward()
    finally:
        C.set_graph_tap(None)
    assert [w for _, w, _ in seen] == ["in", "out"], seen
    assert seen[1][2] == 2  # one gradient per input


@pytest.mark.parametrize("native", [True, False])
def test_second_order_through_residuals_is_refused_not_wrong(monkeypatch, native):
    # create_graph=True with cotangents that do not require grad: the gradient
    # still depends on x through the residuals (sin x, cos x), so using it in a
    # second backward must raise (the compiled backward records no history),
    # not silently drop that dependence, which both runners once did.
    monkeypatch.setattr(training, "NATIVE_RUNNER", native)
    f = jit(lambda x: (x.sin() ** 2).sum())
    x = torch.randn(3, dtype=D, requires_grad=True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="differentiate twice"):
        (g * x).sum().backward()


def test_grad_mode_off_runs_the_forward_graph_only(monkeypatch):
    calls = []
    real = training._make_runner

    def recording(*a, **k):
        r = real(*a, **k)
        assert isinstance(r, C.TrainingRunner)

        def run(*inputs):
            calls.append((r, inputs))
            return r(*inputs)
        return run

    monkeypatch.setattr(training, "_make_runner", recording)
    m = _mlp()
    x = torch.randn(8, 6)
    out = jit(m)(x)
    (r, inputs), = calls
    with torch.no_grad():
        again = r(*inputs)
    assert isinstance(again, tuple) and len(again) == 1 and not again[0].requires_grad
    assert torch.equal(again[0], out.detach())
    with pytest.raises(TypeError, match="takes %d inputs, got 0" % len(inputs)):
        r()
