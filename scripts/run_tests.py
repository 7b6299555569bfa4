#!/usr/bin/env python3
"""Runs every xacc test suite and prints one summary line per suite plus the totals.

Suites, in order:

* ``layers`` -- ``scripts/check_layers.py``: includes and imports follow the layering,
  no Python import cycles (one check: passed or failed);
* ``gtest`` -- the GoogleTest binaries, through ``ctest --test-dir <build>``;
* ``lit`` -- ``lit-22 -sv tests/lit`` (IR, passes, Camel front end; FileCheck);
* ``pytest <dir>`` -- ``python -m pytest -q <dir>`` for ``tests/python`` and for every
  other ``tests/<dir>/`` holding ``test_*.py`` or ``*_test.py`` files (found, not listed,
  so a new directory cannot be forgotten; ``PYTEST_FIRST`` only fixes the order);
* ``pytest <dir> (python 3.X)`` -- every pytest directory again under each further
  CPython (``--versions``, default: every ``build/venv-3.X``) that ``make venvs`` set up
  (``build/venv-3.X`` with ``xacc._C`` built for it), one summary line per version and
  directory (issue 20: today one, ``tests/python``). A version whose interpreter is not
  installed is skipped with a note, never failed; one whose interpreter exists but whose
  venv or extension is missing (``make venvs`` failed) is failed. ``--full-versions``
  (``make test-versions``) runs only the further versions' suites.

Each suite's own output streams through; counts come from the machine-readable reports
(JUnit XML for ctest and pytest, lit's JSON) written under ``<build>/test-results/``.
The last line is exactly ``N passed, N failed``; the exit status is 1 when any suite
failed. A suite with no tests yet counts as empty, not failed -- but a suite whose test
sources exist and that ran nothing (ctest finding no tests, pytest collecting none) fails.

Each CPython's suites run in turn; with ``--jobs N`` (default 2, ``XACC_TEST_JOBS``) up to
N versions run side by side, each suite's output printed whole when it ends (Note [Versions
side by side]). After each pytest suite its slowest test files are named.

Environment: ``XACC_BUILD_DIR`` (default ``<repo>/build``), ``XACC_SUITE_TIMEOUT``
(seconds per suite, default 3600), ``XACC_TEST_JOBS``. ``--only NAME`` runs the suites
whose name contains NAME (e.g. ``--only lit``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = Path(os.environ.get("XACC_BUILD_DIR", REPO_ROOT / "build")).resolve()
RESULTS_DIR = BUILD_DIR / "test-results"
SUITE_TIMEOUT = int(os.environ.get("XACC_SUITE_TIMEOUT", "3600"))
# How many of a pytest suite's slowest test files its output names.
SLOWEST_FILES = 12

# pytest directories that run first, in this order; any other tests/<dir>/ with test
# files runs after them in name order. tests/lit and tests/unit belong to lit and ctest.
PYTEST_FIRST = ["tests/python"]
NOT_PYTEST = {"lit", "unit"}

# lit result codes (lit's JSON "code" field).
LIT_PASSED = {"PASS", "XFAIL", "FLAKYPASS"}
LIT_FAILED = {"FAIL", "XPASS", "UNRESOLVED", "TIMEOUT"}


@dataclass
class Result:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    note: str = ""


@dataclass
class Suite:
    name: str
    run: Callable[[], Result]
    # The CPython whose suites run one after another ("" for this interpreter's); see
    # Note [Versions side by side].
    stream: str = ""


# Where a suite's output goes: this process's stdout, or (suites running side by side) the
# suite's own log file, which is printed whole when the suite ends.
_sink = threading.local()


def say(text: str) -> None:
    out = getattr(_sink, "file", None)
    if out is None:
        print(text, flush=True)
    else:
        out.write(text + "\n")
        out.flush()


def run_streaming(cmd: list[str], env: dict[str, str] | None = None) -> int | None:
    """Runs cmd with output going to the suite's sink (ours, or its log file); None when it
    hit the timeout."""
    say(f"$ {' '.join(cmd)}")
    out = getattr(_sink, "file", None)
    stream_env = getattr(_sink, "env", None)
    if stream_env:
        env = dict(env if env is not None else os.environ, **stream_env)
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, start_new_session=True,
                            stdout=out, stderr=subprocess.STDOUT if out else None)
    try:
        return proc.wait(timeout=SUITE_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def fresh_report(name: str) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    path.unlink(missing_ok=True)
    return path


def finish(result: Result, rc: int | None, tool: str) -> Result:
    """Makes sure a failing exit status is never reported as a clean suite."""
    if rc is None:
        result.failed += 1
        result.note = f"timed out after {SUITE_TIMEOUT}s"
    elif rc != 0 and result.failed == 0:
        result.failed = 1
        result.note = result.note or f"{tool} exited with status {rc}"
    return result


# --- layering -----------------------------------------------------------------------------
def run_layers() -> Result:
    rc = run_streaming([sys.executable, str(REPO_ROOT / "scripts" / "check_layers.py"), str(REPO_ROOT)])
    if rc == 0:
        return Result(passed=1)
    return finish(Result(failed=1, note="scripts/check_layers.py found violations"), rc, "check_layers")


# --- GoogleTest via ctest ---------------------------------------------------------------
def run_ctest() -> Result:
    sources = sorted((REPO_ROOT / "tests" / "unit").glob("*_test.cpp"))
    if not (BUILD_DIR / "CTestTestfile.cmake").exists():
        if sources:
            return Result(failed=1, note=f"{BUILD_DIR} has no CTest files; run `make build`")
        return Result(note="no tests yet")
    report = fresh_report("ctest.xml")
    jobs = str(os.cpu_count() or 2)
    rc = run_streaming(["ctest", "--test-dir", str(BUILD_DIR), "--output-on-failure",
                        "--parallel", jobs, "--output-junit", str(report)])
    result = Result()
    if report.exists():
        for case in ET.parse(report).getroot().iter("testcase"):
            status = case.get("status", "")
            if status == "run":
                result.passed += 1
            elif status == "disabled":
                result.skipped += 1
            else:  # fail, notrun (binary missing or crashed during discovery)
                result.failed += 1
    if result.passed + result.failed == 0 and sources and rc == 0:
        result.failed = 1
        result.note = "tests/unit has tests but ctest ran none (is GoogleTest found?)"
    return finish(result, rc, "ctest")


# --- lit ---------------------------------------------------------------------------------
def run_lit() -> Result:
    lit = shutil.which("lit-22") or shutil.which("lit")
    if lit is None:
        return Result(failed=1, note="lit-22 not found (make install provides it)")
    report = fresh_report("lit.json")
    env = dict(os.environ, XACC_BUILD_DIR=str(BUILD_DIR), XACC_PYTHON=sys.executable)
    rc = run_streaming([lit, "-sv", "tests/lit", "-o", str(report)], env=env)
    result = Result()
    if report.exists():
        for test in json.loads(report.read_text()).get("tests", []):
            code = test.get("code", "")
            if code in LIT_PASSED:
                result.passed += 1
            elif code in LIT_FAILED:
                result.failed += 1
            else:  # UNSUPPORTED, SKIPPED, EXCLUDED
                result.skipped += 1
    return finish(result, rc, "lit")


# --- pytest ------------------------------------------------------------------------------
def has_pytest_files(directory: Path) -> bool:
    return any(directory.rglob("test_*.py")) or any(directory.rglob("*_test.py"))


def pytest_dirs() -> list[str]:
    found = []
    tests = REPO_ROOT / "tests"
    if tests.is_dir():
        for d in sorted(p for p in tests.iterdir() if p.is_dir()):
            rel = f"tests/{d.name}"
            if d.name not in NOT_PYTEST and rel not in PYTEST_FIRST and has_pytest_files(d):
                found.append(rel)
    return PYTEST_FIRST + found


def extra_pythons(versions: list[str] | None) -> list[tuple[str, Path | None, str]]:
    """(version, interpreter, why) for each further CPython: ``versions`` (``--versions``)
    or every build/venv-3.X there is, other than the interpreter running this. The
    interpreter is build/venv-3.X/bin/python when it and its xacc._C (linked into xacc/ by
    `make venvs`) exist; else None with why: a version that is not installed is a note
    (``skipped: ...``), one that is installed but was not set up is a failure."""
    running = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if versions is None:
        versions = sorted(v.name.removeprefix("venv-") for v in (REPO_ROOT / "build").glob("venv-3.*"))
    found = []
    for version in versions:
        if version == running:
            continue
        python = REPO_ROOT / "build" / f"venv-{version}" / "bin" / "python"
        tag = "cpython-" + version.replace(".", "")
        if python.is_file() and any((REPO_ROOT / "xacc").glob(f"_C.{tag}-*.so")):
            found.append((version, python, ""))
            continue
        # The one place that knows where an interpreter is looked for: install-venvs.sh.
        which = subprocess.run([str(REPO_ROOT / "scripts" / "install-venvs.sh"), "--which", version],
                               capture_output=True, text=True)
        if which.returncode != 0:
            found.append((version, None, f"skipped: python{version} not installed"))
        else:
            found.append((version, None, f"python{version} exists ({which.stdout.strip()}) but "
                          f"build/venv-{version} or its xacc._C does not: run `make venvs`"))
    return found


def test_file_of(classname: str) -> str:
    """The repo-relative file of a JUnit classname (``tests.python.capture.test_x.TestY``):
    its longest dotted prefix that names a .py file."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        path = Path(*parts[:n]).with_suffix(".py")
        if (REPO_ROOT / path).is_file():
            return str(path)
    return classname


