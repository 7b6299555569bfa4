"""Issue 4, criterion 4: `camel run hello.cml` loads neither libpython nor
libtorch. A hello-world program prints its greeting and then blocks reading
standard input; while it is blocked the test reads the live process's
mappings (/proc/<pid>/maps), then releases it by writing a line and closing
standard input, and checks that it finished normally.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_camel_programs import CAMEL

pytestmark = [
    pytest.mark.skipif(CAMEL is None, reason="camel binary not built"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc/<pid>/maps"),
]

HELLO = """module hello

func main(): int sync {
    println('hello, world')
    let reply = input('')
    println('got ' + reply)
    return 0
}
"""

# libpython3.x.so, libtorch*.so, libtorch_cpu.so, libc10.so (torch's core).
FORBIDDEN = re.compile(r"/(libpython[0-9.]*\S*\.so|libtorch\S*\.so|libc10\S*\.so)[^/]*$")


def mapped_files(pid: int) -> list[str]:
    files = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].startswith("/"):
            files.append(parts[5])
    return sorted(set(files))


@pytest.mark.parametrize("scheduler", ["seq", "par"])
def test_hello_loads_neither_libpython_nor_libtorch(tmp_path: Path, scheduler: str) -> None:
    (tmp_path / "hello.cml").write_text(HELLO)
    proc = subprocess.Popen(
        [CAMEL, "run", f"--scheduler={scheduler}", "hello.cml"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The greeting is flushed before input() blocks: main is running.
        assert proc.stdout.readline() == "hello, world\n"
        assert proc.poll() is None, "camel exited before reading its input"
        files = mapped_files(proc.pid)
        proc.stdin.write("bye\n")
        proc.stdin.close()
        rest = proc.stdout.read()
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, proc.stderr.read()
    assert rest == "got bye\n"
    # The maps were those of the running camel executable (not, say, of a
    # wrapper that exec'd it later), with its shared libraries.
    assert Path(CAMEL).resolve().as_posix() in files, files
    assert any(re.search(r"/libc\.so|/libc-", f) for f in files), files
    loaded = [f for f in files if FORBIDDEN.search(f)]
    assert loaded == [], f"camel run hello.cml mapped {loaded}"


def test_forbidden_pattern_matches_python_and_torch_paths() -> None:
    # The pattern the test relies on recognises the libraries it forbids.
    for path in (
        "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0",
        "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so",
        "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch.so",
        "/opt/venv/lib/python3.11/site-packages/torch/lib/libc10.so",
    ):
        assert FORBIDDEN.search(path), path
    for path in ("/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libtbb.so.12"):
        assert not FORBIDDEN.search(path), path
