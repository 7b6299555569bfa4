"""The python and pyplot executors under the standalone `camel` executable:
embedded CPython started by the plugin (the program's directory on sys.path,
VIRTUAL_ENV's site-packages added), Python exceptions as located Camel
runtime errors, pyplot writing a real PNG headless, and libpython mapped only
by programs that use Python.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_camel_programs import CAMEL  # noqa: E402

pytestmark = pytest.mark.skipif(CAMEL is None, reason="camel binary not built")

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE.parents[1] / "camel" / "programs"


def camel_run(cwd: Path, *args: str, env: dict[str, str] | None = None,
              timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAMEL, "run", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_python_error_is_a_located_camel_error() -> None:
    r = camel_run(PROGRAMS, "python_error.cml")
    assert r.returncode == 1
    assert r.stdout == "3\n"
    # The Camel call site, the diagnostic code, the Python exception and where it was raised.
    # Located at the call `divide(1, 0)` (line 10, column 13), not at the declaration.
    assert "python_error.cml:10:13: error[E3020]" in r.stderr, r.stderr
    assert "ZeroDivisionError: integer division or modulo by zero" in r.stderr
    assert "interop_helpers.py:" in r.stderr and "in divide" in r.stderr
    assert "Traceback" not in r.stderr  # a diagnostic, not a Python crash dump


PY_ERROR_PROGRAM = """\
module site

outer func divide(a: int, b: int): int = "python://helpers.py::divide"

func ratio(x: int): int {
    return divide(100, x) + 1
}

