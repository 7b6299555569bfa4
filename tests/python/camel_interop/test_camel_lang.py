"""camel_lang from Python: load a Camel module, call its exported functions
with Python values and get Python values back (Python -> Camel -> Python
round trips), argument checking against the declared types, located compile
and runtime errors, Camel output on sys.stdout, and the import hook.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

camel_lang = pytest.importorskip("camel_lang")
_C = pytest.importorskip("xacc._C")
if not hasattr(_C, "camel"):
    pytest.skip("xacc._C built without the Camel front end", allow_module_level=True)

import xacc  # noqa: E402

HERE = Path(__file__).resolve().parent
CML = HERE / "cml"


@pytest.fixture(scope="module")
def values() -> camel_lang.CamelModule:
    return camel_lang.load(CML / "values.cml")


def test_module_shape(values) -> None:
    assert values.__name__ == "values"
    assert values.__file__ == str(CML / "values.cml")
    assert "add" in values.__all__ and "older" in values.__all__
    assert "add(a: int, b: int): int" in values.add.__doc__
    assert "Person" not in values.__all__  # types are not functions


@pytest.mark.parametrize(
    "fn,args,expected",
    [
        ("add", (2, 40), 42),
        ("half", (5.0,), 2.5),
        ("half", (5,), 2.5),  # an int where a float is declared
        ("negate", (True,), False),
        ("shout", ("héllo",), "héllo!"),
        ("doubled", ([1, 2, 3],), [2, 4, 6]),
        ("doubled", ([],), []),
        ("total", ([1.5, 2, 3.25],), 6.75),
        ("swap", ((7, "x"),), ("x", 7)),
        ("older", ({"name": "ada", "age": 36},), {"name": "ada", "age": 37}),
        ("older", ({"age": 36, "name": "ada"},), {"name": "ada", "age": 37}),  # key order
        ("names", ([{"name": "a", "age": 1}, {"name": "b", "age": 2}],), ["a", "b"]),
        ("nested", ({"tag": "t", "pts": [(1, 2), (3, 4)]},), 14),
    ],
)
def test_round_trip(values, fn: str, args: tuple, expected) -> None:
    result = getattr(values, fn)(*args)
    assert result == expected
    assert type(result) is type(expected)


def test_any_passes_values_through_unchanged(values) -> None:
    for v in (1, 2.5, True, "s", [1, [2, "x"]], (1, (2.5, False)), {"a": [1], "b": {"c": "d"}}):
        assert values.same(v) == v
    assert values.same(None) is None


def test_tensor_round_trip_is_zero_copy(values) -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(6.0).reshape(2, 3)
    back = values.same(t)
    assert isinstance(back, torch.Tensor)
    assert back.data_ptr() == t.data_ptr()
    back[0, 0] = 42.0  # the same storage
    assert t[0, 0].item() == 42.0
    # Tensors nested in containers keep their identity too.
    pair = values.same([t, {"w": t}])
    assert pair[0].data_ptr() == t.data_ptr() and pair[1]["w"].data_ptr() == t.data_ptr()


def test_overloads_pick_by_argument_types(values) -> None:
    assert values.add(1, 2) == 3
    assert values.add(1.0, 2.0) == 3.5  # add(float, float) adds 0.5


def test_with_arguments(values) -> None:
    assert values.scaled(7, with_args=(3,)) == 21
    with pytest.raises(TypeError, match="with-argument"):
        values.scaled(7)


def test_argument_errors(values) -> None:
    with pytest.raises(TypeError, match=r"argument 'b' of add\(\): expected int, got string"):
        values.add(1, "2")
    with pytest.raises(TypeError, match=r"\[1\]: expected int, got string"):
        values.doubled([1, "x"])
    with pytest.raises(TypeError, match="missing field 'age'"):
        values.older({"name": "x"})
    with pytest.raises(TypeError, match="unexpected field 'extra'"):
        values.older({"name": "x", "age": 1, "extra": 2})
    with pytest.raises(TypeError, match="takes 2 arguments"):
        values.add(1)
    with pytest.raises(TypeError, match="64 bits"):
        values.add(1, 2**70)
    with pytest.raises(TypeError, match="cannot convert"):
        values.same(object())


def test_runtime_error_is_located(values) -> None:
    with pytest.raises(xacc.ExecutionError) as info:
        values.divide(1, 0)
    text = str(info.value)
    assert "division by zero" in text
    assert "values.cml:" in text
    assert info.value.diagnostics[0]["line"] > 0
    # The module keeps working after a runtime error.
    assert values.divide(9, 3) == 3


def test_camel_output_goes_to_sys_stdout(values, capsys) -> None:
    print("before")
    assert values.greet("camel") == 5
    print("after")
    assert capsys.readouterr().out == "before\nhello, camel\nafter\n"


def test_compile_error(tmp_path: Path) -> None:
    with pytest.raises(xacc.CompileError) as info:
        camel_lang.load(CML / "broken.cml")
    assert "broken.cml:2:" in str(info.value)
    with pytest.raises(FileNotFoundError):
        camel_lang.load(tmp_path / "missing.cml")


def test_check_and_run(tmp_path: Path, capsys) -> None:
    prog = tmp_path / "prog.cml"
    prog.write_text(textwrap.dedent("""\
        module prog
        func main(): int sync {
            println("running")
            return 3
        }
        """))
    camel_lang.check(prog)
    assert camel_lang.run(prog) == 3
    assert capsys.readouterr().out == "running\n"


def test_import_hook(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "geometry_cml_mod.cml").write_text(textwrap.dedent("""\
        module geometry_cml_mod
        import { helper } from util_cml_mod
        export func area(w: float, h: float): float { return helper(w * h) }
        """))
    # Imports between Camel modules resolve next to the importing file.
    (tmp_path / "util_cml_mod.cml").write_text(
        "module util_cml_mod\nexport func helper(x: float): float { return x + 0.0 }\n")
    pkg = tmp_path / "pkg_cml_test"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "inside.cml").write_text("module inside\nexport func one(): int { return 1 }\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("geometry_cml_mod", "pkg_cml_test", "pkg_cml_test.inside"):
        sys.modules.pop(name, None)
    mod = importlib.import_module("geometry_cml_mod")
    assert isinstance(mod, camel_lang.CamelModule)
    assert mod.area(2, 3.5) == 7.0
    inside = importlib.import_module("pkg_cml_test.inside")
    assert inside.one() == 1
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("no_such_camel_module_here")
    for name in ("geometry_cml_mod", "pkg_cml_test", "pkg_cml_test.inside"):
        sys.modules.pop(name, None)


def test_reentrant_calls_from_threads(values) -> None:
    import threading

    results: list[int] = []

    def work(i: int) -> None:
        results.append(values.add(i, i))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results) == [2 * i for i in range(8)]
