#!/usr/bin/env python3
"""`make test-latest`: the capture suite and the model sweep against the newest
releases of xacc's direct dependencies, and what changed against the pinned run.

1. A venv of its own, build/venv-latest (python -m venv --system-site-packages,
   so the pinned torch of this interpreter is shared and stays: pip gets a
   constraint torch==<installed>), where `pip install -U` brings the newest
   release of every other package of requirements/direct.txt.
2. Prints each direct dependency's pinned version (requirements/lock.txt, else
   this interpreter's) against the venv's, marking those that changed.
3. Runs tests/python/capture with the venv's python and PYTHONPATH=<repo>, so
   the already-built xacc._C is used (same CPython, same torch), and prints
   its result line; with --pinned-too, runs it with this interpreter too and
   prints the tests that fail only with the newest releases.
4. Runs benchmarks/models/sweep.py in the venv on the architectures of the
   committed expected CSV (benchmarks/models/expected/sweep-transformers-<pinned>*.csv)
   and prints `sweep.py --diff expected new`: per model and mode what changed
   (status, eager-equal, graphs, breaks, recompiles), the zero-break and
   eager-equal counts, and the architectures only one run has.

    python3 scripts/test_latest.py [--sweep-args "--limit 20 --jobs 2"] [--skip-capture] [--pinned-too] [--resume]

Exit status 0 when it ran through (the differences are for a person to read),
1 when a step could not run (venv, pip, no expected CSV).
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata as md
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(os.environ.get("XACC_BUILD_DIR", ROOT / "build")) / "venv-latest"
DIRECT = ROOT / "requirements" / "direct.txt"
LOCK = ROOT / "requirements" / "lock.txt"
EXPECTED = ROOT / "benchmarks" / "models" / "expected"


def direct_packages() -> list[str]:
    """pip names of requirements/direct.txt ("pip-name import-name" lines)."""
    if not DIRECT.exists():
        raise SystemExit(f"test-latest: {DIRECT} not found")
    names = []
    for ln in DIRECT.read_text().splitlines():
        ln = ln.split("#", 1)[0].strip()
        if ln:
            names.append(ln.split()[0])
    return names


def pinned_versions(names: list[str]) -> dict[str, str]:
    pins = {}
    if LOCK.exists():
        for ln in LOCK.read_text().splitlines():
            m = re.match(r"^([A-Za-z0-9_.\-]+)==([^\s;#]+)", ln.strip())
            if m:
                pins[_norm(m.group(1))] = m.group(2)
    out = {}
    for n in names:
        try:
            out[n] = pins.get(_norm(n)) or md.version(n)
        except md.PackageNotFoundError:
            out[n] = "-"
    return out


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    return subprocess.run(cmd, **kw)


def make_venv(names: list[str]) -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        if run([sys.executable, "-m", "venv", "--system-site-packages", str(VENV)]).returncode:
            raise SystemExit("test-latest: could not create the venv")
    torch_version = md.version("torch")
    constraints = VENV / "constraints.txt"
    constraints.write_text(f"torch=={torch_version}\n")
    upgrade = [n for n in names if _norm(n) != "torch"]
    p = run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-U",
             "--constraint", str(constraints), *upgrade])
    if p.returncode:
        raise SystemExit("test-latest: pip could not install the newest releases")
    return py


def venv_versions(py: Path, names: list[str]) -> dict[str, str]:
    code = ("import importlib.metadata as md, sys\n"
            "for n in sys.argv[1:]:\n"
            "    try: print(n, md.version(n))\n"
            "    except md.PackageNotFoundError: print(n, '-')\n")
    out = subprocess.run([str(py), "-c", code, *names], capture_output=True, text=True, check=True).stdout
    return dict(ln.split(" ", 1) for ln in out.splitlines())


def pytest_failures(py: Path | str, env: dict) -> tuple[str, set[str]]:
    """(pytest's result line, ids of the failed tests) for tests/python/capture."""
    p = run([str(py), "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "tests/python/capture"],
            cwd=ROOT, env=env, capture_output=True, text=True)
    lines = p.stdout.strip().splitlines()
    failed = {ln.split()[1] for ln in lines if ln.startswith(("FAILED ", "ERROR "))}
    return (lines[-1] if lines else p.stderr.strip()[-300:]), failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sweep-args", default=os.environ.get("SWEEP_ARGS", "--jobs 2"),
                    help="extra sweep.py arguments (env SWEEP_ARGS), e.g. '--limit 20'")
    ap.add_argument("--skip-capture", action="store_true", help="no capture suite")
    ap.add_argument("--skip-sweep", action="store_true", help="no model sweep")
    ap.add_argument("--pinned-too", action="store_true", help="run the capture suite pinned as well and diff")
    ap.add_argument("--resume", action="store_true",
                    help="keep the newest-releases sweep CSV of an earlier run and sweep only the architectures "
                         "it has not recorded (a sweep of every architecture takes most of an hour here)")
    a = ap.parse_args()
    names = direct_packages()
    pinned = pinned_versions(names)
    py = make_venv(names)
    latest = venv_versions(py, names)
    print("\n== versions: pinned -> newest (venv build/venv-latest)")
    for n in names:
        same = (pinned.get(n) or "").split("+")[0] == (latest.get(n) or "").split("+")[0]  # 2.13.0 == 2.13.0+cpu
        mark = "" if same else "  (changed)"
        print(f"  {n:<16} {pinned.get(n, '-'):>14} -> {latest.get(n, '-'):<14}{mark}")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("VIRTUAL_ENV", None)
    if not a.skip_capture:
        print("\n== capture suite (tests/python/capture)")
        line, failed = pytest_failures(py, env)
        print(f"  newest: {line}")
        for t in sorted(failed):
            print(f"    failed: {t}")
        if a.pinned_too:
            pline, pfailed = pytest_failures(sys.executable, env)
            print(f"  pinned: {pline}")
            for t in sorted(failed - pfailed):
                print(f"    fails only with the newest: {t}")
            for t in sorted(pfailed - failed):
                print(f"    fails only pinned: {t}")
    if a.skip_sweep:
        return
    expected = sorted(glob.glob(str(EXPECTED / f"sweep-transformers-{pinned.get('transformers')}*.csv")))
    if not expected:
        raise SystemExit(f"test-latest: no expected sweep CSV for transformers {pinned.get('transformers')} "
                         f"in {EXPECTED}")
    sys.path.insert(0, str(ROOT / "benchmarks" / "models"))
    from sweep import read_rows
    models = sorted({r["model"] for r in read_rows(expected[0])[0]})
    out = VENV / f"sweep-transformers-{latest.get('transformers')}.csv"
    if not a.resume:
        out.unlink(missing_ok=True)  # a fresh run, not one resumed from an earlier test-latest
    print(f"\n== model sweep, newest releases ({len(models)} architectures of {Path(expected[0]).name}) -> {out}")
    p = run([str(py), str(ROOT / "benchmarks" / "models" / "sweep.py"), "--csv", str(out),
             "--only", ",".join(models), "--missing-ok", *shlex.split(a.sweep_args)], cwd=ROOT, env=env)
    if p.returncode:
        raise SystemExit("test-latest: the sweep did not finish")
    print(f"\n== sweep changes: {Path(expected[0]).name} (pinned) -> {out.name} (newest)")
    subprocess.run([str(py), str(ROOT / "benchmarks" / "models" / "sweep.py"), "--diff", expected[0], str(out)],
                   cwd=ROOT, env=env, check=True)


if __name__ == "__main__":
    main()