func main(): int sync {
    println(ratio(5))
    println(ratio(0))
    return 0
}
"""


@pytest.mark.parametrize("flags", [[], ["--passes", "none"], ["--scheduler=par", "--threads", "2"]],
                         ids=["default", "no-passes", "par"])
def test_python_error_is_reported_at_the_camel_call(tmp_path: Path, flags: list[str]) -> None:
    # With the default pipeline the functor and `ratio` are inlined into main;
    # with --passes none each runs as its own call: either way the error is at
    # the call of the outer functor, with a caret under it, and keeps the
    # innermost Python file:line of the exception.
    (tmp_path / "helpers.py").write_text(
        "def check(b):\n    if b == 0:\n        raise ValueError('b must not be 0')\n\n"
        "def divide(a, b):\n    check(b)\n    return a // b\n")
    (tmp_path / "site.cml").write_text(PY_ERROR_PROGRAM)
    r = camel_run(tmp_path, *flags, "site.cml")
    assert r.returncode == 1, r.stderr
    assert r.stdout == "21\n"
    lines = r.stderr.splitlines()
    head = [i for i, line in enumerate(lines) if "error[E3020]" in line]
    assert len(head) == 1, r.stderr
    i = head[0]
    assert lines[i].startswith("site.cml:6:12: error[E3020]: divide (python://helpers.py::divide): "
                               "ValueError: b must not be 0"), r.stderr
    assert re.search(r"helpers\.py:3 in check\)$", lines[i]), r.stderr
    assert lines[i + 1].strip() == "return divide(100, x) + 1", r.stderr
    assert lines[i + 2].strip() == "^~~~~~~~~~~~~~", r.stderr
    assert lines[i + 2].index("^") == lines[i + 1].index("divide"), r.stderr
    assert "site.cml:3:" not in r.stderr  # not the declaration
    if flags == ["--passes", "none"]:
        # The caller of `ratio` follows as a trace note.
        assert "site.cml:11:13: note: 'site::ratio' called from here" in r.stderr, r.stderr


def test_errors_never_crash(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("def f(x):\n    return 'not an int'\n")
    cases = {
        # Result of the wrong type.
        "outer func f(x: int): int = \"python://bad.py::f\"\n"
        "func main(): int sync { println(f(1)); return 0 }": "result: expected int, got Python 'str'",
        # Missing symbol.
        "outer func g(x: int): int = \"python://bad.py::nope\"\n"
        "func main(): int sync { println(g(1)); return 0 }": "AttributeError",
        # Unknown module through py_import.
        "import { py_import } from python\n"
        "func main(): int sync { let m = py_import(\"no_such_module_xyz\"); return 0 }":
            "ModuleNotFoundError",
        # py_unwrap to the wrong type.
        "import { PyObject, py_eval, py_unwrap } from python\n"
        "func main(): int sync { println(py_unwrap(py_eval(\"'a'\") as PyObject<int>)); return 0 }":
            "expected int, got Python 'str'",
        # A syntax error in py_exec.
        "import { py_exec } from python\n"
        "func main(): int sync { py_exec(\"def (\"); return 0 }": "SyntaxError",
    }
    for i, (body, message) in enumerate(cases.items()):
        src = tmp_path / f"case{i}.cml"
        src.write_text(f"module case{i}\n{body}\n")
        r = camel_run(tmp_path, src.name)
        assert r.returncode == 1, (body, r.stdout, r.stderr)
        assert f"case{i}.cml:" in r.stderr and "E3020" in r.stderr, r.stderr
        assert message in r.stderr, r.stderr


def test_missing_python_file_is_a_compile_error(tmp_path: Path) -> None:
    (tmp_path / "m.cml").write_text(
        'module m\nouter func f(x: int): int = "python://missing.py::f"\n'
        "func main(): int sync { return f(1) }\n")
    r = camel_run(tmp_path, "m.cml")
    assert r.returncode != 0
    assert "m.cml:2:" in r.stderr and "missing.py" in r.stderr, r.stderr


def test_main_directory_on_sys_path_and_virtualenv(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "localmod.py").write_text("VALUE = 41\n")
    venv = tmp_path / "venv"
    # The site-packages of the CPython camel embeds (the one it was built
    # against), which is not the interpreter running pytest under a further
    # version's run (run_tests.py --versions).
    (tmp_path / "v.cml").write_text(textwrap.dedent("""\
        module v
        import { PyObject, py_call, py_unwrap } from python
        func main(): int sync {
            println(py_unwrap(py_call("platform.python_version") as PyObject<string>))
            return 0
        }
        """))
    v = camel_run(tmp_path, "v.cml")
    assert v.returncode == 0, v.stderr
    major, minor = v.stdout.split(".")[:2]
    site = venv / "lib" / f"python{major}.{minor}" / "site-packages"
    site.mkdir(parents=True)
    (site / "venvmod.py").write_text("def plus_one(x):\n    return x + 1\n")
    (app / "main.cml").write_text(textwrap.dedent("""\
        module main
        import { PyObject, py_import, py_attr, py_call, py_unwrap } from python
        func main(): int sync {
            let v = py_attr(py_import("localmod"), "VALUE")
            let r = py_call("venvmod.plus_one", v)
            println(py_unwrap(r as PyObject<int>))
            return 0
        }
        """))
    env = dict(os.environ, VIRTUAL_ENV=str(venv))
    # Run from elsewhere: the main file's directory is what counts.
    r = camel_run(tmp_path, "app/main.cml", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "42\n"


def read_png(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, width, height, chunks = 8, 0, 0, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind!r}"
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        chunks.append(kind)
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks
    return width, height


def test_pyplot_writes_png_headless(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    (tmp_path / "plot.cml").write_text(textwrap.dedent("""\
        module plotting
        import { plot } from pyplot
        func main(): int sync {
            plot([1.0, 4.0, 9.0, 16.0], "squares.png")
            plot([3, 1, 2])
            println("plotted")
            return 0
        }
        """))
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MPLBACKEND")}
    r = camel_run(tmp_path, "plot.cml", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "plotted\n"
    for name in ("squares.png", "plot.png"):
        w, h = read_png(tmp_path / name)
        assert w > 100 and h > 100


def test_pyplot_bad_data_is_a_compile_error(tmp_path: Path) -> None:
    (tmp_path / "bad.cml").write_text(
        'module bad\nimport { plot } from pyplot\n'
        'func main(): int sync { plot(["a"]); return 0 }\n')
    r = camel_run(tmp_path, "bad.cml")
    assert r.returncode != 0
    assert "bad.cml:3:" in r.stderr, r.stderr


def mapped(pid: int) -> list[str]:
    out = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6:
            out.append(parts[5])
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc/<pid>/maps")
def test_python_program_maps_libpython_once(tmp_path: Path) -> None:
    (tmp_path / "p.cml").write_text(textwrap.dedent("""\
        module p
        import { py_eval, py_println } from python
        func main(): int sync {
            py_println(py_eval("'ready'"))
            let reply = input('')
            return 0
        }
        """))
    proc = subprocess.Popen([CAMEL, "run", "p.cml"], cwd=tmp_path, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read() if proc.poll() is not None else ""
        files = set(mapped(proc.pid))
        proc.stdin.write("x\n")
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    pythons = {Path(f).name for f in files if re.search(r"/libpython3[0-9.]*\.so", f)}
    assert len(pythons) == 1, pythons
    assert any("libxacc_exec_python.so" in f for f in files)
    # No tensors crossed: torch stays unloaded.
    assert not any(re.search(r"/libtorch_cpu\.so", f) for f in files)


def test_tensors_cross_without_copies_in_camel(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    (tmp_path / "tens.py").write_text(textwrap.dedent("""\
        import torch
        def double(t):
            assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
            return t * 2
        def same(t):
            return t
        def ptr(t):
            return t.data_ptr()
        """))
    (tmp_path / "tens.cml").write_text(textwrap.dedent("""\
        module tens
        import { Tensor, ones } from tensor
        outer func double(t: Tensor): Tensor = "python://tens.py::double"
        outer func same(t: Tensor): Tensor = "python://tens.py::same"
        outer func ptr(t: Tensor): int = "python://tens.py::ptr"
        func main(): int sync {
            let t = ones([2, 2])
            println(double(t))
            println(ptr(t) == ptr(same(t)))
            return 0
        }
        """))
    r = camel_run(tmp_path, "tens.cml")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[[2, 2], [2, 2]]\ntrue\n"
