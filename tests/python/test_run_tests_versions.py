"""scripts/run_tests.py's further CPython versions (issue 20): a version that is not
installed is a skipped summary line, never a failure; one that is installed but has no
venv or extension (`make venvs` failed) is a failure; the suites per version are every
pytest directory, as under 3.11 (issue 20 criterion 1: the full Python suite under each
version). Runs the real script's functions and the real scripts/install-venvs.sh --which."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("run_tests", ROOT / "scripts" / "run_tests.py")
run_tests = importlib.util.module_from_spec(spec)
sys.modules["run_tests"] = run_tests
spec.loader.exec_module(run_tests)


def test_missing_interpreter_is_skipped_not_failed():
    suites = run_tests.all_suites(["3.99"])
    mine = [s for s in suites if s.name.endswith("(python 3.99)")]
    assert [s.name for s in mine] == [f"pytest {rel} (python 3.99)" for rel in run_tests.pytest_dirs()]
    for s in mine:
        r = s.run()
        assert (r.passed, r.failed) == (0, 0) and r.note == "skipped: python3.99 not installed", r


def _installed_without_venv():
    """A CPython the machine has (pyenv) for which no build/venv exists."""
    for v in ("3.10", "3.9", "3.8"):
        which = subprocess.run([str(ROOT / "scripts" / "install-venvs.sh"), "--which", v], capture_output=True)
        if which.returncode == 0 and not (ROOT / "build" / f"venv-{v}").exists():
            return v
    return None


def test_installed_interpreter_without_venv_fails():
    v = _installed_without_venv()
    if v is None:
        pytest.skip("no further CPython installed here")
    suites = [s for s in run_tests.all_suites([v]) if s.name.endswith(f"(python {v})")]
    assert suites
    for s in suites:
        r = s.run()
        assert r.failed == 1 and "make venvs" in r.note, r


def test_full_versions_runs_only_the_further_versions():
    suites = run_tests.all_suites(["3.99"], full_versions=True)
    assert [s.name for s in suites] == [f"pytest {rel} (python 3.99)" for rel in run_tests.pytest_dirs()]


def test_each_version_runs_the_same_pytest_directories_as_311():
    suites = [s.name for s in run_tests.all_suites(["3.99"])]
    base = [n for n in suites if n.startswith("pytest ") and not n.endswith(")")]
    assert base == [f"pytest {rel}" for rel in run_tests.pytest_dirs()]
    assert [n for n in suites if n.endswith("(python 3.99)")] == [f"{n} (python 3.99)" for n in base]
    # The capture suite and the examples check are part of it.
    assert "tests/python" in run_tests.pytest_dirs()
