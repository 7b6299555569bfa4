"""max_pool2d_with_indices on xpu0 kernels (AtenReductionRules.cpp): values and
indices equal to ATen's CPU kernel bit for bit, on the inputs where an argmax
can differ: ties (the first position wins), NaN (the last NaN wins), -inf
everywhere, -0.0 against +0.0, channels-last and sliced inputs, strides,
dilations, rank 3; and the training graph of a conv block keeps the pool in a
kernel."""
from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import xacc
from xacc import _C
from gir_builder import Program

F32 = torch.float32

POOLS = [dict(kernel_size=[2, 2]),
         dict(kernel_size=[3, 2], stride=[2, 1], dilation=[1, 2]),
         dict(kernel_size=[3], stride=[2]),
         dict(kernel_size=[2, 2], stride=[1, 1]),  # overlapping windows
         dict(kernel_size=[1, 3], stride=[1, 2])]


def edge_inputs(shape, seed):
    g = torch.Generator().manual_seed(seed)
    ties = torch.randint(-2, 2, shape, generator=g).float()
    nan = torch.randn(shape, generator=g)
    flat = nan.view(-1)
    flat[::7] = float("nan")
    flat[3::11] = float("nan")
    flat[5::13] = float("-inf")
    zeros = torch.zeros(shape)
    zeros.view(-1)[::2] = -0.0
    return {"ties": ties, "nan": nan, "all -inf": torch.full(shape, float("-inf")), "signed zeros": zeros}


def compile_pool(shape, attrs):
    p = Program()
    x = p.param(F32, shape)
    pool = p.op("aten.max_pool2d_with_indices.default", x, **attrs)
    p.out(pool.result(0))
    p.out(pool.result(1))
    e = _C.mlir.compile(p.gir("pool"))
    return p, e


def assert_same(got, ref, where):
    (gv, gi), (rv, ri) = got, ref
    assert gi.dtype == torch.int64 and torch.equal(gi, ri), f"{where}: indices differ"
    assert torch.equal(gv.isnan(), rv.isnan()), f"{where}: NaN positions differ"
    ok = ~rv.isnan()
    assert torch.equal(gv[ok], rv[ok]), f"{where}: values differ"
    assert torch.equal(gv.signbit(), rv.signbit()), f"{where}: signs of zero differ"


@pytest.mark.parametrize("attrs", POOLS, ids=lambda a: str(a))
@pytest.mark.parametrize("shape", [(2, 3, 9, 10), (3, 7, 8)], ids=lambda s: "x".join(map(str, s)))
def test_pool_matches_aten_bit_for_bit(shape, attrs):
    p, e = compile_pool(shape, attrs)
    for name, x in edge_inputs(shape, seed=len(shape)).items():
        for layout, xin in (("contiguous", x),
                            ("channels last", x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else x),
                            ("sliced", torch.cat([x, x], dim=-1)[..., : x.shape[-1]])):
            got = e.run([xin])
            ref = p.eager([xin])
            assert_same(got, ref, f"{name}/{layout}")
    s = e.stats()
    assert s["fallback_nodes"] == 0 and not s["fallback_reasons"] and s["region_fallback_runs"] == 0, e.describe()


def test_conv_block_training_keeps_the_pool_in_a_kernel(monkeypatch):
    from xacc._src.capture import training
    built = []
    real = training.build

    def recording(*a, **k):
        r = real(*a, **k)
        built.append(r)
        return r

    monkeypatch.setattr(training, "build", recording)
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def loss(x, y):
        h = F.max_pool2d(F.relu(conv(x)), 2)
        return F.cross_entropy(h.flatten(1)[:, :10], y)

    x = torch.randint(-2, 3, (4, 3, 8, 8)).float()  # ties in the pooling windows
    y = torch.randint(0, 10, (4,))
    ref = loss(x, y)
    ref.backward()
    want = [conv.weight.grad.clone(), conv.bias.grad.clone()]
    conv.zero_grad()
    xacc._src.jit.reset()
    jl = xacc.jit(loss, device="xpu0")
    for _ in range(2):
        conv.zero_grad()
        got = jl(x, y)
        got.backward()
    torch.testing.assert_close(got, ref)
    torch.testing.assert_close(conv.weight.grad, want[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(conv.bias.grad, want[1], rtol=1e-5, atol=1e-5)
    runners = [r for r in built if r is not None]
    assert len(runners) == 1
    fwd, bwd = runners[0][0].forward_graph, runners[0][0].backward_graph
    plan = fwd.describe()
    lines = plan.splitlines()
    assert any(ln.startswith("region") and "aten.max_pool2d_with_indices" in ln for ln in lines), plan
    assert not any(ln.startswith("fallback") and "max_pool2d" in ln for ln in lines), plan
    # The input needs no gradient: the convolution's input gradient is masked off.
    assert "output_mask = [false, true, true]" in bwd.text(), bwd.text()


def test_rows_split_across_threads_keep_absolute_indices():
    # Large enough to be split over dim 0 across two threads: each chunk's
    # loop indices are chunk-relative, and the Iota reads only H and W.
    n = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        p, e = compile_pool((64, 16, 32, 32), dict(kernel_size=[2, 2]))
        x = torch.randint(-3, 3, (64, 16, 32, 32)).float()
        assert_same(e.run([x]), p.eager([x]), "split")
    finally:
        torch.set_num_threads(n)
