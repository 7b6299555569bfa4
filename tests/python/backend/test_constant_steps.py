"""Input-independent steps of an xpu0 executable are computed on the first call
only (Note [Input-independent steps], csrc/lib/backend/mlir/ExecutableConstants.cpp):
`arange` position ids, masks from `full`/`triu`, and their views. A value shared by
all calls must never reach the caller or an in-place write: such chains run on
every call, and a caller that mutates a result sees the next call unaffected.
stats(): 'constant_steps' and 'constant_steps_skipped'.
"""
from __future__ import annotations

import pytest
import torch

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

HEAD = "graph @g(%x: tensor<f32, [4, 8], cpu>) -> {ret} {{\n"
CHAIN = ('  %a = aten.arange.default() {end = 8, dtype = "f32"} : tensor<f32, [8], cpu>\n'
         "  %u = aten.unsqueeze.default(%a) {dim = 0} : tensor<f32, [1, 8], cpu>\n"
         "  %t = aten.triu.default(%u) {diagonal = 1} : tensor<f32, [1, 8], cpu>\n"
         "  %y = aten.add.Tensor(%x, %t) : tensor<f32, [4, 8], cpu>\n")
F = "tensor<f32, [4, 8], cpu>"


def graph(ret: str, body: str, results: str) -> str:
    return HEAD.format(ret=ret) + CHAIN + body + f"  return {results}\n}}\n"


def expected_mask():
    return torch.arange(8.0).unsqueeze(0).triu(1)


def test_mask_chain_is_computed_once_and_reused():
    e = _C.mlir.compile(graph(F, "", "%y"))
    for _ in range(4):
        x = torch.randn(4, 8)
        (y,) = e(x)
        torch.testing.assert_close(y, x + expected_mask())
    s = e.stats()
    assert s["constant_steps"] == 3, s
    assert s["constant_steps_skipped"] == 9, s  # 3 steps on calls 2, 3 and 4
    assert "constant: computed on the first call only" in e.describe()


def test_a_constant_returned_is_fresh_on_every_call():
    # %u is a view of %a: handing it out would let the caller write into the
    # shared arange; it is returned, so the chain below it runs every call.
    e = _C.mlir.compile(graph(f"({F}, tensor<f32, [1, 8], cpu>)", "", "%y, %u"))
    x = torch.randn(4, 8)
    for _ in range(3):
        y, u = e(x)
        torch.testing.assert_close(u, torch.arange(8.0).unsqueeze(0))
        torch.testing.assert_close(y, x + expected_mask())
        u.mul_(100)  # the caller owns it
    s = e.stats()
    assert s["constant_steps"] == 0, s


def test_type_as_may_return_its_operand_so_it_does_not_share():
    # type_as (CompositeImplicitAutograd) returns self when the dtype already
    # matches: a kept triu value would reach the caller.
    body = f"  %c = aten.type_as.default(%t, %x) : tensor<f32, [1, 8], cpu>\n"
    e = _C.mlir.compile(graph(f"({F}, tensor<f32, [1, 8], cpu>)", body, "%y, %c"))
    x = torch.randn(4, 8)
    for _ in range(3):
        y, c = e(x)
        torch.testing.assert_close(c, expected_mask())
        torch.testing.assert_close(y, x + expected_mask())
        c.add_(7)
    # arange and unsqueeze are still computed once; triu, whose value type_as
    # may hand out, runs on every call
    assert (e.stats()["constant_steps"], e.stats()["constant_steps_skipped"]) == (2, 4), e.stats()
    assert "triu.default\n  (constant" not in e.describe()


def test_an_in_place_write_into_a_constant_keeps_it_per_call():
    # zeros + add_(x): the write would accumulate into one shared tensor.
    g = (f"graph @g(%tok: !token, %x: {F}) -> (!token, {F}) {{\n"
         f'  %z = aten.zeros.default() {{size = [4, 8]}} : {F}\n'
         f"  %t1, %z1 = aten.add_.Tensor(%tok, %z, %x) : (!token, {F})\n"
         f"  %w = aten.mul.Tensor(%z1, %x) : {F}\n"
         f"  return %t1, %w\n}}\n")
    e = _C.mlir.compile(g)
    for _ in range(3):
        x = torch.randn(4, 8)
        (w,) = e(x)
        torch.testing.assert_close(w, x * x)
    assert e.stats()["constant_steps"] == 0, e.stats()


def test_constants_from_an_inference_mode_call_serve_autograd_later():
    e = _C.mlir.compile(graph(F, "", "%y"))
    with torch.inference_mode():
        (y0,) = e(torch.randn(4, 8))
    torch.testing.assert_close(y0[0], expected_mask()[0] + y0[0] - expected_mask()[0])
    x = torch.randn(4, 8, requires_grad=True)
    (y,) = e(x)
    assert not y.is_inference()
    torch.testing.assert_close(y.detach(), x.detach() + expected_mask())
    assert e.stats()["constant_steps"] == 3


def test_off_switch_runs_every_step(monkeypatch):
    monkeypatch.setenv("XACC_CONSTANT_STEPS", "0")  # read at each compile
    e = _C.mlir.compile(graph(F, "", "%y"))
    for _ in range(2):
        x = torch.randn(4, 8)
        torch.testing.assert_close(e(x)[0], x + expected_mask())
    assert (e.stats()["constant_steps"], e.stats()["constant_steps_skipped"]) == (0, 0), e.stats()
