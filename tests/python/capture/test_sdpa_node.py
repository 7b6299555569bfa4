"""scaled_dot_product_attention is recorded as the kernel eager runs (Note
[Attention as one node] in xacc/_src/capture/sdpa.py): one flash-attention node
where eager's backend choice is flash attention, with eager's exact values and
output strides, in inference and in training (its backward is eager's
backward kernel); the math decomposition elsewhere."""

import pytest
import torch
import torch.nn.functional as F

import xacc
from xacc._C import capture as _C

DEVICES = ["cpu"] + (["xpu0"] if _C.device_available("xpu0") else [])
FLASH = "aten._scaled_dot_product_flash_attention_for_cpu"


def _sdpa(q, k, v, mask, kw):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)


def _inputs(dtype, heads_kv=4, q_layout="contiguous", L=5, S=7, E=8):
    g = torch.Generator().manual_seed(0)
    q = torch.randn(2, L, 4, E, generator=g).transpose(1, 2) if q_layout == "transposed" else \
        torch.randn(2, 4, L, E, generator=g)
    k = torch.randn(2, heads_kv, S, E, generator=g)
    v = torch.randn(2, heads_kv, S, E, generator=g)
    return q.to(dtype), k.to(dtype), v.to(dtype)


def _mask(kind, dtype, L=5, S=7):
    g = torch.Generator().manual_seed(1)
    if kind is None:
        return None
    if kind == "bool4d":
        return torch.rand(2, 1, L, S, generator=g) > 0.3
    if kind == "bool2d":
        return torch.rand(L, S, generator=g) > 0.3
    if kind == "float4d":
        return torch.randn(2, 4, L, S, generator=g).to(dtype)
    return torch.randn(1, 1, 1, S, generator=g).to(dtype)  # float, broadcast over batch, heads, queries


CASES = [
    (torch.float32, None, {}, 4, "contiguous"),
    (torch.float32, None, {"is_causal": True}, 4, "contiguous"),
    (torch.float32, "bool4d", {}, 4, "contiguous"),
    (torch.float32, "bool2d", {}, 4, "contiguous"),
    (torch.float32, "float4d", {}, 4, "contiguous"),
    (torch.float32, "floatb", {"scale": 0.3}, 4, "contiguous"),
    (torch.float32, None, {"enable_gqa": True}, 2, "contiguous"),
    (torch.float32, "bool4d", {"is_causal": False, "enable_gqa": True}, 2, "transposed"),
    (torch.float32, None, {"is_causal": True}, 4, "transposed"),
    (torch.float64, "bool4d", {}, 4, "contiguous"),
    (torch.bfloat16, None, {"is_causal": True}, 4, "contiguous"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_flash_node_is_eager_bit_for_bit(device, case):
    dtype, mask_kind, kw, heads_kv, layout = CASES[case]
    q, k, v = _inputs(dtype, heads_kv, layout)
    mask = _mask(mask_kind, dtype)
    with torch.no_grad():
        want = _sdpa(q, k, v, mask, kw)
        out = xacc.explain(_sdpa, device=device)(q, k, v, mask, kw)
        got = xacc.jit(_sdpa, device=device)(q, k, v, mask, kw)
    assert out.graph_count == 1 and out.graph_break_count == 0, out
    assert out.graphs[0].count(FLASH) == 1, out.graphs[0]
    assert "aten.bmm" not in out.graphs[0] and "softmax" not in out.graphs[0], out.graphs[0]
    assert torch.equal(got, want)
    assert got.stride() == want.stride() and got.dtype == want.dtype


def test_output_layout_seen_by_python_is_eagers():
    # The flash kernel lays its output out like the query: Python code reading
    # the layout sees eager's answer (the math decomposition's is contiguous).
    def f(q, k, v):
        o = F.scaled_dot_product_attention(q, k, v)
        return o, o.is_contiguous(), o.stride()

    q, k, v = _inputs(torch.float32, q_layout="transposed")
    with torch.no_grad():
        want = f(q, k, v)
        got = xacc.jit(f)(q, k, v)
    assert want[1] is False
    assert got[1:] == want[1:]
    assert torch.equal(got[0], want[0])


@pytest.mark.parametrize("what", ["dropout", "3d", "value_dim"])
def test_math_choices_keep_the_decomposition(what):
    q, k, v = _inputs(torch.float32)
    kw = {}
    if what == "dropout":
        kw = {"dropout_p": 0.5}
    elif what == "3d":
        q, k, v = q[0], k[0], v[0]
    else:
        v = torch.randn(2, 4, 7, 16)
    with torch.no_grad():
        out = xacc.explain(_sdpa)(q, k, v, None, kw)
        if what != "dropout":
            assert torch.equal(xacc.jit(_sdpa)(q, k, v, None, kw), _sdpa(q, k, v, None, kw))
    assert out.graph_break_count == 0
    assert FLASH not in out.graphs[0] and "aten.bmm" in out.graphs[0], out.graphs[0]


TRAIN = [(None, {"is_causal": True}, 4, "contiguous"), ("bool4d", {}, 4, "contiguous"),
         ("float4d", {}, 4, "transposed"), ("floatb", {"scale": 0.3}, 4, "contiguous")]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(TRAIN)))
