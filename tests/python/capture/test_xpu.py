"""Captured graphs on the xpu target (`xacc.jit(fn, device="xpu0")`): the MLIR
backend runs what it lowers as fused kernels and the rest through ATen inside
the same executable; results must equal eager PyTorch, and the plan must show
that kernels were actually used where the backend lowers the ops."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from harness import check, r, r2
from test_straightline import CASES
from xacc._C import capture as C
from xacc.jit import jit

pytestmark = pytest.mark.skipif(not C.device_available("xpu0"), reason="built without the MLIR backend")

# A representative subset of the straight-line cases: pointwise chains,
# broadcasting, reductions, decompositions, views, dtype changes, effects,
# mixed lowered/fallback graphs and non-tensor outputs.
SUBSET = ["add", "sub_mul", "div_pow", "matmul", "relu_sum", "mean_dim", "softmax", "log_softmax",
          "gelu_tanh", "sigmoid_tanh", "exp_log", "clamp", "where", "cat", "reshape_permute",
          "view_transpose", "unsqueeze_expand", "index_slice", "index_int", "index_none", "norm",
          "layer_norm_fn", "float_cast", "to_dtype", "inplace_local", "tuple_return", "dict_return",
          "scalar_tensor_ops", "bool_ops", "floor_div_mod", "var_std", "logsumexp", "cross_entropy",
          "masked_fill", "linear_fn", "bmm"]


def plans(fn):
    code = getattr(fn, "__code__", None) or fn.forward.__code__
    return [e["plan"] for e in C.entries(code)]


@pytest.mark.parametrize("name", SUBSET)
def test_straight_line_xpu(name):
    fn, make = CASES[name]
    check(fn, make, graphs=1, breaks=0, device="xpu0")


def test_pointwise_chain_is_one_kernel():
    def f(x, b):
        return torch.sigmoid(torch.relu(x + b) * 2.0 - b).tanh()

    check(f, lambda i: (torch.randn(64, 32), torch.randn(32)), graphs=1, device="xpu0")
    (plan,) = plans(f)
    assert plan.splitlines()[0].startswith("region 0 ("), plan
    assert "fallback" not in plan, plan


def test_mixed_plan_keeps_matmul_on_aten():
    def f(x, w, b):
        return F.gelu(x @ w + b).sum(dim=-1)

    check(f, lambda i: (torch.randn(8, 16), torch.randn(16, 4), torch.randn(4)), graphs=1, device="xpu0")
    (plan,) = plans(f)
    assert "fallback: aten.mm" in plan or "fallback: aten.matmul" in plan, plan
    assert "region" in plan, plan


def test_returned_view_aliases_its_input():
    def f(x):
        return x.t(), x * 2

    x = torch.randn(3, 4)
    v, _ = jit(f, device="xpu0")(x)
    x.add_(1)
    assert torch.equal(v, x.t())  # a view, as in eager, not a copy


def test_inplace_through_a_view():
    def f(x):
        y = x[1:]
        y.mul_(2)
        return x + 1

    check(f, r(4, 3), graphs=1, device="xpu0")


def test_gradients_flow_through_xpu_graphs():
    def f(x, w):
        return (torch.tanh(x * w) + w).relu().sum()

    jf = jit(f, device="xpu0")
    for _ in range(2):
        x = torch.randn(5, 4)
        w1 = torch.randn(5, 4, requires_grad=True)
        w2 = w1.detach().clone().requires_grad_(True)
        f(x, w1).backward()
        jf(x, w2).backward()
        assert torch.allclose(w1.grad, w2.grad, atol=1e-5)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


def test_module_on_xpu():
    torch.manual_seed(0)
    m = Block().eval()
    jm = jit(m, device="xpu0")
    with torch.no_grad():
        for i in range(3):
            x = torch.randn(4, 16)
            torch.testing.assert_close(jm(x), m(x), atol=1e-5, rtol=1e-4)
    (plan,) = plans(m)
    assert "region" in plan, plan


def test_batchnorm_buffers_update_on_xpu():
    torch.manual_seed(0)
    m1 = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).train()
    m2 = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).train()
    m2.load_state_dict(m1.state_dict())
    jm = jit(m2, device="xpu0")
    with torch.no_grad():
        for i in range(2):
            x = torch.randn(2, 3, 6, 6)
            torch.testing.assert_close(jm(x), m1(x), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(m2[1].running_mean, m1[1].running_mean)
    torch.testing.assert_close(m2[1].running_var, m1[1].running_var)


def test_unknown_device_is_a_backend_error():
    import xacc
    with pytest.raises(xacc.BackendError, match="unknown device"):
        jit(lambda x: x, device="tpu0")


def test_growing_sequence_compiles_kernels_once():
    # Note [Size-generic kernels]: once capture makes the sequence dim dynamic,
    # the xpu regions compile one kernel each for every later length (before,
    # every length compiled every region again).
    from xacc._C import mlir

    def f(x, w):
        h = F.layer_norm(x, (32,))
        h = torch.softmax(h @ w, -1)
        return F.gelu(h) * 0.75 + x.sum(-1, keepdim=True)

    g = jit(f, device="xpu0")
    w = torch.randn(32, 32)
    before = mlir.kernel_totals()
    lengths = [3, 4, 5, 6, 7, 9, 12, 20, 33]
    for t in lengths:
        x = torch.randn(2, t, 32)
        torch.testing.assert_close(g(x, w), f(x, w), rtol=1e-4, atol=1e-4)
    after = mlir.kernel_totals()
    built = (after["compiled"] - before["compiled"]) + (after["disk_hits"] - before["disk_hits"])
    # two regions: their kernels at length 3 (static capture) and one
    # size-generic kernel each for all the rest
    assert built <= 4, (before, after)
