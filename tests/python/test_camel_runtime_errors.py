"""Runtime errors of `camel run` always surface, under every scheduler.

* Unbounded recursion (a `fib` without a base case) is a located E0417 stack
  overflow under 2 GB of peak memory and well within a minute (see LIMIT_S),
  with the sequential scheduler, the parallel one (whose other tasks stop
  once one has failed, and whose task stacks share one frame budget) and
  `--backend=xpu` (when the mlir executor is built).
* SIGINT ends the process as before (killed by SIGINT) but everything the
  program printed before the signal reaches a piped stdout.
* A string index out of range is a located runtime error (E3014), not an
  empty string.

Peak memory is the child's own maximum resident set size (os.wait4), so
the limit is checked for each run on its own. Timings here are bounds with a
wide margin; speed itself is measured in benchmarks/.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from buildtree import camel_binary

CAMEL = camel_binary()
pytestmark = pytest.mark.skipif(CAMEL is None, reason="camel binary not built")

PROGRAMS = Path(__file__).resolve().parents[2] / "tests" / "camel" / "programs"
MLIR_PLUGIN = (Path(CAMEL).parent.parent / "lib" / "xacc" / "executors" / "libxacc_exec_mlir.so") if CAMEL else None

NO_BASE_CASE = """module runaway

func fib(n: int): int {
    return fib(n - 1) + fib(n - 2)
}

func main(): int sync {
    println("start")
    println(fib(1000000))
    return 0
}
"""

# The issue asks for 10 s on a quiet machine (about 5 s there); the bound here
# leaves room for a loaded test machine and still fails the minutes the
# parallel scheduler used to take.
LIMIT_S = 30
LIMIT_BYTES = 2 << 30


def run_measured(args: list[str], cwd: Path, env: dict[str, str] | None = None,
                 timeout: float = 60) -> tuple[int, str, str, float, int]:
    """Runs `args`; returns (status, stdout, stderr, seconds, peak RSS in bytes)."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    t0 = time.monotonic()
    with out.open("wb") as o, err.open("wb") as e:
        proc = subprocess.Popen(args, cwd=cwd, stdout=o, stderr=e, stdin=subprocess.DEVNULL, env=env)
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
    seconds = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out.read_text(), err.read_text(), seconds, usage.ru_maxrss * 1024


SCHEDULERS = {
    "seq": ["--scheduler=seq"],
    "par": ["--scheduler=par", "--threads", "2"],
    "par-default-threads": ["--scheduler=par"],
    "auto": [],
    "xpu": ["--backend=xpu"],
}


@pytest.mark.parametrize("mode", sorted(SCHEDULERS))
def test_unbounded_recursion_is_a_located_stack_overflow(tmp_path: Path, mode: str) -> None:
    if mode == "xpu" and not (MLIR_PLUGIN and MLIR_PLUGIN.is_file()):
        pytest.skip("mlir executor not built")
    (tmp_path / "runaway.cml").write_text(NO_BASE_CASE)
    env = dict(os.environ, XACC_CACHE_DIR=str(tmp_path / "cache"))
    status, out, err, seconds, peak = run_measured(
        [CAMEL, "run", *SCHEDULERS[mode], "runaway.cml"], tmp_path, env=env)
    assert status == 1, (status, err[-3000:])
    assert out == "start\n"
    assert re.search(r"runaway\.cml:4:\d+: error\[E0417\]: stack overflow", err), err[-3000:]
    assert seconds < LIMIT_S, f"{seconds:.1f} s"
    assert peak < LIMIT_BYTES, f"{peak / 2**20:.0f} MiB"


LOOP_PRINTING = """module chatty

func loop(i: int): int sync {
    println('line {}'->format<i>)
    return if i < 0 then 0 else loop(i + 1)
}

func main(): int sync {
    return loop(0)
}
"""


def test_sigint_flushes_piped_output(tmp_path: Path) -> None:
    (tmp_path / "chatty.cml").write_text(LOOP_PRINTING)
    proc = subprocess.Popen([CAMEL, "run", "--scheduler=seq", "chatty.cml"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    time.sleep(1.5)  # compiles, then prints far more than a pipe buffer holds
    assert proc.poll() is None, proc.stderr.read()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGINT, (proc.returncode, err[-2000:])
    lines = out.decode().splitlines()
    assert len(lines) > 1000
    # Every line arrived whole and in order: nothing printed was lost.
    assert lines == [f"line {i}" for i in range(len(lines))]


def test_sigint_flushes_a_short_piped_output(tmp_path: Path) -> None:
    # Less than stdio's buffer: before the fix none of it reached the pipe.
    (tmp_path / "waiting.cml").write_text(
        "module waiting\n\nfunc main(): int sync {\n    println('before the signal')\n"
        "    sleep(20000)\n    println('after')\n    return 0\n}\n")
    proc = subprocess.Popen([CAMEL, "run", "waiting.cml"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    time.sleep(1.5)
    assert proc.poll() is None, proc.stderr.read()
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert time.monotonic() - t0 < 2
    assert proc.returncode == -signal.SIGINT, (proc.returncode, err)
    assert out == b"before the signal\n"


def test_string_index_out_of_range_is_located() -> None:
    r = subprocess.run([CAMEL, "run", "string_index_error.cml"], cwd=PROGRAMS, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert r.stdout == "b\nc\naz\n"
    assert re.search(r"string_index_error\.cml:14:\d+: error\[E3014\]: string index 100 out of range "
                     r"for a string of length 3", r.stderr), r.stderr
    r = subprocess.run([CAMEL, "run", "--scheduler=seq", "--passes", "none", "string_index_error.cml"],
                       cwd=PROGRAMS, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "error[E3014]" in r.stderr, r.stderr
