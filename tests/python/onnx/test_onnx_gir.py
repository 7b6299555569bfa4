"""ONNX export of GIR tensor graphs (`xacc-opt --emit=onnx`, csrc/lib/onnx): the
model passes onnx.checker, and onnxruntime computes what the GIR interpreter
(libtorch underneath) computes on the same inputs."""
import os
import shutil
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")

import xacc.ir as xir  # noqa: E402

BUILD = os.environ.get("XACC_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..", "build"))
XACC_OPT = os.path.join(BUILD, "bin", "xacc-opt")
if not os.path.exists(XACC_OPT):
    XACC_OPT = shutil.which("xacc-opt")

ARITH = """
graph @model(%x: tensor<f64, [2, 3], cpu>, %w: tensor<f64, [3, 4], cpu>, %s: f64) -> (tensor<f64, [2, 4], cpu>, tensor<f64, [2], cpu>, tensor<i64, [2], cpu>, tensor<bool, [2, 4], cpu>, tensor<f64, [4, 2], cpu>, tensor<f64, [], cpu>) {
  %b = aten.ones() {size = [4], dtype = "f64"} : tensor<f64, [4], cpu>
  %0 = aten.matmul(%x, %w) : tensor<f64, [2, 4], cpu>
  %1 = aten.add.Tensor(%0, %b) {alpha = 2} : tensor<f64, [2, 4], cpu>
  %2 = aten.mul.Scalar(%1) {other = 0.5} : tensor<f64, [2, 4], cpu>
  %3 = aten.sub.Tensor(%2, %s) : tensor<f64, [2, 4], cpu>
  %4 = aten.tanh(%3) : tensor<f64, [2, 4], cpu>
  %5 = aten.exp(%4) : tensor<f64, [2, 4], cpu>
  %6 = aten.div.Tensor(%5, %1) : tensor<f64, [2, 4], cpu>
  %7 = aten.pow.Tensor_Scalar(%6) {exponent = 2} : tensor<f64, [2, 4], cpu>
  %8 = aten.sum.dim_IntList(%7) {dim = [1]} : tensor<f64, [2], cpu>
  %9 = aten.argmax(%7) {dim = 1} : tensor<i64, [2], cpu>
  %10 = aten.gt.Scalar(%7) {other = 0.01} : tensor<bool, [2, 4], cpu>
  %11 = aten.t(%7) : tensor<f64, [4, 2], cpu>
  %12 = aten.sum(%11) : tensor<f64, [], cpu>
  return %7, %8, %9, %10, %11, %12
}
"""

SHAPES = """
graph @shapes(%x: tensor<f32, [2, 3], cpu>, %y: tensor<f32, [2, 3], cpu>) -> (tensor<f32, [4, 3], cpu>, tensor<f32, [2], cpu>, tensor<i64, [2], cpu>, tensor<f32, [3, 2], cpu>, tensor<f32, [2, 3], cpu>, tensor<f32, [2, 3], cpu>, tensor<f32, [3], cpu>, tensor<f32, [1, 2, 3], cpu>, tensor<f32, [2, 3], cpu>, tensor<bool, [2, 3], cpu>) {
  %0 = aten.cat(%x, %y) {dim = 0} : tensor<f32, [4, 3], cpu>
  %1, %2 = aten.max.dim(%x) {dim = 1} : (tensor<f32, [2], cpu>, tensor<i64, [2], cpu>)
  %3 = aten.reshape(%y) {shape = [3, 2]} : tensor<f32, [3, 2], cpu>
  %4 = aten.lt.Tensor(%x, %y) : tensor<bool, [2, 3], cpu>
  %5 = aten.where.self(%4, %x, %y) : tensor<f32, [2, 3], cpu>
  %6 = aten.relu(%5) : tensor<f32, [2, 3], cpu>
  %7 = aten.sigmoid(%6) : tensor<f32, [2, 3], cpu>
  %8 = aten.log(%7) : tensor<f32, [2, 3], cpu>
  %9 = aten._softmax(%x) {dim = 1, half_to_float = false} : tensor<f32, [2, 3], cpu>
  %10 = aten.select.int(%9) {dim = 0, index = 1} : tensor<f32, [3], cpu>
  %11 = aten.unsqueeze(%x) {dim = 0} : tensor<f32, [1, 2, 3], cpu>
  %12 = aten.eq.Tensor(%x, %x) : tensor<bool, [2, 3], cpu>
  %13 = aten.add.Tensor(%12, %x) : tensor<f32, [2, 3], cpu>
  %14 = aten.ne.Scalar(%13) {other = 1} : tensor<bool, [2, 3], cpu>
  return %0, %1, %2, %3, %8, %9, %10, %11, %13, %14
}
"""


def export(tmp_path, text, graph=None, expect_ok=True):
    src = tmp_path / "m.gir"
    src.write_text(text)
    out = tmp_path / "m.onnx"
    cmd = [XACC_OPT, str(src), "--emit=onnx", "-o", str(out)]
    if graph:
        cmd += ["--onnx-graph", graph]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if expect_ok:
        assert proc.returncode == 0, proc.stderr
    return proc, out


def compare(tmp_path, text, graph, feeds):
    _, path = export(tmp_path, text, graph)
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == list(feeds)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {k: np.asarray(v) for k, v in feeds.items()})
    args = [torch.from_numpy(np.asarray(v)) if isinstance(v, np.ndarray) else v for v in feeds.values()]
    want = xir.parse(text).interpret(graph, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.numpy()
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
    return model


def test_arithmetic_and_reductions_match_the_interpreter(tmp_path):
    rng = np.random.default_rng(0)
    model = compare(tmp_path, ARITH, "model",
                    {"x": rng.random((2, 3)), "w": rng.random((3, 4)), "s": 0.25})
    ops = [n.op_type for n in model.graph.node]
    assert ops[:3] == ["MatMul", "Mul", "Add"]  # alpha = 2 scales `other` first
    # aten.ones with constant arguments is an initializer, not an input.
    assert [list(i.dims) for i in model.graph.initializer][0] == [4]
    assert model.opset_import[0].version == 17


def test_shapes_comparisons_and_promotion_match_the_interpreter(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    y = rng.standard_normal((2, 3)).astype(np.float32)
    model = compare(tmp_path, SHAPES, "shapes", {"x": x, "y": y})
    ops = [n.op_type for n in model.graph.node]
    for op in ["Concat", "ReduceMax", "ArgMax", "Reshape", "Less", "Where", "Softmax", "Gather",
               "Unsqueeze", "Equal", "Not", "Cast"]:
        assert op in ops


def test_unsupported_op_is_named_with_its_location(tmp_path):
    text = """graph @f(%x: tensor<f32, [4], cpu>) -> tensor<f32, [4], cpu> {
  %0 = aten.relu(%x) : tensor<f32, [4], cpu>
  %1 = aten.cumsum(%0) {dim = 0} : tensor<f32, [4], cpu>
  return %1
}
"""
    proc, out = export(tmp_path, text, expect_ok=False)
    assert proc.returncode == 1
    assert "m.gir:3:8: error[E0801]: std::onnx: aten.cumsum: no ONNX translation for this op" in proc.stderr


def test_graph_without_tensor_ops_is_an_error(tmp_path):
    text = """graph @f(%a: i64) -> i64 {
  %0 = arith.add(%a, %a) : i64
  return %0
}
"""
    proc, _ = export(tmp_path, text, expect_ok=False)
    assert proc.returncode == 1
    assert "error[E0802]: std::onnx: graph @f has no tensor operations to export" in proc.stderr
