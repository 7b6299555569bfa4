"""Straight-line tensor code: one graph, no breaks, no recompiles, results equal
to eager over three calls with fresh inputs."""

import math

import pytest
import torch
import torch.nn.functional as F

from harness import check, r, r2

CASES = {
    "add": (lambda x, y: x + y, r2(4, 5)),
    "sub_mul": (lambda x, y: (x - y) * 3, r2(4, 5)),
    "div_pow": (lambda x, y: x / (y.abs() + 1) ** 2, r2(3, 3)),
    "matmul": (lambda x, y: x @ y.t(), r2(4, 6)),
    "relu_sum": (lambda x: torch.relu(x).sum(), r(8)),
    "mean_dim": (lambda x: x.mean(dim=1, keepdim=True), r(3, 7)),
    "softmax": (lambda x: F.softmax(x, dim=-1), r(2, 9)),
    "log_softmax": (lambda x: F.log_softmax(x, dim=0), r(5, 2)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), r(10)),
    "sigmoid_tanh": (lambda x: torch.sigmoid(x) * torch.tanh(x), r(6)),
    "exp_log": (lambda x: torch.log(torch.exp(x) + 1), r(4, 4)),
    "clamp": (lambda x: x.clamp(-0.5, 0.5), r(12)),
    "where": (lambda x, y: torch.where(x > y, x, y), r2(5, 5)),
    "cat": (lambda x, y: torch.cat([x, y, x], dim=0), r2(2, 3)),
    "stack": (lambda x, y: torch.stack((x, y), dim=1), r2(3, 4)),
    "reshape_permute": (lambda x: x.reshape(2, 3, 4).permute(2, 0, 1).contiguous(), r(6, 4)),
    "view_transpose": (lambda x: x.view(4, 6).transpose(0, 1), r(2, 12)),
    "unsqueeze_expand": (lambda x: x.unsqueeze(0).expand(3, -1, -1) + 1, r(2, 2)),
    "index_slice": (lambda x: x[1:, ::2] * 2, r(5, 6)),
    "index_int": (lambda x: x[0] + x[-1], r(4, 3)),
    "index_none": (lambda x: x[:, None] * x[None, :], r(5)),
    "chunk": (lambda x: sum(x.chunk(3, dim=0)), r(6, 2)),
    "split_unpack": (lambda x: (lambda a, b: a * b)(*x.split(2, dim=0)), r(4, 3)),
    "norm": (lambda x: x / x.norm(dim=-1, keepdim=True), r(3, 8)),
    "layer_norm_fn": (lambda x: F.layer_norm(x, (8,)), r(4, 8)),
    "dropout_eval": (lambda x: F.dropout(x, p=0.5, training=False) * 2, r(10)),
    "max_dim": (lambda x: x.max(dim=1).values + x.argmax(dim=1), r(3, 5)),
    "topk": (lambda x: x.topk(2, dim=-1)[0], r(4, 6)),
    "cumsum": (lambda x: x.cumsum(0), r(7)),
    "einsum": (lambda x, y: torch.einsum("ij,kj->ik", x, y), r2(3, 4)),
    "bmm": (lambda x: torch.bmm(x, x.transpose(1, 2)), r(2, 3, 4)),
    "zeros_like": (lambda x: torch.zeros_like(x) + x, r(3)),
    "ones_arange": (lambda x: x + torch.arange(4.0) * torch.ones(4), r(4)),
    "full": (lambda x: x * torch.full((2, 2), 3.0), r(2, 2)),
    "float_cast": (lambda x: (x > 0).float() * x, r(9)),
    "to_dtype": (lambda x: x.to(torch.float64).sum(), r(5)),
    "type_as": (lambda x, y: x.long().type_as(y), r2(4)),
    "math_const": (lambda x: x * math.pi + math.sqrt(2.0), r(3)),
    "neg_abs": (lambda x: -x.abs(), r(4)),
    "rsqrt": (lambda x: torch.rsqrt(x.abs() + 1e-3), r(4)),
    "pad": (lambda x: F.pad(x, (1, 2)), r(2, 3)),
    "linear_fn": (lambda x, y: F.linear(x, y), r2(4, 4)),
    "masked_fill": (lambda x: x.masked_fill(x < 0, 0.0), r(3, 3)),
    "tril": (lambda x: torch.tril(x), r(4, 4)),
    "flatten": (lambda x: torch.flatten(x, 1), r(2, 3, 4)),
    "shape_arith": (lambda x: x.reshape(x.shape[0] * x.shape[1], -1), r(2, 3, 4)),
    "size_method": (lambda x: x.view(x.size(0), -1).sum(1), r(3, 2, 2)),
    "ndim_dim": (lambda x: x.sum(dim=x.ndim - 1), r(2, 5)),
    "inplace_local": (lambda x: x.clone().mul_(2).add_(1), r(5)),
    "tuple_return": (lambda x, y: (x + y, x - y, 3), r2(2)),
    "dict_return": (lambda x: {"a": x * 2, "b": [x, x + 1]}, r(2)),
    "list_return": (lambda x: [x.sin(), x.cos()], r(3)),
    "scalar_tensor_ops": (lambda x: x.sum() * 2 + x.mean(), r(6)),
    "bool_ops": (lambda x, y: (x > 0) & (y < 0) | (x == y), r2(8)),
    "floor_div_mod": (lambda x: (x * 10) // 3 + (x * 10) % 3, r(5)),
    "outer": (lambda x, y: torch.outer(x, y), r2(3)),
    "var_std": (lambda x: x.var(dim=0) + x.std(dim=0), r(6, 2)),
    "logsumexp": (lambda x: torch.logsumexp(x, dim=1), r(3, 4)),
    "cross_entropy": (lambda x: F.cross_entropy(x, torch.tensor([0, 2, 1])), r(3, 4)),
    "mse": (lambda x, y: F.mse_loss(x, y), r2(5, 2)),
    "one_hot_float": (lambda x: F.one_hot(torch.tensor([0, 2]), 3).float() @ x, r(3, 2)),
    "repeat": (lambda x: x.repeat(2, 3), r(2, 2)),
    "flip_roll": (lambda x: torch.roll(x.flip(0), 1), r(5)),
    "gather": (lambda x: x.gather(1, torch.tensor([[0], [1]])), r(2, 3)),
    "baddbmm": (lambda x: torch.baddbmm(x, x, x), r(2, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_straight_line(name):
    fn, make = CASES[name]
    check(fn, make, graphs=1, breaks=0)


def test_requires_grad_inputs_get_gradients():
    def f(x, w):
        return (x @ w).relu().sum()

    from xacc.jit import jit
    jf = jit(f)
    for _ in range(2):
        x = torch.randn(3, 4)
        w1 = torch.randn(4, 2, requires_grad=True)
        w2 = w1.detach().clone().requires_grad_(True)
        f(x, w1).backward()
        jf(x, w2).backward()
        assert torch.allclose(w1.grad, w2.grad)