def test_training_through_the_flash_node_gives_eagers_gradients_bit_for_bit(device, case):
    # Under grad the node is recorded too, and the GIR autodiff differentiates
    # it with eager's own backward kernel (of the output and logsumexp).
    from xacc._src.capture import training
    mask_kind, kw, heads_kv, layout = TRAIN[case]
    q, k, v = (t.requires_grad_() for t in _inputs(torch.float32, heads_kv, layout))
    mask = _mask(mask_kind, torch.float32)

    def f(q, k, v, mask):
        return (_sdpa(q, k, v, mask, kw) ** 2).sum()

    out = xacc.explain(f, device=device)(q, k, v, mask)
    assert out.graphs[0].count(FLASH) == 1 and "aten.bmm" not in out.graphs[0], out.graphs[0]
    f(q, k, v, mask).backward()
    want = [t.grad.clone() for t in (q, k, v)]
    before = training.counters()
    jf = xacc.jit(f, device=device)
    for _ in range(2):
        for t in (q, k, v):
            t.grad = None
        loss = jf(q, k, v, mask)
        loss.backward()
    assert training.counters()["compiled_backward_runs"] == before["compiled_backward_runs"] + 2
    assert training.counters()["training_fallbacks"] == before["training_fallbacks"]
    # xpu0's kernels sum in their own order (the loss); cpu is eager's bits.
    for got, ref in [(loss, f(q, k, v, mask))] + [(t.grad, g) for g, t in zip(want, (q, k, v))]:
        if device == "cpu":
            assert torch.equal(got, ref)
        else:
            torch.testing.assert_close(got, ref)


@pytest.mark.parametrize("what", ["gqa", "mask_requires_grad"])
def test_training_cases_the_kernel_does_not_cover_keep_the_decomposition(what):
    q, k, v = (t.requires_grad_() for t in _inputs(torch.float32, 2 if what == "gqa" else 4))
    mask = _mask("float4d", torch.float32).requires_grad_() if what == "mask_requires_grad" else None
    kw = {"enable_gqa": True} if what == "gqa" else {}

    def f(q, k, v, mask):
        return _sdpa(q, k, v, mask, kw).sum()

    out = xacc.explain(f)(q, k, v, mask)
    assert FLASH not in out.graphs[0]
    leaves = [t for t in (q, k, v, mask) if t is not None]
    xacc.jit(f)(q, k, v, mask).backward()
    grads = [t.grad.clone() for t in leaves]
    for t in leaves:
        t.grad = None
    f(q, k, v, mask).backward()
    for g, t in zip(grads, leaves):
        torch.testing.assert_close(g, t.grad)


def test_eager_errors_are_eagers():
    q, k, v = _inputs(torch.float32, heads_kv=2)  # head counts differ without enable_gqa
    with torch.no_grad(), pytest.raises(RuntimeError) as want:
        _sdpa(q, k, v, None, {})
    with torch.no_grad(), pytest.raises(RuntimeError) as got:
        xacc.jit(_sdpa)(q, k, v, None, {})
    assert str(got.value) == str(want.value)


def test_a_function_mode_sees_the_call_itself():
    from test_function_modes import Counting

    def f(q, k, v):
        with Counting() as m:
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return o, m.names

    q, k, v = _inputs(torch.float32)
    with torch.no_grad():
        want = f(q, k, v)
        got = xacc.jit(f)(q, k, v)
    assert want[1] == ["scaled_dot_product_attention"]
    assert got[1] == want[1]
    assert torch.equal(got[0], want[0])
