"""Reverse-mode autodiff (the GIR-to-GIR `grad` transform, Note [Gradient graphs])
checked against torch.autograd: each function is captured by xacc.jit into a GIR
graph, differentiated with xacc.ir's Module.grad, the gradient graph is run by the
reference interpreter (ATen ops through libtorch), and the results are compared
with torch.autograd.grad on the same inputs (allclose), for float32 and float64
and two shape sets (several of which broadcast)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import xacc
import xacc.ir as ir
from xacc._src.capture import convert
from xacc.jit import jit, reset

# name -> (function, shapes per shape set, positive-input indices)
CASES = {
    "add_mul_broadcast": (lambda x, y: (x * y + x - 2.5 * y).sum(), [[(4, 5), (5,)], [(3, 1, 6), (2, 6)]]),
    "sub_div": (lambda x, y: ((x - y) / (y * y + 1.0)).sum(), [[(4, 5), (4, 1)], [(6,), (6,)]]),
    "pow_scalar": (lambda x: (x ** 3 - 2.0 * x ** 2 + x / 4.0).mean(), [[(4, 5)], [(2, 3, 4)]]),
    "pow_tensor": (lambda x, y: ((x.abs() + 1.0) ** y).sum(), [[(4, 5), (5,)], [(3, 3), (3, 3)]]),
    "exp_log": (lambda x, y: torch.log(torch.exp(x) + y.exp()).sum(), [[(4, 5), (5,)], [(7,), (1,)]]),
    "sqrt_rsqrt": (lambda x, y: (torch.sqrt(x * x + 1.0) + torch.rsqrt(y * y + 1.0)).sum(), [[(4, 5), (5,)], [(2, 2), (2, 1)]]),
    "sin_cos": (lambda x, y: (torch.sin(x) * torch.cos(y)).sum(), [[(4, 5), (4, 5)], [(3,), (2, 3)]]),
    "tanh_sigmoid": (lambda x, y: (torch.tanh(x) * torch.sigmoid(y)).sum(), [[(4, 5), (5,)], [(6, 2), (6, 1)]]),
    "relu_gelu_silu": (lambda x, y: (F.relu(x) + F.gelu(x) + F.silu(y) * x).sum(), [[(4, 5), (5,)], [(8,), (8,)]]),
    "gelu_tanh_abs": (lambda x: (F.gelu(x, approximate="tanh") + x.abs() * 0.5 - x.neg()).sum(), [[(4, 5)], [(9,)]]),
    "mm": (lambda a, b: torch.mm(a, b).tanh().sum(), [[(3, 4), (4, 5)], [(1, 2), (2, 7)]]),
    "matmul_batched_broadcast": (lambda a, b: (a @ b).sin().sum(), [[(2, 3, 4), (4, 5)], [(2, 1, 3, 4), (5, 4, 2)]]),
    "matmul_vector": (lambda a, v: ((a @ v) ** 2).sum() + (v @ v), [[(3, 4), (4,)], [(2, 5, 6), (6,)]]),
    "vector_matmul": (lambda v, b: (v @ b).exp().sum(), [[(4,), (4, 3)], [(3,), (2, 3, 5)]]),
    "bmm": (lambda a, b: torch.bmm(a, b).sum(), [[(2, 3, 4), (2, 4, 5)], [(1, 1, 2), (1, 2, 3)]]),
    "addmm": (lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=2.0).sigmoid().sum(), [[(5,), (3, 4), (4, 5)], [(2, 3), (2, 2), (2, 3)]]),
    "linear": (lambda x, w, b: F.linear(x, w, b).relu().sum(), [[(4, 3), (5, 3), (5,)], [(2, 6, 3), (4, 3), (4,)]]),
    "mlp_mse": (lambda x, w1, b1, w2, t: F.mse_loss(F.linear(torch.tanh(F.linear(x, w1, b1)), w2), t),
                [[(8, 4), (16, 4), (16,), (3, 16), (8, 3)], [(5, 2), (6, 2), (6,), (1, 6), (5, 1)]]),
    "transpose_permute_reshape": (lambda x: (x.t() @ x).sum() + x.reshape(-1).sin().sum() + x.permute(1, 0).sin().sum()
                                  if x.dim() == 2 else x.permute(2, 0, 1).reshape(x.shape[2], -1).sin().sum(),
                                  [[(4, 5)], [(2, 3, 4)]]),
    "view_transpose": (lambda x: x.view(x.shape[0], -1).transpose(0, 1).tanh().sum(), [[(4, 5)], [(2, 3, 4)]]),
    "expand_unsqueeze_squeeze": (lambda x, z: (x.unsqueeze(0).expand(3, *x.shape) * z).sum() + x.unsqueeze(1).squeeze(1).sum(),
                                 [[(4, 5), (3, 4, 5)], [(2,), (3, 1)]]),
    "sum_mean_dims": (lambda x: (x - x.mean(dim=1, keepdim=True)).pow(2).sum(dim=0).mean() + x.sum(dim=(0, 1)).sum() + x.mean(),
                      [[(4, 5)], [(3, 4, 2)]]),
    "layer_norm_manual": (lambda x, w: (((x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + 1e-5)) * w).sum()
                          if False else (((x - x.mean(-1, keepdim=True)) * torch.rsqrt(((x - x.mean(-1, keepdim=True)) ** 2).mean(-1, keepdim=True) + 1e-5)) * w).pow(2).sum(),
                          [[(4, 5), (5,)], [(2, 3, 6), (6,)]]),
    "softmax": (lambda x, y: (F.softmax(x, dim=-1) * y).sum(), [[(4, 5), (5,)], [(2, 3, 4), (4,)]]),
    "log_softmax_nll": (lambda x, t: -(F.log_softmax(x, dim=1) * t).sum() / x.shape[0], [[(4, 5), (4, 5)], [(3, 7), (3, 7)]]),
    "where_max_min": (lambda x, y: torch.where(x > 0, x * y, y).sum() + torch.maximum(x, y).sum() + torch.minimum(x, y * 2.0).sum(),
                      [[(4, 5), (5,)], [(6,), (6,)]]),
    "clamp": (lambda x: x.clamp(-0.5, 0.5).sum() + x.clamp(min=0.1).pow(2).sum() + x.clamp(max=0.2).sum(), [[(4, 5)], [(10,)]]),
    "mse_loss": (lambda x, w, t: F.mse_loss(x * w, t) + F.mse_loss(x, t, reduction="sum"), [[(4, 5), (5,), (4, 5)], [(3,), (3,), (3,)]]),
}


def _capture(fn, args):
    reset()
    start = len(convert.EVENTS)
    out = jit(fn, fullgraph=True)(*args)
    events = [e for e in convert.EVENTS[start:] if e.outcome == "graph"]
    assert len(events) == 1, [(e.outcome, e.breaks) for e in convert.EVENTS[start:]]
    return out, events[0].graph


def _inputs(shapes, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g, dtype=dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape_set", [0, 1])
@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_torch_autograd(name, shape_set, dtype):
    fn, shape_sets = CASES[name]
    args = _inputs(shape_sets[shape_set], dtype, seed=hash((name, shape_set)) % 1000)
    out, text = _capture(fn, [a.clone() for a in args])
    m = ir.parse(text)
    fwd = m.graph_names[0]
    gname = m.grad(fwd)
    got = m.interpret(gname, *args)
    assert len(got) == 1 + len(args)

    leaves = [a.clone().requires_grad_() for a in args]
    expected_out = fn(*leaves)
    expected = torch.autograd.grad(expected_out, leaves)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-9, atol=1e-11)
    torch.testing.assert_close(got[0], expected_out.detach(), **tol)
    for i, (g, e) in enumerate(zip(got[1:], expected)):
        assert g.shape == e.shape and g.dtype == e.dtype, (i, g.shape, e.shape, g.dtype, e.dtype)
        torch.testing.assert_close(g, e, **tol, msg=lambda m: f"gradient of input {i}: {m}")


def test_vjp_with_cotangent_parameters_matches_torch():
    def fn(x, w):
        return torch.tanh(x @ w), (x * x).sum(dim=1)

    x = torch.randn(3, 4, dtype=torch.float64)
    w = torch.randn(4, 2, dtype=torch.float64)
    _, text = _capture(fn, [x, w])
    m = ir.parse(text)
    gname = m.grad(m.graph_names[0], seed="param")
    c0 = torch.randn(3, 2, dtype=torch.float64)
    c1 = torch.randn(3, dtype=torch.float64)
    got = m.interpret(gname, x, w, c0, c1)
    xl, wl = x.clone().requires_grad_(), w.clone().requires_grad_()
    o0, o1 = fn(xl, wl)
    ex, ew = torch.autograd.grad((o0, o1), (xl, wl), grad_outputs=(c0, c1))
    torch.testing.assert_close(got[2], ex)
    torch.testing.assert_close(got[3], ew)


def test_wrt_subset_and_unused_input_gets_zeros():
    text = """graph @f(%x: tensor<f64, [3], cpu>, %y: tensor<f64, [3], cpu>, %u: tensor<f64, [2], cpu>) -> tensor<f64, [], cpu> {
  %0 = aten.mul.Tensor(%x, %y) : tensor<f64, [3], cpu>
  %1 = aten.sum(%0) : tensor<f64, [], cpu>
  return %1
}
"""
    m = ir.parse(text)
    g1 = m.grad("f", wrt=["y", 2], name="dy_du")
    x, y, u = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
    out, dy, du = m.interpret(g1, x, y, u)
    torch.testing.assert_close(dy, x)
    torch.testing.assert_close(du, torch.zeros(2, dtype=torch.float64))
    assert "graph @dy_du" in m.print()


FLOAT_GIR = """graph @f(%a: f64, %b: f64, %n: i64) -> f64 {
  %c2 = arith.const() {value = 2.0} : f64
  %0 = arith.mul(%a, %b) : f64
  %1 = arith.div(%0, %b) : f64
  %2 = arith.sub(%1, %a) : f64
  %3 = arith.mul(%a, %a) : f64
  %4 = arith.add(%3, %2) : f64
  %nf = arith.cast(%n) : f64
  %5 = arith.pow(%b, %c2) : f64
  %6 = arith.mul(%5, %nf) : f64
  %7 = arith.max(%4, %6) : f64
  %8 = arith.neg(%7) : f64
  %9 = arith.abs(%8) : f64
  %10 = arith.min(%9, %0) : f64
  %11 = arith.add(%10, %9) : f64
  return %11
}
"""


@pytest.mark.parametrize("a,b,n", [(1.5, -0.7, 3), (-2.0, 0.3, 1), (0.4, 2.5, 2)])
def test_float_scalar_arithmetic_matches_torch(a, b, n):
    m = ir.parse(FLOAT_GIR)
    gname = m.grad("f")
    val, da, db = m.interpret(gname, a, b, n)
    ta = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    t0 = ta * tb
    t4 = ta * ta + (t0 / tb - ta)
    t7 = torch.maximum(t4, tb ** 2 * n)
    t9 = (-t7).abs()
    out = torch.minimum(t9, t0) + t9
    ea, eb = torch.autograd.grad(out, (ta, tb))
    assert val == pytest.approx(out.item())
    assert da == pytest.approx(ea.item())
    assert db == pytest.approx(eb.item())


def test_unsupported_op_is_a_located_compile_error():
    text = """graph @f(%x: tensor<f32, [3], cpu>) -> tensor<f32, [], cpu> {
  %0 = aten.cumprod(%x) {dim = 0} : tensor<f32, [3], cpu> loc("model.py":12:4)
  %1 = aten.sum(%0) : tensor<f32, [], cpu>
  return %1
}
"""
    m = ir.parse(text)
    with pytest.raises(xacc.CompileError) as e:
        m.grad("f")
    assert "model.py:12:4: error[E0303]: cannot differentiate 'aten.cumprod': no derivative rule" in str(e.value)


def test_wrt_non_float_parameter_is_rejected():
    m = ir.parse(FLOAT_GIR)
    with pytest.raises(xacc.CompileError) as e:
        m.grad("f", wrt=["n"])
    assert "only floats and floating-point tensors have gradients" in str(e.value)
    with pytest.raises(xacc.CompileError) as e:
        m.grad("f", wrt=["nope"])
    assert "graph @f has no parameter 'nope'" in str(e.value)
