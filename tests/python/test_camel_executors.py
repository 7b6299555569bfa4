"""Camel executor plugins (csrc/include/xacc/camel/Executor.h, docs/executors.md):
a program that imports `tensor` loads libtorch through libxacc_exec_aten.so,
found next to the build's camel; `--executors` forces executors and rejects
unknown names; XACC_EXECUTOR_PATH is searched first, and a plugin that cannot
be loaded is a located error at the import.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_camel_loaded_libraries import mapped_files
from test_camel_programs import CAMEL

pytestmark = [
    pytest.mark.skipif(CAMEL is None, reason="camel binary not built"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc/<pid>/maps"),
]

EXECUTOR_DIR = Path(CAMEL).resolve().parents[1] / "lib" / "xacc" / "executors" if CAMEL else None
HAVE_ATEN = EXECUTOR_DIR is not None and (EXECUTOR_DIR / "libxacc_exec_aten.so").is_file()
needs_aten = pytest.mark.skipif(not HAVE_ATEN, reason="the aten executor is not built")

TENSOR_PROGRAM = """import { Tensor, ones, sum } from tensor

func main(): int sync {
    let t: Tensor = ones([2, 3])
    println(sum(t))
    let reply = input('')
    println('got ' + reply)
    return 0
}
"""

HELLO = """func main(): int sync {
    println('hello')
    let reply = input('')
    println('got ' + reply)
    return 0
}
"""

TORCH = re.compile(r"/libtorch_cpu\.so")
PYTHON = re.compile(r"/libpython[0-9.]*\S*\.so")


def maps_while_blocked(tmp_path: Path, source: str, first_line: str, *extra: str) -> list[str]:
    (tmp_path / "main.cml").write_text(source)
    proc = subprocess.Popen(
        [CAMEL, "run", *extra, "main.cml"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line == first_line, (line, proc.stderr.read() if proc.poll() is not None else "")
        files = mapped_files(proc.pid)
        proc.stdin.write("x\n")
        proc.stdin.close()
        assert proc.stdout.read() == "got x\n"
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return files


@needs_aten
def test_tensor_import_loads_libtorch_through_the_plugin(tmp_path: Path) -> None:
    files = maps_while_blocked(tmp_path, TENSOR_PROGRAM, "6\n")
    assert any(f.endswith("/libxacc_exec_aten.so") for f in files), files
    assert any(TORCH.search(f) for f in files), files
    assert not any(PYTHON.search(f) for f in files), files


@needs_aten
def test_forced_executor_is_loaded_without_an_import(tmp_path: Path) -> None:
    files = maps_while_blocked(tmp_path, HELLO, "hello\n", "--executors", "aten")
    assert any(f.endswith("/libxacc_exec_aten.so") for f in files), files
    assert any(TORCH.search(f) for f in files), files


def test_hello_loads_no_executor(tmp_path: Path) -> None:
    files = maps_while_blocked(tmp_path, HELLO, "hello\n")
    assert not any("libxacc_exec_" in f for f in files), files


@pytest.mark.parametrize(
    "names, message",
    [
        ("nope", "unknown executor 'nope': no libxacc_exec_nope.so in "),
        ("aten,../x", "'../x' is not an executor name"),
    ],
)
def test_unknown_executor_is_a_usage_error(tmp_path: Path, names: str, message: str) -> None:
    (tmp_path / "main.cml").write_text(HELLO)
    r = subprocess.run(
        [CAMEL, "run", "--executors", names, "main.cml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert r.returncode == 2
    assert message in r.stderr
    assert r.stdout == ""


def test_executor_path_is_searched_first(tmp_path: Path) -> None:
    # A broken plugin earlier on XACC_EXECUTOR_PATH shadows the built one: the
    # import that needs it is a located error naming the file, not a crash.
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "libxacc_exec_aten.so").write_text("not an ELF file\n")
    (tmp_path / "main.cml").write_text("import { ones } from tensor\n\nfunc main(): int {\n    return 0\n}\n")
    r = subprocess.run(
        [CAMEL, "run", "main.cml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"XACC_EXECUTOR_PATH": str(plugins), "PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 1
    assert "main.cml:1:" in r.stderr and "E2013" in r.stderr, r.stderr
    assert str(plugins / "libxacc_exec_aten.so") in r.stderr, r.stderr


@needs_aten
def test_plugins_are_found_when_camel_is_started_from_path(tmp_path: Path) -> None:
    # argv[0] is the bare name: the plugin directory comes from /proc/self/exe.
    (tmp_path / "main.cml").write_text(
        "import { ones, sum } from tensor\n\nfunc main(): int sync {\n    println(sum(ones([3])))\n    return 0\n}\n"
    )
    r = subprocess.run(
        ["camel", "run", "main.cml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PATH": f"{Path(CAMEL).parent}:/usr/bin:/bin"},
    )
    assert (r.returncode, r.stdout) == (0, "3\n"), r.stderr
