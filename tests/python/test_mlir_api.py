"""xacc._C.mlir: the xpu target's Python API (compile GIR text, run, emit MLIR
at each stage, statistics) used by the export and compare tools."""

import pytest
import torch

import xacc
from xacc import _C

pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

CHAIN = """graph @f(%x: tensor<f32, [4, 8], cpu>, %b: tensor<f32, [8], cpu>) -> tensor<f32, [4, 8], cpu> {
  %0 = aten.add.Tensor(%x, %b) : tensor<f32, [4, 8], cpu>
  %1 = aten.relu.default(%0) : tensor<f32, [4, 8], cpu>
  return %1
}
"""

MIXED = """graph @g(%x: tensor<f32, [4, 8], cpu>, %w: tensor<f32, [8, 3], cpu>) -> (tensor<f32, [4, 3], cpu>, i64) {
  %0 = aten.tanh.default(%x) : tensor<f32, [4, 8], cpu>
  %1 = aten.mm.default(%0, %w) : tensor<f32, [4, 3], cpu>
  %2 = aten.sigmoid.default(%1) : tensor<f32, [4, 3], cpu>
  %3 = arith.const() {value = 7} : i64
  return %2, %3
}
"""


def test_compile_run_and_stats():
    e = _C.mlir.compile(CHAIN)
    x, b = torch.randn(4, 8), torch.randn(8)
    (y,) = e(x, b)
    torch.testing.assert_close(y, torch.relu(x + b))
    assert e.run([x, b])[0].shape == (4, 8)
    s = e.stats()
    assert s["regions"] == 1 and s["lowered_nodes"] == 2 and s["kernels_compiled"] + s["memory_cache_hits"] + s["disk_cache_hits"] >= 1
    assert e.device == "xpu0" and e.num_inputs == 2
    assert "region 0 (2 nodes): aten.add.Tensor aten.relu" in e.describe()


def test_mixed_graph_falls_back_for_matmul():
    e = _C.mlir.compile(MIXED)
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    y, n = e(x, w)
    torch.testing.assert_close(y, torch.sigmoid(torch.tanh(x) @ w), atol=1e-5, rtol=1e-4)
    assert n == 7
    plan = e.describe()
    assert "fallback: aten.mm" in plan and plan.count("region") == 2, plan
    assert any("aten.mm" in r for r in e.stats()["fallback_reasons"])


def test_disable_lowering_runs_everything_on_aten():
    e = _C.mlir.compile(MIXED, disable_lowering=True)
    assert e.stats()["regions"] == 0
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    torch.testing.assert_close(e(x, w)[0], torch.sigmoid(torch.tanh(x) @ w))


@pytest.mark.parametrize("stage,marker", [("kernel", "linalg.generic"), ("bufferized", "memref<4x8xf32>"),
                                          ("llvm", "define void @kernel")])
def test_emit_each_stage(stage, marker):
    text = _C.mlir.emit(CHAIN, stage)
    assert marker in text, text
    assert text == _C.mlir.compile(CHAIN).emit(stage)
    assert "fallback: aten.mm.default" in _C.mlir.emit(MIXED, stage)


def test_strided_copy_kernel_runs_without_fallback():
    # A pure copy of a transposed input bufferizes to memref.copy, which the
    # strided run-time variant lowers to a call of the runtime helper.
    gir = """graph @f(%x: tensor<f32, [2, 4, 4, 8], cpu>) -> tensor<f32, [2, 4, 4, 8], cpu> {
  %0 = aten.expand.default(%x) {size = [2, 4, 4, 8]} : tensor<f32, [2, 4, 4, 8], cpu>
  %1 = aten.clone.default(%0) : tensor<f32, [2, 4, 4, 8], cpu>
  return %1
}
"""
    e = _C.mlir.compile(gir)
    x = torch.randn(2, 4, 96).split(32, dim=2)[1].reshape(2, 4, 4, 8).transpose(1, 2)
    (y,) = e(x)
    # clone keeps the input's dim order (dense, not contiguous), as eager's does
    # (Note [Eager strides of kernel outputs]).
    assert torch.equal(y, x) and y.stride() == x.clone().stride()
    assert e.stats()["fallback_reasons"] == [], e.stats()


def test_bad_input_is_a_located_error():
    with pytest.raises(xacc.CompileError):
        _C.mlir.compile("graph @f(%x: tensor<f32, [2], cpu>) -> tensor<f32, [2], cpu> {\n  return %y\n}\n")
    with pytest.raises(xacc.CompileError, match="no graph @nope"):
        _C.mlir.compile(CHAIN, graph="nope")
    with pytest.raises(ValueError, match="unknown MLIR stage"):
        _C.mlir.emit(CHAIN, "ptx")
    with pytest.raises(xacc.BackendError, match="unknown device"):
        _C.mlir.compile(CHAIN, device="tpu0")
    e = _C.mlir.compile(CHAIN)
    with pytest.raises(TypeError, match="expects 2 inputs"):
        e(torch.randn(4, 8))
    with pytest.raises(xacc.ExecutionError):
        e(torch.randn(4, 8), torch.randn(5))  # shape mismatch inside ATen


def test_kernel_with_many_memref_arguments():
    # Seven rank-4 memrefs (77 descriptor fields): the argument pack must keep
    # every field's address stable while it grows.
    t = "tensor<f32, [2, 3, 4, 5], cpu>"
    params = ", ".join(f"%x{i}: {t}" for i in range(6))
    body = "\n".join(f"  %s{i} = aten.add.Tensor(%s{i - 1}, %x{i}) : {t}" if i else f"  %s0 = aten.neg.default(%x0) : {t}"
                     for i in range(6))
    e = _C.mlir.compile(f"graph @f({params}) -> {t} {{\n{body}\n  return %s5\n}}\n")
    xs = [torch.randn(2, 3, 4, 5) for _ in range(6)]
    (y,) = e(*xs)
    torch.testing.assert_close(y, -xs[0] + sum(xs[1:]))
    assert e.stats()["regions"] == 1 and e.stats()["fallback_reasons"] == []


def test_region_after_a_merging_reshape_still_lowers():
    # linear -> view [B*T, D] -> [B, T, D] -> gelu: the reshape stays an ATen
    # view and the pointwise op after it still becomes a kernel.
    gir = """graph @f(%x: tensor<f32, [8, 16], cpu>) -> tensor<f32, [2, 4, 16], cpu> {
  %0 = aten.view.default(%x) {size = [2, 4, 16]} : tensor<f32, [2, 4, 16], cpu>
  %1 = aten.gelu.default(%0) : tensor<f32, [2, 4, 16], cpu>
  return %1
}
"""
    e = _C.mlir.compile(gir)
    x = torch.randn(8, 16)
    torch.testing.assert_close(e(x)[0], torch.nn.functional.gelu(x.view(2, 4, 16)), atol=1e-5, rtol=1e-4)
    plan = e.describe()
    assert "fallback: aten.view.default" in plan and "region 0 (1 nodes): aten.gelu.default" in plan, plan
    assert e.stats()["fallback_reasons"] == ["aten.view.default: reshape that splits or merges dims (kept as an ATen view)"]