def print_slowest_files(root: ET.Element, count: int = SLOWEST_FILES) -> None:
    """Prints the suite's ``count`` slowest test files (summed test times from the JUnit
    report): what to look at first when the whole run nears CI's time budget."""
    by_class: dict[str, float] = {}
    for case in root.iter("testcase"):
        name = case.get("classname", "")
        by_class[name] = by_class.get(name, 0.0) + float(case.get("time", 0) or 0)
    seconds: dict[str, float] = {}
    for name, t in by_class.items():
        file = test_file_of(name)
        seconds[file] = seconds.get(file, 0.0) + t
    slowest = sorted(seconds.items(), key=lambda kv: -kv[1])[:count]
    if slowest:
        say("-- slowest test files: " + ", ".join(f"{f} {t:.0f}s" for f, t in slowest))


def make_pytest(rel: str, python: Path | None = None, version: str = "") -> Callable[[], Result]:
    def run() -> Result:
        path = REPO_ROOT / rel
        if not path.is_file() and (not path.is_dir() or not has_pytest_files(path)):
            return Result(note="no tests yet")
        suffix = f"-py{version}" if version else ""
        report = fresh_report(f"pytest-{rel.replace('/', '-')}{suffix}.xml")
        # Another interpreter imports this tree's xacc (and its xacc._C for that version).
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT)) if python else None
        rc = run_streaming([str(python or sys.executable), "-m", "pytest", "-q", rel,
                            f"--junitxml={report}"], env=env)
        result = Result()
        if report.exists():
            root = ET.parse(report).getroot()
            suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
            for s in suites:
                total = int(s.get("tests", 0))
                failed = int(s.get("failures", 0)) + int(s.get("errors", 0))
                skipped = int(s.get("skipped", 0))
                result.passed += total - failed - skipped
                result.failed += failed
                result.skipped += skipped
            print_slowest_files(root)
        if rc == 5:  # pytest: no tests collected, although test files exist
            return Result(failed=1, note="test files exist but pytest collected no tests")
        return finish(result, rc, "pytest")

    return run


