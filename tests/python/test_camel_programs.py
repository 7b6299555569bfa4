"""End-to-end tests of the Camel corpus: every program under
tests/camel/programs/*.cml is run with `camel run` and its standard output
and exit status are compared with `<name>.out` and `<name>.exit` (status 0
when absent). The expected files were written by reading each program and
the language specification, not by recording the implementation.

Each program also runs with `--passes none`: the default GIR pass pipeline
must not change behaviour. The `camel` binary is taken from
$XACC_BUILD_DIR/bin, <repo>/build/bin or PATH; the tests are skipped when
none exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = REPO / "tests" / "camel" / "programs"
TIMEOUT_S = 60


def camel_binary() -> str | None:
    for d in (os.environ.get("XACC_BUILD_DIR"), str(REPO / "build")):
        if d and (Path(d) / "bin" / "camel").is_file():
            return str((Path(d) / "bin" / "camel").resolve())
    return shutil.which("camel")


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
    result = run(program)
    assert result.stdout == out, result.stderr
    assert result.returncode == code, result.stderr


@pytest.mark.parametrize("program", CASES, ids=[p.stem for p in CASES])
def test_program_without_passes(program: Path) -> None:
    out, code = expected(program)
    result = run(program, "--passes", "none")
    assert result.stdout == out, result.stderr
    assert result.returncode == code, result.stderr
