"""End to end: `camel main.cml -> opt.cml -> std::onnx` (a user reducer, then the
ONNX export of the program's tensor part), and the same pipeline driven by
cmlconfig.json with `camel` and no arguments. The model runs in onnxruntime and
reproduces what the camel run printed (allclose); the random tensor the program
makes at run time is the model's input, fed with the values the run printed."""
import ast
import os
import subprocess

import numpy as np
import pytest

from buildtree import build_dir, camel_binary

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

BUILD = str(build_dir())
CAMEL = camel_binary()
HAVE_ATEN = os.path.exists(os.path.join(BUILD, "lib", "xacc", "executors", "libxacc_exec_aten.so"))
pytestmark = pytest.mark.skipif(not HAVE_ATEN, reason="the aten executor (tensor module) is not built")

PROGRAM = """\
import { Tensor, ones, matmul, exp, log, sum, reshape, transpose, argmax, max, concat, full, eye,
         add, subtract, multiply, divide, random, pow } from tensor

func layer(x: Tensor, w: Tensor): Tensor {
  return exp(divide(add(matmul(x, w), multiply(ones([2, 2]), 2.0)), 10.0))
}

func main(): int {
  let noise = random([2, 3], 0.0, 1.0)
  println(noise)
  let x = add(reshape([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]), noise)
  let w = reshape([[0.5, -1.0], [0.25, 2.0], [1.5, -0.5]], [3, 2])
  let z = subtract(layer(x, w), eye(2))
  println(z)
  println(sum(z, 1))
  println(argmax(z, 0))
  println(max(z, 1))
  println(log(transpose(z)))
  println(concat(z, full([1, 2], 3.0), 0))
  println(pow(z, 2.0))
  println(sum(z))
  return 0
}
"""

# A user reducer: the standard passes (inlining `layer` into main) through gir::pass.
OPT = """\
macro func main(g: string): string {
  return gir::pass(g, "std")
}
"""


def values(line):
    return np.array(ast.literal_eval(line.replace("true", "True").replace("false", "False")), dtype=np.float64)


def check_model(model_path, stdout):
    lines = stdout.strip().splitlines()
    model = onnx.load(str(model_path))
    onnx.checker.check_model(model, full_check=True)
    ops = [n.op_type for n in model.graph.node]
    # `layer` was inlined by the user reducer, so its ops are part of main's tensor part.
    for op in ["MatMul", "Exp", "Div", "ReduceSum", "ArgMax", "ReduceMax", "Transpose", "Log", "Concat", "Pow"]:
        assert op in ops, ops
    # Constants are initializers; the random tensor made at run time is the one input.
    assert len(model.graph.input) == 1
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [2, 3]
    assert len(model.graph.initializer) >= 5
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    noise = values(lines[0])
    got = session.run(None, {model.graph.input[0].name: noise})
    printed = lines[1:]
    # Every tensor the program prints (the whole-tensor sum too: aten.sum then
    # aten.item, which is outside the tensor part, so the sum is an output).
    assert len(got) == 8 and len(printed) == 8
    for out, line in zip(got, printed):
        want = values(line)
        assert out.shape == want.shape
        # camel prints 6 significant digits
        np.testing.assert_allclose(out.astype(np.float64), want, rtol=2e-5, atol=2e-6)


def test_camel_reducer_pipeline_exports_onnx_that_onnxruntime_reproduces(tmp_path):
    (tmp_path / "main.cml").write_text(PROGRAM)
    (tmp_path / "opt.cml").write_text(OPT)
    proc = subprocess.run([CAMEL, "main.cml", "->", "opt.cml", "->", "std::onnx=model.onnx"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "camel: std::onnx wrote model.onnx" in proc.stderr
    check_model(tmp_path / "model.onnx", proc.stdout)


def test_cmlconfig_drives_camel_with_no_arguments(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.cml").write_text(PROGRAM)
    (tmp_path / "opt.cml").write_text(OPT)
    (tmp_path / "cmlconfig.json").write_text(
        '{\n  "entry": "src/main.cml",\n  "pipeline": ["opt.cml", "std::onnx=out/model.onnx"],\n'
        '  "executors": {"runtime": {"scheduler": "par", "threads": 2}}\n}\n')
    (tmp_path / "out").mkdir()
    (tmp_path / "deeper").mkdir()
    # Found upward from the working directory; paths are relative to the file.
    proc = subprocess.run([CAMEL], cwd=tmp_path / "deeper", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    check_model(tmp_path / "out" / "model.onnx", proc.stdout)


def test_onnx_of_an_array_made_at_run_time_is_a_located_error(tmp_path):
    (tmp_path / "main.cml").write_text(
        "import { reshape } from tensor\n"
        "import { get_env } from sys\n"
        "func main(): int {\n"
        "  let xs = [1.0, float(len(get_env(\"HOME\")))]\n"
        "  println(reshape(xs, [2, 1]))\n"
        "  return 0\n"
        "}\n")
    proc = subprocess.run([CAMEL, "main.cml", "->", "std::opt", "->", "std::onnx"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 1
    assert "main.cml:5:11: error[E0801]: std::onnx: tensor::reshape: an array operand must be a compile-time constant" in proc.stderr