def not_set_up(why: str) -> Callable[[], Result]:
    """A further version's suite that cannot run: a note when its interpreter is not
    installed, a failure when it is (`make venvs` failed or was not run)."""
    def run() -> Result:
        say(f"-- {why}")
        return Result(note=why) if why.startswith("skipped") else Result(failed=1, note=why)

    return run


def all_suites(versions: list[str] | None = None, full_versions: bool = False) -> list[Suite]:
    suites = []
    if not full_versions:
        suites = [Suite("layers", run_layers), Suite("gtest", run_ctest), Suite("lit", run_lit)]
        suites += [Suite(f"pytest {rel}", make_pytest(rel)) for rel in pytest_dirs()]
    for version, python, why in extra_pythons(versions):
        for rel in pytest_dirs():
            run = make_pytest(rel, python, version) if python else not_set_up(why)
            suites.append(Suite(f"pytest {rel} (python {version})", run, stream=version))
    return suites


# Note [Versions side by side]
# Each CPython's suites run one after another, but with --jobs N (default 2) up to N
# versions' streams run at once: 3.11's layers/gtest/lit/pytest beside 3.12's pytest, then
# 3.13's. Most of a pytest run is one busy thread (translation, MLIR compiles, small
# tensors), so two streams on this 2-core machine take little more than the longer one
# (the figures are in docs/python-versions.md, "Cost"). Side by side, a suite's output goes
# to its own log under <build>/test-results/ and is printed whole when the suite ends, and
# each stream has a kernel disk cache and a TMPDIR of its own, so no stream reads another's
# half-written files. The summary keeps the suites' order and each suite's own time.
DEFAULT_JOBS = 2


