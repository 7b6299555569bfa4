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


def _printing_suite(name, stream, marker, signal="", wait_for=""):
    """A suite whose one process prints its marker and its stream's cache and TMPDIR,
    creates the file ``signal`` (if given), waits up to 60 s for the file ``wait_for`` (if
    given; exit status 1 when it never comes), then prints the marker again."""
    code = ("import os, sys, time; print(sys.argv[1], os.environ.get('XACC_CACHE_DIR'), os.environ.get('TMPDIR'));"
            " sys.stdout.flush(); sig, wait = sys.argv[2:4];"
            " sig and open(sig, 'w').close(); deadline = time.monotonic() + 60\n"
            "while wait and not os.path.exists(wait):\n"
            "    time.sleep(0.05)\n"
            "    if time.monotonic() > deadline: sys.exit(1)\n"
            "print(sys.argv[1] + '-end')")

    def run():
        rc = run_tests.run_streaming([sys.executable, "-c", code, marker, signal, wait_for])
        return run_tests.Result(passed=1) if rc == 0 else run_tests.Result(failed=1)

    return run_tests.Suite(name, run, stream=stream)


def test_versions_side_by_side_keep_each_suites_output_whole(capsys, tmp_path):
    # Note [Versions side by side]: two streams at once; each suite's output is printed as
    # one block, each stream has its own cache and TMPDIR, and the summary keeps the order.
    # a1 finishes only once b1 (the other stream) has started: run in turn, a1 would fail.
    started = str(tmp_path / "b1-started")
    suites = [_printing_suite("a1", "", "A1", wait_for=started), _printing_suite("a2", "", "A2"),
              _printing_suite("b1", "3.99", "B1", signal=started)]
    done = run_tests.run_suites(suites, jobs=2)
    assert [s.name for s, _, _ in done] == ["a1", "a2", "b1"]
    assert all(r.passed == 1 for _, r, _ in done)
    out = capsys.readouterr().out
    blocks = {}
    for block in out.split("\n===== ")[1:]:
        blocks[block.split(" ", 1)[0]] = block
    assert set(blocks) == {"a1", "a2", "b1"}
    dirs = {}
    for name, marker in (("a1", "A1"), ("a2", "A2"), ("b1", "B1")):
        lines = [l for l in blocks[name].splitlines() if l.startswith(marker)]
        assert [l.split()[0] for l in lines] == [marker, marker + "-end"], blocks[name]
        dirs[name] = tuple(lines[0].split()[1:])
    assert dirs["a1"] == dirs["a2"] != dirs["b1"]
    assert dirs["a1"][0] != dirs["b1"][0] and dirs["a1"][1] != dirs["b1"][1]


def test_one_job_runs_in_turn_with_output_streamed(capfd):
    suites = [_printing_suite("a1", "", "A1"), _printing_suite("b1", "3.99", "B1")]
    done = run_tests.run_suites(suites, jobs=1)
    assert [s.name for s, _, _ in done] == ["a1", "b1"]
    out = capfd.readouterr().out
    assert out.index("A1-end") < out.index("===== b1") < out.index("B1-end")
