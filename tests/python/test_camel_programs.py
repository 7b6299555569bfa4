"""End-to-end tests of the Camel corpus: every program under
tests/camel/programs/*.cml is run with `camel run` and its standard output
and exit status are compared with `<name>.out` and `<name>.exit` (status 0
when absent). The expected files were written by reading each program and
the language specification, not by recording the implementation.

Each program runs with `--scheduler=seq`; with `--passes none` (and the
default scheduler, auto): the default GIR pass pipeline must not change
behaviour; and with `--scheduler=par --threads 2`: the parallel scheduler
must give the same output and status as the sequential one (spec 11.8). The `camel` binary is taken from
$XACC_BUILD_DIR/bin, <repo>/build/bin or PATH; the tests are skipped when
none exists.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from buildtree import camel_binary

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "tests" / "camel" / "programs"
TIMEOUT_S = 60




CAMEL = camel_binary()
pytestmark = pytest.mark.skipif(CAMEL is None, reason="camel binary not built")

CASES = sorted(PROGRAMS.glob("*.cml"))


def expected(program: Path) -> tuple[str, int]:
    out = program.with_suffix(".out").read_text()
    code_file = program.with_suffix(".exit")
    code = int(code_file.read_text().strip()) if code_file.exists() else 0
    return out, code


def run(program: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CAMEL, "run", *extra, program.name],
        cwd=program.parent,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def test_corpus_size() -> None:
    assert len(CASES) >= 80


@pytest.mark.parametrize("program", CASES, ids=[p.stem for p in CASES])
def test_program(program: Path) -> None:
    out, code = expected(program)
    result = run(program, "--scheduler=seq")
    assert result.stdout == out, result.stderr
    assert result.returncode == code, result.stderr


@pytest.mark.parametrize("program", CASES, ids=[p.stem for p in CASES])
def test_program_without_passes(program: Path) -> None:
    out, code = expected(program)
    result = run(program, "--passes", "none")
    assert result.stdout == out, result.stderr
    assert result.returncode == code, result.stderr


@pytest.mark.parametrize("program", CASES, ids=[p.stem for p in CASES])
def test_program_parallel_scheduler(program: Path) -> None:
    out, code = expected(program)
    result = run(program, "--scheduler=par", "--threads", "2")
    assert result.stdout == out, result.stderr
    assert result.returncode == code, result.stderr


def test_scheduler_flags_reject_bad_values() -> None:
    program = PROGRAMS / "arithmetic.cml"
    for extra, message in (
        (["--scheduler=fast"], "--scheduler: fast not in {seq,par,auto}"),
        (["--scheduler=par", "--threads", "0"], "--threads: Value 0 not in range"),
        (["--scheduler=par", "--threads", "two"], "--threads"),
        (["--scheduler=seq", "--threads", "2"], "--threads needs --scheduler=par or auto"),
    ):
        result = run(program, *extra)
        assert result.returncode == 2, (extra, result.stderr)
        assert message in result.stderr, (extra, result.stderr)
        assert result.stdout == ""


def test_parallel_scheduler_runs_groups_with_repeat(tmp_path: Path) -> None:
    # Two independent calls joined: --profile reports the parallel groups the
    # par scheduler ran (main's group in each run, so at least three with
    # --repeat 3, plus fib's own splits near the top) and none under seq;
    # the output is the same.
    src = tmp_path / "two.cml"
    src.write_text(
        "module two\n"
        "func fib(n: int): int { return if n < 2 then n else fib(n - 1) + fib(n - 2) }\n"
        "func main(): int sync {\n"
        "    let a = fib(20)\n"
        "    let b = fib(21)\n"
        "    println(a + b)\n"
        "    return 0\n"
        "}\n"
    )
    par = run(src, "--scheduler=par", "--threads", "2", "--repeat", "3", "--profile")
    seq = run(src, "--scheduler=seq", "--repeat", "3", "--profile")
    auto = run(src, "--threads", "2", "--profile")
    assert par.returncode == 0 and seq.returncode == 0, par.stderr + seq.stderr
    assert par.stdout == seq.stdout == "17711\n" * 3
    groups = re.search(r"; scheduler par, ([0-9]+) parallel groups", par.stderr)
    assert groups and int(groups.group(1)) >= 3, par.stderr
    assert "; scheduler seq, 0 parallel groups" in seq.stderr, seq.stderr
    # The default scheduler (auto) picks par for it: it has a group to use.
    assert auto.returncode == 0 and auto.stdout == "17711\n", auto.stderr
    assert "; scheduler par (auto), " in auto.stderr, auto.stderr


def test_auto_scheduler_stays_sequential_without_parallelism(tmp_path: Path) -> None:
    # No group of independent calls and no higher-order builtin: auto runs
    # seq (no threads started); a map over a pure lambda makes it par.
    plain = tmp_path / "plain.cml"
    plain.write_text(
        "module plain\n"
        "func count(n: int, acc: int): int { return if n == 0 then acc else count(n - 1, acc + 2) }\n"
        "func main(): int sync {\n"
        "    println(count(1000, 0))\n"
        "    return 0\n"
        "}\n"
    )
    mapped = tmp_path / "mapped.cml"
    mapped.write_text(
        "module mapped\n"
        "func main(): int sync {\n"
        "    let xs = range(0, 5000)->map<(x: int): int => x * x % 7>\n"
        "    println(xs[4999], len(xs))\n"
        "    return 0\n"
        "}\n"
    )
    r = run(plain, "--profile")
    assert r.returncode == 0 and r.stdout == "2000\n", r.stderr
    assert "; scheduler seq (auto), 0 parallel groups" in r.stderr, r.stderr
    r = run(mapped, "--profile")
    assert r.returncode == 0 and r.stdout == "1 5000\n", r.stderr
    assert "; scheduler par (auto), " in r.stderr, r.stderr