def run_in_turn(suites: list[Suite]) -> list[tuple[Suite, Result, float]]:
    done = []
    for suite in suites:
        print(f"\n===== {suite.name} =====", flush=True)
        start = time.monotonic()
        result = suite.run()
        done.append((suite, result, time.monotonic() - start))
    return done


def run_stream_aside(suites: list[Suite], lock: threading.Lock, root: Path) -> list[tuple[Suite, Result, float]]:
    """One CPython's suites in turn, beside other streams: its own cache and TMPDIR under
    ``root``, each suite's output into its log, printed whole (under ``lock``) when it ends."""
    tag = suites[0].stream or "base"
    cache, tmp = root / f"cache-{tag}", root / f"tmp-{tag}"
    cache.mkdir()
    tmp.mkdir()
    _sink.env = {"XACC_CACHE_DIR": str(cache), "TMPDIR": str(tmp)}
    done = []
    try:
        for suite in suites:
            start = time.monotonic()
            log = fresh_report("log-" + "".join(c if c.isalnum() or c in ".-" else "-" for c in suite.name) + ".txt")
            with open(log, "w") as out:
                _sink.file = out
                try:
                    result = suite.run()
                finally:
                    _sink.file = None
            with lock:
                print(f"\n===== {suite.name} ({time.monotonic() - start:.0f}s, side by side) =====", flush=True)
                sys.stdout.write(log.read_text(errors="replace"))
                sys.stdout.flush()
            done.append((suite, result, time.monotonic() - start))
    finally:
        _sink.env = None
    return done


def run_suites(suites: list[Suite], jobs: int) -> list[tuple[Suite, Result, float]]:
    """Runs the suites, each CPython's in order, up to ``jobs`` CPythons at once (Note
    [Versions side by side]); returns (suite, result, seconds) in the suites' order."""
    streams: dict[str, list[Suite]] = {}
    for suite in suites:
        streams.setdefault(suite.stream, []).append(suite)
    if jobs <= 1 or len(streams) <= 1:
        return run_in_turn(suites)
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="xacc-test-streams-") as root, \
            ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_stream_aside, group, lock, Path(root)) for group in streams.values()]
        results = {id(s): (s, r, t) for f in futures for s, r, t in f.result()}
    return [results[id(s)] for s in suites]


def main() -> int:
    parser = argparse.ArgumentParser(description="Run xacc's test suites.")
    parser.add_argument("--only", action="append", default=[],
                        help="run only suites whose name contains this (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    parser.add_argument("--versions", help="further CPython versions, comma-separated "
                        "(default: every build/venv-3.X)")
    parser.add_argument("--full-versions", action="store_true",
                        help="run only the further versions' suites (every pytest directory each)")
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("XACC_TEST_JOBS", DEFAULT_JOBS)),
                        help="CPython versions whose suites run side by side (default "
                        f"XACC_TEST_JOBS or {DEFAULT_JOBS}; 1 runs every suite in turn)")
    args = parser.parse_args()

    versions = [v for v in args.versions.split(",") if v] if args.versions is not None else None
    suites = all_suites(versions, args.full_versions)
    if args.only:
        suites = [s for s in suites if any(o in s.name for o in args.only)]
    if args.list:
        print("\n".join(s.name for s in suites))
        return 0

    # The MLIR backend's kernel disk cache is on by default (~/.cache/xacc): a
    # test run uses a fresh one of its own, so no result depends on kernels
    # compiled by an earlier build or run, and the user's cache is left alone.
    cache = tempfile.TemporaryDirectory(prefix="xacc-test-cache-")
    os.environ["XACC_CACHE_DIR"] = cache.name
    started = time.monotonic()
    summary = run_suites(suites, args.jobs)

    print("\n===== summary =====")
    total_passed = total_failed = 0
    for suite, r, seconds in summary:
        extras = [f"{r.skipped} skipped"] if r.skipped else []
        extras += [r.note] if r.note else []
        extras.append(f"{seconds:.1f}s")
        print(f"{suite.name}: {r.passed} passed, {r.failed} failed ({'; '.join(extras)})")
        total_passed += r.passed
        total_failed += r.failed
    print(f"-- wall time {time.monotonic() - started:.1f}s ({args.jobs} at a time)")
    print(f"{total_passed} passed, {total_failed} failed", flush=True)
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main())
