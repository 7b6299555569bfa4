"""xacc.ir from Python: parse/print round trip, verification errors with locations,
passes, the reference interpreter on scalars and (through libtorch) on tensors."""

import pytest

import xacc
import xacc.ir as ir

SCALAR = """graph @main(%a: i64, %t: !token) -> (i64, !token) {
  %c = arith.const() {value = 3} : i64
  %x = arith.mul(%a, %c) : i64
  %y = arith.mul(%a, %c) : i64
  %z = arith.add(%x, %y) : i64
  %dead = arith.sub(%a, %c) : i64
  %t1 = io.print(%t, %z) {sep = " "} : !token
  return %z, %t1
}
"""


def test_round_trip_is_stable():
    m = ir.parse(SCALAR)
    once = m.print()
    assert ir.parse(once).print() == once


def test_interpret_scalars_and_output():
    m = ir.parse(SCALAR)
    results, printed = m.interpret("main", 7, None, capture_output=True)
    assert results == [42]
    assert printed == "42\n"


def test_passes_report_statistics_and_preserve_semantics():
    m = ir.parse(SCALAR)
    stats = m.run_passes("cse,dce", verify_each=True)
    assert stats["cse.nodes-merged"] == 1
    assert stats["dce.nodes-erased"] == 1
    assert m.interpret("main", 5, None) == [30]
    assert "arith.sub" not in m.print()


def test_unknown_pass_is_a_compile_error():
    m = ir.parse(SCALAR)
    with pytest.raises(xacc.CompileError) as e:
        m.run_passes("dce,nonsense")
    assert "unknown pass 'nonsense'" in str(e.value)


def test_parse_error_is_located():
    with pytest.raises(xacc.CompileError) as e:
        ir.parse("graph @f() -> i64 {\n  return %nope\n}\n", "bad.gir")
    msg = str(e.value)
    assert msg.startswith("bad.gir:2:10: error[E0103]: use of undefined value %nope")
    assert "^" in msg
    assert e.value.codes == ["E0103"]
    assert e.value.diagnostics[0]["line"] == 2


def test_type_error_is_located():
    text = "graph @f(%a: i64, %b: f64) -> i64 {\n  %0 = arith.add(%a, %b) : i64\n  return %0\n}\n"
    with pytest.raises(xacc.CompileError) as e:
        ir.parse(text, "types.gir")
    assert "types.gir:2:8: error[E0201]" in str(e.value)
    assert "operand types differ" in str(e.value)


def test_runtime_error_is_execution_error():
    text = (
        "graph @f(%a: i64) -> i64 {\n  %z = arith.const() {value = 0} : i64\n"
        "  %0 = arith.div(%a, %z) : i64 loc(\"prog.cml\":4:9)\n  return %0\n}\n"
    )
    m = ir.parse(text)
    with pytest.raises(xacc.ExecutionError) as e:
        m.interpret("f", 1)
    assert "prog.cml:4:9: error[E0401]: integer division by zero" in str(e.value)


def test_values_convert_both_ways():
    text = (
        "graph @f(%l: list<i64>, %s: struct<{a: i64, b: str}>) -> (i64, str, tuple<i64, str>) {\n"
        "  %i = arith.const() {value = -1} : i64\n"
        "  %x = list.get(%l, %i) : i64\n"
        "  %b = struct.get(%s) {field = \"b\"} : str\n"
        "  %t = tuple.make(%x, %b) : tuple<i64, str>\n"
        "  return %x, %b, %t\n}\n"
    )
    m = ir.parse(text)
    assert m.interpret("f", [1, 2, 9], {"a": 1, "b": "hi"}) == [9, "hi", (9, "hi")]


def test_dot_export_mentions_every_op():
    dot = ir.parse(SCALAR).to_dot()
    assert dot.startswith("digraph gir {")
    for op in ("arith.mul", "arith.add", "io.print"):
        assert op in dot
    assert "style=dashed" in dot  # the effect token edge


def test_registries_are_listed():
    names = {n for n, _ in ir.ops()}
    assert {"arith.add", "ctrl.if", "io.print", "func.call"} <= names
    assert [p for p, _ in ir.passes()][:5] == ["dce", "const-fold", "cse", "canonicalize", "inline"]
    assert {"erase-device-code", "sequence-effects"} <= {p for p, _ in ir.passes()}


torch = pytest.importorskip("torch")


@pytest.mark.skipif(not getattr(xacc._C, "has_aten", False), reason="built without libtorch")
def test_tensor_ops_interpret_through_libtorch_without_copies():
    text = """graph @main(%x: tensor<f32, [2, 3], cpu>, %y: tensor<f32, [3], cpu>) -> (tensor<f32, [2, 3], cpu>, tensor<f32, [2, 3], cpu>) {
  %0 = aten.add.Tensor(%x, %y) {alpha = 2} : tensor<f32, [2, 3], cpu>
  %1 = aten.relu.default(%0) : tensor<f32, [2, 3], cpu>
  return %1, %x
}
"""
    m = ir.parse(text)
    x, y = torch.randn(2, 3), torch.randn(3)
    out, same = m.interpret("main", x, y)
    torch.testing.assert_close(out, torch.relu(x + 2 * y))
    assert same.data_ptr() == x.data_ptr()


@pytest.mark.skipif(not getattr(xacc._C, "has_aten", False), reason="built without libtorch")
def test_tensor_shape_error_is_located():
    text = """graph @main(%x: tensor<f32, [2, 3], cpu>, %y: tensor<f32, [4], cpu>) -> tensor<f32, [2, 3], cpu> {
  %0 = aten.add.Tensor(%x, %y) : tensor<f32, [2, 3], cpu>
  return %0
}
"""
    with pytest.raises(xacc.CompileError) as e:
        ir.parse(text, "shape.gir")
    assert "shape.gir:2:8: error[E0201]" in str(e.value)
