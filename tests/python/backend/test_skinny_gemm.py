"""Note [Skinny matrix products] (csrc/lib/backend/aten/SkinnyGemm.cpp): the
kernels against a float64 reference over shapes that hit every tail (rows,
depth and columns that are not multiples of the blocks), both weight layouts,
strided operands and every bias broadcast; the conditions under which the call
must stay with ATen; and the kernels reached from xpu0's captured graphs under
no_grad (the ATen executor keeping ATen's bits), with autograd's graph intact
when grad mode is on."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import xacc
from xacc import _C
from xacc._src import jit as xacc_jit

pytestmark = pytest.mark.skipif(not _C.skinny_available(), reason="the skinny kernels need AVX-512F")


def reference(a, b, bias=None, beta=1.0, alpha=1.0):
    y = alpha * (a.double() @ b.double())
    if bias is not None and beta != 0:
        y = y + beta * bias.double()
    return y


def check(got, a, b, bias=None, beta=1.0, alpha=1.0):
    assert got is not None
    want = reference(a, b, bias, beta, alpha)
    # float32 rounding of a K-term sum: bounded by K * eps * sum |a_ik b_kj|.
    bound = a.double().abs() @ b.double().abs() * abs(alpha) * a.shape[1] * 2.0 ** -23 + 1e-6
    if bias is not None and beta != 0:
        bound = bound + (beta * bias.double()).abs() * 2.0 ** -23
    err = (got.double() - want).abs()
    assert got.shape == want.shape and got.dtype == torch.float32
    assert bool((err <= bound).all()), float((err - bound).max())


def weight(k, n, transposed, ld_pad=0):
    """b [k, n]: transposed = w.t() of a [n, k + ld_pad] buffer's columns, else a [k, n + ld_pad] buffer's."""
    if transposed:
        return torch.randn(n, k + ld_pad)[:, :k].t()
    return torch.randn(k, n + ld_pad)[:, :n]


@pytest.mark.parametrize("transposed", [True, False], ids=["dot", "rowmajor"])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 9, 16])
def test_kernels_match_a_float64_reference_over_every_tail(transposed, m):
    torch.manual_seed(m)
    for k in (1, 5, 16, 17, 33, 64, 100, 129):
        for n in (1, 3, 4, 5, 16, 17, 63, 64, 65, 1100):
            a, b = torch.randn(m, k), weight(k, n, transposed)
            dot = b.stride(0) == 1 and (n == 1 or b.stride(1) >= k)  # a one-column b is either layout
            if dot and m > 4 and k < 64:  # the rows rule leaves these to ATen
                assert _C.skinny_gemm(a, b) is None
                continue
            check(_C.skinny_gemm(a, b), a, b)
            bias = torch.randn(n)
            check(_C.skinny_gemm(a, b, bias), a, b, bias)


@pytest.mark.parametrize("transposed", [True, False], ids=["dot", "rowmajor"])
def test_strided_operands_and_bias_broadcasts(transposed):
    torch.manual_seed(1)
    m, k, n = 3, 37, 70
    a = torch.randn(m, k + 9)[:, :k]  # row stride > k
    b = weight(k, n, transposed, ld_pad=11)  # leading stride > the dim
    for bias in (torch.randn(n), torch.randn(1, n), torch.randn(m, n), torch.randn(m, 1), torch.randn(1, 1),
                 torch.randn(()), torch.randn(n, m).t(), torch.randn(n).expand(m, n), torch.randn(2 * n)[::2]):
        check(_C.skinny_gemm(a, b, bias), a, b, bias)
    for beta, alpha in ((0.5, 2.0), (1.0, -1.5), (0.0, 3.0), (2.0, 1e-30)):
        bias = torch.randn(n)
        check(_C.skinny_gemm(a, b, bias, beta, alpha), a, b, bias, beta, alpha)


def test_beta_zero_ignores_nan_in_the_bias_as_aten_does():
    a, b = torch.randn(2, 20), torch.randn(30, 20).t()
    bias = torch.full((30,), float("nan"))
    got = _C.skinny_gemm(a, b, bias, 0.0, 1.0)
    assert not got.isnan().any()
    torch.testing.assert_close(got, torch.addmm(bias, a, b, beta=0))


def test_alpha_zero_keeps_aten_which_does_not_read_the_operands():
    a, b, bias = torch.randn(2, 20), torch.randn(30, 20).t(), torch.randn(30)
    a[0, 0] = float("inf")
    assert _C.skinny_gemm(a, b, bias, 1.0, 0.0) is None
    assert torch.isfinite(torch.addmm(bias, a, b, alpha=0)).all()


def test_the_rows_rule_per_layout():
    # The dot kernel: up to 4 rows, 32 with depth >= 64, 128 with depth >= 128; row-major: up to 16.
    for m, k, taken in ((4, 8, True), (5, 63, False), (5, 64, True), (32, 64, True), (33, 64, False),
                        (128, 128, True), (129, 128, False), (64, 127, False)):
        a = torch.randn(m, k)
        assert (_C.skinny_gemm(a, weight(k, 24, True)) is not None) is taken, (m, k)
    for m, taken in ((16, True), (17, False)):
        assert (_C.skinny_gemm(torch.randn(m, 40), weight(40, 24, False)) is not None) is taken, m


def test_results_do_not_depend_on_the_thread_count():
    torch.manual_seed(2)
    a, bias = torch.randn(4, 768), torch.randn(3072)
    saved = torch.get_num_threads()
    try:
        for transposed in (True, False):
            b = weight(768, 3072, transposed)
            torch.set_num_threads(1)
            one = _C.skinny_gemm(a, b, bias)
            torch.set_num_threads(2)
            two = _C.skinny_gemm(a, b, bias)
            assert torch.equal(one, two)
            check(two, a, b, bias)
    finally:
        torch.set_num_threads(saved)


class Recording(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def test_calls_the_kernels_must_leave_to_aten():
    a, b, bias = torch.randn(2, 16), torch.randn(8, 16).t(), torch.randn(8)
    assert _C.skinny_gemm(a, b, bias) is not None
    cases = {
        "double": (a.double(), b.double(), bias.double()),
        "a column-strided": (torch.randn(16, 2).t(), b, bias),
        "b strided in both dims": (a, torch.randn(32, 16)[::2, ::2], bias),
        "no rows": (torch.randn(0, 16), b, bias),
        "no depth": (torch.randn(2, 0), torch.randn(8, 0).t(), bias),
        "bias of another length": (a, b, torch.randn(5)),
        "bias double": (a, b, bias.double()),
        "a meta": (a.to("meta"), b, bias),
    }
    for what, (x, w, c) in cases.items():
        assert _C.skinny_gemm(x, w, c) is None, what
    # Grad mode with an operand that requires grad: autograd must record the product.
    w = b.detach().requires_grad_()
    assert _C.skinny_gemm(a, w, bias) is None
    with torch.no_grad():
        assert _C.skinny_gemm(a, w, bias) is not None
    with torch.inference_mode():
        assert _C.skinny_gemm(torch.randn(2, 16), torch.randn(8, 16).t(), torch.randn(8)) is not None
    # CPU autocast would run the product in bfloat16.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert _C.skinny_gemm(a, b, bias) is None
    # A dispatch mode sees every op: the kernels must not hide one from it.
    with Recording():
        assert _C.skinny_gemm(a, b, bias) is None


@pytest.mark.parametrize("device", ["cpu", "xpu0"])
def test_captured_linear_layers_reach_the_kernels_on_xpu0_and_keep_autograd(device):
    xacc_jit.reset()
    torch.manual_seed(3)
    lin, head = torch.nn.Linear(96, 200), torch.randn(50, 200)

    def fn(x):
        h = F.gelu(lin(x))
        return h, h @ head.t(), h @ head.t().contiguous()

    compiled = xacc.jit(fn, device=device)
    x = torch.randn(2, 96)
    with torch.no_grad():
        (h, p1, p2), want = compiled(x), fn(x)
    for g, w in zip((h, p1, p2), want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    if device == "xpu0":
        # The products are the kernels' (bit for bit), in both weight layouts.
        assert torch.equal(p1, _C.skinny_gemm(h, head.t()))
        assert torch.equal(p2, _C.skinny_gemm(h, head.t().contiguous()))
    else:
        # The ATen executor keeps ATen's GEMM: eager's values to the bit.
        assert torch.equal(p1, h @ head.t()) and torch.equal(p2, h @ head.t().contiguous())
    # Grad mode: the products keep ATen's autograd; gradients equal eager's.
    xg = x.clone().requires_grad_()
    out = compiled(xg)
    assert out[1].grad_fn is not None
    sum(o.sum() for o in out).backward()
    xe = x.clone().requires_grad_()
    sum(o.sum() for o in fn(xe)).backward()
    torch.testing.assert_close(xg.grad, xe.grad, rtol=1e-5, atol=1e-5)


def test_gpt2_style_decode_step_matches_eager_under_no_grad():
    torch.manual_seed(4)
    d, vocab = 64, 1000
    c_attn, c_proj = torch.randn(d, 3 * d) / math.sqrt(d), torch.randn(d, d) / math.sqrt(d)
    wte = torch.randn(vocab, d)

    def step(x):
        q, k, v = torch.addmm(torch.zeros(3 * d), x, c_attn).split(d, dim=1)
        h = x + torch.addmm(torch.zeros(d), q * k.sigmoid() + v, c_proj)
        return (h @ wte.t()).argmax(-1), h

    compiled = xacc.jit(step, device="xpu0")
    with torch.no_grad():
        for rows in (1, 3):
            x = torch.randn(rows, d)
            (ti, hi), (te, he) = compiled(x), step(x)
            torch.testing.assert_close(hi, he, rtol=1e-5, atol=1e-5)
            assert torch.equal(ti, te)
