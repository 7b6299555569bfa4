"""Training through captured graphs (xacc/_src/capture/training.py, Note [Training
graphs]): a graph captured with inputs that require grad runs as a compiled
forward wrapped in an autograd.Function whose backward is the compiled backward
graph built by the GIR autodiff. Every test checks gradients (or parameters
after optimizer steps) against eager PyTorch and, through the counters, that the
compiled backward ran (or, for an op without a rule, that the graph fell back to
replay with eager autograd, with the reason recorded)."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from xacc._C import capture as C
from xacc._src.capture import training
from xacc.jit import counters, jit

D = torch.float64
DEVICES = ["cpu"] + (["xpu0"] if C.device_available("xpu0") else [])


def _r(*shape):
    return torch.randn(*shape, dtype=D)


def _idx(*vals):
    return torch.tensor(vals)


# name -> (function, argument factory); floating arguments require grad.
OPS = {
    "linear_tanh_mse": (lambda x, w, b, t: F.mse_loss(F.linear(x, w, b).tanh(), t),
                        lambda: [_r(5, 4), _r(3, 4), _r(3), _r(5, 3)]),
    "matmul_bmm_baddbmm": (lambda a, b, c: (a @ b).sin().sum() + torch.baddbmm(c, a, b, beta=0.5).pow(2).sum(),
                           lambda: [_r(2, 3, 4), _r(2, 4, 5), _r(2, 3, 5)]),
    "softmax_log_softmax": (lambda x: (F.softmax(x, -1) * torch.arange(5.0, dtype=D)).sum() + F.log_softmax(x, 0).pow(2).sum(),
                            lambda: [_r(3, 5)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6,), w, b).pow(2).sum() + F.layer_norm(x, (6,)).sin().sum(),
                   lambda: [_r(3, 4, 6), _r(6), _r(6)]),
    "embedding": (lambda w, i: (F.embedding(i, w) ** 2).sum(), lambda: [_r(10, 4), _idx([1, 2, 2], [0, 9, 3])]),
    "gelu_silu_tanh": (lambda x: (F.gelu(x) + F.silu(x) * 0.5 + torch.tanh(x) + F.gelu(x, approximate="tanh")).pow(2).sum(),
                       lambda: [_r(4, 5)]),
    "activations": (lambda x: (F.leaky_relu(x, 0.1) + F.elu(x) + F.softplus(x) + F.hardtanh(x, -0.5, 0.5) + F.relu(x)).pow(2).sum(),
                    lambda: [_r(4, 5)]),
    "pointwise": (lambda x: (torch.erf(x) + torch.log1p(x.abs()) + torch.expm1(x) + (x.abs() + 1).reciprocal()).sum(),
                  lambda: [_r(4, 5)]),
    "dropout_p0": (lambda x: F.dropout(x, 0.0, training=True).sin().sum() + F.dropout(x, 0.5, training=False).sum(),
                   lambda: [_r(3, 4)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1, stride=2).tanh().sum(), lambda: [_r(2, 3, 7, 7), _r(4, 3, 3, 3), _r(4)]),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True).pow(3).sum(),
                         lambda: [_r(4, 3, 5, 5), _r(3), _r(3)]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b).pow(3).sum(), lambda: [_r(2, 4, 3, 3), _r(4), _r(4)]),
    "pools": (lambda x: F.max_pool2d(x, 2).pow(2).sum() + F.avg_pool2d(x, 2).pow(2).sum() + F.adaptive_avg_pool2d(x, 1).sin().sum(),
              lambda: [_r(2, 3, 4, 4)]),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t), lambda: [_r(5, 7), _idx(1, 2, 3, 0, 6)]),
    "nll_loss_sum": (lambda x, t: F.nll_loss(F.log_softmax(x, 1), t, reduction="sum"), lambda: [_r(5, 7), _idx(1, 2, 3, 0, 6)]),
    "views": (lambda x: (x.t() @ x).sum() + x.permute(1, 0).reshape(-1).sin().sum() + x.unsqueeze(0).expand(3, 4, 5).pow(2).sum()
              + x.transpose(0, 1).contiguous().view(20).cos().sum(), lambda: [_r(4, 5)]),
    "slicing": (lambda x: (x[:, 1:3] * x[:, :2]).sum() + x[1].exp().sum() + x[..., -1].pow(2).sum() + x[::2].sum(),
                lambda: [_r(4, 5)]),
    "split_chunk_unbind": (lambda x: sum((c.sin() * (i + 1)).sum() for i, c in enumerate(x.chunk(2, -1)))
                           + sum((s * s).sum() for s in x.unbind(0)) + x.split([1, 3], 0)[1].exp().sum(),
                           lambda: [_r(4, 4)]),
    "cat_stack": (lambda x, y: torch.cat([x, y, x], 0).sin().sum() + torch.stack([x, y], 1).cos().pow(2).sum(),
                  lambda: [_r(3, 4), _r(2, 4)[:1].expand(3, 4).clone()]),
    "masked_fill_where": (lambda x, y, m: x.masked_fill(m, -1e9).softmax(-1).pow(2).sum() + torch.where(m, x, y * 2).sum(),
                          lambda: [_r(3, 4), _r(3, 4), torch.rand(3, 4) > 0.5]),
    "mean_sum_var_std": (lambda x: x.mean(-1).pow(2).sum() + x.sum(0).sin().sum() + x.var(-1).sum() + x.std(0).sum(),
                         lambda: [_r(3, 4)]),
    "amax_max_dim": (lambda x: x.amax(-1).sum() + x.max(-1).values.pow(2).sum(), lambda: [_r(3, 4)]),
    "gather_index_select_index": (lambda x, i, j: x.gather(1, j).pow(2).sum() + x.index_select(0, i).sin().sum() + x[i].exp().sum(),
                                  lambda: [_r(5, 4), _idx(0, 2, 2), _idx([0, 1], [2, 3], [1, 1], [3, 3], [0, 0])]),
    "pad_cumsum_tril_flip_roll": (lambda x: F.pad(x, (1, 2)).pow(2).sum() + x.cumsum(-1).pow(2).sum() + x.tril().pow(2).sum()
                                  + x.triu(1).sum() + x.flip(1).roll(1, 0)[0].exp().sum(), lambda: [_r(4, 4)]),
    "sdpa": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True).pow(2).sum(),
             lambda: [_r(2, 3, 5, 4), _r(2, 3, 5, 4), _r(2, 3, 5, 4)]),
}


def _grads(fn, args):
    leaves = [a.clone().requires_grad_(a.is_floating_point()) for a in args]
    out = fn(*leaves)
    out.backward()
    return out.detach(), [a.grad for a in leaves]


def _check_compiled_backward(graphs=1, backward_runs=1):
    c = counters()
    assert c["training_fallbacks"] == 0, training.FALLBACKS
    assert c["training_graphs"] == graphs
    assert c["compiled_backward_runs"] == backward_runs


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_gradients_match_eager_f64(name):
    fn, make = OPS[name]
    torch.manual_seed(hash(name) % 1000)
    args = make()
    expected_out, expected = _grads(fn, args)
    got_out, got = _grads(jit(fn), args)
    _check_compiled_backward()
    torch.testing.assert_close(got_out, expected_out, rtol=1e-9, atol=1e-10)
    for i, (g, e) in enumerate(zip(got, expected)):
        if e is None:
            assert g is None
            continue
        torch.testing.assert_close(g, e, rtol=1e-9, atol=1e-10, msg=lambda m: f"gradient of input {i}: {m}")


def test_grad_flows_only_to_inputs_that_require_it_and_partial_outputs():
    def fn(x, w):
        y = x @ w
        return y.sum(), y.tanh()  # the second output gets no gradient

    x, w = _r(3, 4), _r(4, 2).requires_grad_()
    s, t = jit(fn)(x, w)
    s.backward()
    assert x.grad is None
    w2 = w.detach().clone().requires_grad_()
    (x @ w2).sum().backward()
    torch.testing.assert_close(w.grad, w2.grad)
    _check_compiled_backward()
    assert t.requires_grad and t.grad_fn is not None


def test_no_grad_mode_and_no_requires_grad_compile_no_backward():
    x, w = _r(3, 4), _r(4, 2)
    jit(lambda x, w: (x @ w).sum())(x, w)
    with torch.no_grad():
        out = jit(lambda x, w: (x @ w).sin().sum())(x, w.requires_grad_())
    assert not out.requires_grad
    assert counters()["training_graphs"] == 0


@pytest.mark.parametrize("device", DEVICES)
def test_work_under_inner_no_grad_compiles_forward_only(device):
    # Grad mode is on at the frame's entry and w requires grad, but every result
    # is computed under no_grad or from detached values: eager records no
    # history, so no backward is built (before: a joint graph and a compiled
    # backward of zero gradients were built, running meta kernels that import
    # torch.fx.experimental.symbolic_shapes: ~0.5 s and ~40 MiB in xjit's
    # numpy_mlp example). A frame with one result that does depend on w keeps
    # its compiled backward.
    def inner(x, w):
        with torch.no_grad():
            y = (x @ w).tanh()
        return y.sum(), y, (x @ w.detach()).relu()

    def mixed(x, w):
        with torch.no_grad():
            y = (x @ w).tanh()
        return y, (x @ w).sum()

    x, w = _r(3, 4), _r(4, 2).requires_grad_()
    outs = jit(inner, device=device)(x, w)
    for got, want in zip(outs, inner(x, w)):
        torch.testing.assert_close(got, want)
        assert not got.requires_grad and got.grad_fn is None
    assert counters()["training_graphs"] == 0 and counters()["training_fallbacks"] == 0
    y, s = jit(mixed, device=device)(x, w)
    assert not y.requires_grad and s.requires_grad
    s.backward()
    torch.testing.assert_close(w.grad, x.sum(0)[:, None].expand(4, 2))
    assert counters()["training_graphs"] == 1


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(6, 16), nn.Linear(16, 16), nn.Linear(16, 3)

    def forward(self, x):
        return self.l3(F.gelu(self.l2(torch.tanh(self.l1(x)))))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 8, 3, padding=1, groups=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.body(x))


class Attention(nn.Module):
    def __init__(self, d=16, h=4):
        super().__init__()
        self.h, self.qkv, self.proj, self.norm = h, nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 32), nn.GELU(), nn.Linear(32, d))

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).split(d, -1)
        q, k, v = (z.view(b, t, self.h, d // self.h).transpose(1, 2) for z in (q, k, v))
        s = (q @ k.transpose(-2, -1)) / (d // self.h) ** 0.5
        a = s.masked_fill(mask, float("-inf")).softmax(-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.ff(x)


class EmbedNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos, self.norm, self.out = nn.Embedding(20, 8), nn.Embedding(6, 8), nn.LayerNorm(8), nn.Linear(8, 20)

    def forward(self, ids):
        h = self.norm(self.tok(ids) + self.pos(torch.arange(ids.shape[1])))
        return self.out(F.dropout(h, 0.1, training=False))


def _model_case(name):
    torch.manual_seed(0)
    if name == "mlp":
        return MLP(), (torch.randn(8, 6),), lambda out, t: F.mse_loss(out, t), torch.randn(8, 3)
    if name == "convnet":
        return ConvNet(), (torch.randn(4, 3, 8, 8),), lambda out, t: F.cross_entropy(out, t), torch.tensor([0, 3, 1, 2])
    if name == "attention":
        mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)
        return Attention(), (torch.randn(2, 5, 16), mask), lambda out, t: F.mse_loss(out, t), torch.randn(2, 5, 16)
    ids = torch.randint(0, 20, (3, 6))
    return EmbedNorm(), (ids,), lambda out, t: F.cross_entropy(out.reshape(-1, 20), t.reshape(-1)), ids


MODELS = ["mlp", "convnet", "attention", "embed_layernorm"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", MODELS)
def test_model_gradients_match_eager(name, device):
    model, inputs, loss_fn, target = _model_case(name)
    dtype = D if device == "cpu" else torch.float32  # the xpu kernels are float32
    model = model.to(dtype)
    inputs = tuple(i.to(dtype) if i.is_floating_point() else i for i in inputs)
    target = target.to(dtype) if target.is_floating_point() else target
    ref = copy.deepcopy(model)

    def fn(m, *xs):
        return loss_fn(m(*xs), target)

    jf = jit(fn, device=device)
    for _ in range(2):
        jf(model, *inputs).backward()
        fn(ref, *inputs).backward()
    _check_compiled_backward(backward_runs=2)
    tol = dict(rtol=1e-9, atol=1e-10) if device == "cpu" else dict(rtol=1e-4, atol=1e-5)
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **tol, msg=lambda m: f"{name}.{n}: {m}")
    for a, b in zip(model.buffers(), ref.buffers()):
        torch.testing.assert_close(a, b, **tol)  # BatchNorm statistics updated once per step


def _optimizer(kind, params):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)
    return torch.optim.Adam(params, lr=0.01)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("opt", ["sgd", "adam"])
@pytest.mark.parametrize("name", MODELS)
def test_training_step_matches_eager_after_5_steps(name, opt, device):
    """forward, loss, loss.backward(), optimizer.step(), zero_grad() in one
    xacc.jit function: the forward+loss graph has a compiled backward; the
    backward call and the optimizer step are graph breaks that run natively."""
    model, inputs, loss_fn, target = _model_case(name)
    ref = copy.deepcopy(model)
    o1, o2 = _optimizer(opt, model.parameters()), _optimizer(opt, ref.parameters())

    def step(m, o, *xs):
        loss = loss_fn(m(*xs), target)
        loss.backward()
        o.step()
        o.zero_grad()
        return loss

    jstep = jit(step, device=device)
    for _ in range(5):
        l1 = jstep(model, o1, *inputs)
        l2 = step(ref, o2, *inputs)
        torch.testing.assert_close(l1, l2, rtol=1e-4, atol=1e-5)
    _check_compiled_backward(backward_runs=5)
    for (n, p), q in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=lambda m: f"{name}.{n}: {m}")


def test_op_without_rule_falls_back_to_replay_with_correct_gradients():
    def fn(x, w):
        return (torch.cumprod(x, 1) * w).sum()

    x, w = _r(3, 4), _r(4)
    expected_out, expected = _grads(fn, [x, w])
    got_out, got = _grads(jit(fn), [x, w])
    c = counters()
    assert c["training_graphs"] == 0 and c["training_fallbacks"] == 1
    assert "cannot differentiate 'aten.cumprod" in training.FALLBACKS[-1][1]
    torch.testing.assert_close(got_out, expected_out)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)


def test_graph_break_prefix_runs_compiled_backward():
    """The prefix graph of a split frame (called from the break function) runs
    the same compiled forward/backward."""
    def fn(x, w):
        y = (x @ w).tanh()
        print("break")  # a graph break
        return y.sum() * 2

    x, w = _r(3, 4), _r(4, 2)
    expected_out, expected = _grads(fn, [x, w])
    got_out, got = _grads(jit(fn), [x, w])
    assert counters()["compiled_backward_runs"] >= 1
    assert counters()["breaks"] >= 1
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)


def test_double_backward_is_refused_not_wrong():
    x = _r(3).requires_grad_()
    y = jit(lambda x: (x.sin() ** 2).sum())(x)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    with pytest.raises(RuntimeError):
        g.sum().backward()


def test_cpu_training_step_gives_eagers_gradients_bit_for_bit():
    # On the ATen executor every backward op is eager autograd's own (conv,
    # pooling, relu, cross_entropy's log_softmax and nll_loss, linear, softmax)
    # and the first convolution's unneeded input gradient is masked off as
    # eager masks it: the gradients are eager's bits, not eager's within a
    # tolerance, so a chaotic training loop prints the same losses.
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 16, 3, padding=1)
            self.fc = nn.Linear(16 * 4 * 4, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.c1(x)), 2)
            x = F.max_pool2d(F.relu(self.c2(x)), 2)
            h = self.fc(x.flatten(1))
            return h + F.softmax(h, -1)

    def loss_fn(model, x, y):
        return F.cross_entropy(model(x), y)

    eager = Net()
    mine = copy.deepcopy(eager)
    x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    loss_fn(eager, x, y).backward()
    step = jit(loss_fn, device="cpu")
    before = counters()["compiled_backward_runs"]
    for _ in range(2):
        mine.zero_grad()
        got = step(mine, x, y)
        got.backward()
    assert counters()["compiled_backward_runs"] == before + 2
    assert torch.equal(got, loss_fn(eager, x, y))
    for (name, p), q in zip(eager.named_parameters(), mine.parameters()):
        assert torch.equal(p.grad, q.grad), name
