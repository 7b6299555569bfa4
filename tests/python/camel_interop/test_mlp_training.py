"""A Camel MLP forward pass inside a PyTorch training loop (issue 4): the
Camel function receives the torch tensors without copies, its tensor ops run
through the ATen dispatcher so autograd records them, and SGD on the Camel
model follows the same loss curve as the same model written in PyTorch (same
initialisation, same data). A second loop trains a model whose Camel forward
pass calls back into a Python nn.Module for its hidden layer.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
camel_lang = pytest.importorskip("camel_lang")
_C = pytest.importorskip("xacc._C")
if not hasattr(_C, "camel"):
    pytest.skip("xacc._C built without the Camel front end", allow_module_level=True)

HERE = Path(__file__).resolve().parent
CML = HERE / "cml"
STEPS = 25


@pytest.fixture(scope="module")
def mlp():
    return camel_lang.load(CML / "mlp.cml")


def data(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(32, 4, generator=g, dtype=torch.float64)
    y = (x[:, :1] * 0.7 - x[:, 1:2] * x[:, 2:3]).tanh()
    params = [torch.randn(4, 8, generator=g, dtype=torch.float64) * 0.5,
              torch.zeros(8, dtype=torch.float64),
              torch.randn(8, 1, generator=g, dtype=torch.float64) * 0.5,
              torch.zeros(1, dtype=torch.float64)]
    return x, y, params


def torch_forward(x, w1, b1, w2, b2):
    return torch.sigmoid(x @ w1 + b1) @ w2 + b2


def train(forward, loss_fn, params, x, y, lr=0.5):
    params = [p.clone().requires_grad_(True) for p in params]
    opt = torch.optim.SGD(params, lr=lr)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = loss_fn(forward(x, *params), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, params


def test_forward_matches_and_shares_storage(mlp) -> None:
    x, y, params = data()
    out = mlp.forward(x, *params)
    assert isinstance(out, torch.Tensor)
    torch.testing.assert_close(out, torch_forward(x, *params))
    # Zero copy on the way in and out.
    back = mlp.same(x)
    assert back.data_ptr() == x.data_ptr()
    back[0, 0] = 123.0
    assert x[0, 0].item() == 123.0
    sq = mlp.mse(x, torch.zeros_like(x))
    torch.testing.assert_close(sq, x * x)


def test_gradients_flow_through_camel(mlp) -> None:
    x, y, params = data(1)
    ps = [p.clone().requires_grad_(True) for p in params]
    mlp.forward(x, *ps).sum().backward()
    qs = [p.clone().requires_grad_(True) for p in params]
    torch_forward(x, *qs).sum().backward()
    for p, q in zip(ps, qs):
        assert p.grad is not None
        torch.testing.assert_close(p.grad, q.grad)


def test_training_loop_reaches_the_pytorch_loss(mlp) -> None:
    x, y, params = data(2)
    camel_losses, camel_params = train(mlp.forward, lambda p, t: mlp.mse(p, t).mean(), params, x, y)
    torch_losses, torch_params = train(torch_forward, lambda p, t: ((p - t) ** 2).mean(), params, x, y)
    assert camel_losses[-1] < camel_losses[0] * 0.8  # it learned
    torch.testing.assert_close(torch.tensor(camel_losses), torch.tensor(torch_losses))
    for p, q in zip(camel_params, torch_params):
        torch.testing.assert_close(p, q)


def test_camel_calls_back_into_an_nn_module(mlp) -> None:
    sys.path.insert(0, str(CML))
    try:
        import mlp_hidden
    finally:
        sys.path.remove(str(CML))
    x, y, params = data(3)
    torch.manual_seed(0)
    layer_c = torch.nn.Linear(4, 8, dtype=torch.float64)
    layer_t = torch.nn.Linear(4, 8, dtype=torch.float64)
    layer_t.load_state_dict(layer_c.state_dict())
    w2, b2 = params[2], params[3]

    def run(forward, layer):
        head = [w2.clone().requires_grad_(True), b2.clone().requires_grad_(True)]
        opt = torch.optim.SGD(list(layer.parameters()) + head, lr=0.5)
        losses = []
        for _ in range(STEPS):
            opt.zero_grad()
            loss = ((forward(x, *head) - y) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    mlp_hidden.set_layer(layer_c)
    camel_losses = run(mlp.forward_with, layer_c)
    torch_losses = run(lambda x_, w, b: torch.sigmoid(layer_t(x_)) @ w + b, layer_t)
    assert camel_losses[-1] < camel_losses[0]
    torch.testing.assert_close(torch.tensor(camel_losses), torch.tensor(torch_losses))
    torch.testing.assert_close(layer_c.weight, layer_t.weight)
