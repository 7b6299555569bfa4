"""Configure and build xacc's CMake project, and expose the built ``xacc._C`` module.

One place for the CMake invocation, used by ``setup.py`` (``pip install -e .``) and by
the Makefile (``make build``, ``make install``). Invariants:

* the build tree is ``<repo>/build`` unless ``XACC_BUILD_DIR`` says otherwise; it is
  configured once (Ninja, Release, ``Python3_EXECUTABLE`` = this interpreter) and
  reconfigured only when its cache belongs to another source tree, generator or Python,
  or when ``XACC_CMAKE_ARGS`` is set (its arguments are then passed again);
* builds are incremental (``cmake --build``), ``XACC_JOBS`` parallel jobs (default: the
  number of CPUs); ccache is picked up by the top-level CMakeLists.txt;
* ``xacc/_C<EXT_SUFFIX>`` in the source tree is a symlink to the module CMake built, so an
  incremental build refreshes the editable install without re-running pip; so is
  ``xacc/_C_xpu<EXT_SUFFIX>`` and ``xacc/_C_mlir<EXT_SUFFIX>`` when the MLIR backend
  modules were built (Note [Lazy backend modules]).

Command line: ``python scripts/cmake_build.py [build|link|check-editable]``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("xacc", "xjit", "camel_lang")  # top-level Python packages (when present)
EXTENSION = "_C"  # CMake target of the pybind11 module, lives in the xacc package
OPTIONAL_EXTENSIONS = ("_C_xpu", "_C_mlir")  # further modules of the xacc package, when built


def build_dir() -> Path:
    return Path(os.environ.get("XACC_BUILD_DIR", REPO_ROOT / "build")).resolve()


def _read_cache(cache: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in cache.read_text(errors="replace").splitlines():
        if not line or line[0] in "#/" or "=" not in line or ":" not in line.split("=", 1)[0]:
            continue
        key_type, value = line.split("=", 1)
        values[key_type.split(":", 1)[0]] = value
    return values


def _stale_reason(bdir: Path, python: str) -> str | None:
    """Why the build tree must be (re)configured, or None when it is fine as is."""
    cache = bdir / "CMakeCache.txt"
    if not cache.exists():
        return "not configured yet"
    values = _read_cache(cache)
    if Path(values.get("CMAKE_HOME_DIRECTORY", "")).resolve() != REPO_ROOT:
        return "configured for another source tree"
    if values.get("CMAKE_GENERATOR") != "Ninja":
        return "configured with another generator"
    cached_python = values.get("Python3_EXECUTABLE", "")
    # python, python3 and python3.11 of one installation are the same interpreter.
    if os.path.realpath(cached_python) != os.path.realpath(python):
        return f"configured for another Python ({cached_python})"
    if os.environ.get("XACC_CMAKE_ARGS"):
        return "XACC_CMAKE_ARGS is set"
    return None


def configure(bdir: Path, python: str) -> None:
    reason = _stale_reason(bdir, python)
    if reason is None:
        return
    cache = bdir / "CMakeCache.txt"
    if cache.exists() and reason != "XACC_CMAKE_ARGS is set":
        # A cache from another tree/generator/Python cannot be reused; start afresh.
        cache.unlink()
        shutil.rmtree(bdir / "CMakeFiles", ignore_errors=True)
    print(f"-- xacc: configuring {bdir} ({reason})", flush=True)
    cmd = [
        "cmake", "-S", str(REPO_ROOT), "-B", str(bdir), "-G", "Ninja",
        "-DCMAKE_BUILD_TYPE=Release", f"-DPython3_EXECUTABLE={python}",
    ]
    cmd += shlex.split(os.environ.get("XACC_CMAKE_ARGS", ""))
    subprocess.run(cmd, check=True)


def build(bdir: Path | None = None, python: str | None = None) -> Path:
    """Configure if needed, then build every target incrementally. Returns the build dir."""
    bdir = bdir or build_dir()
    python = python or sys.executable
    configure(bdir, python)
    jobs = os.environ.get("XACC_JOBS") or str(os.cpu_count() or 2)
    subprocess.run(["cmake", "--build", str(bdir), "--parallel", jobs], check=True)
    return bdir


def find_extension(bdir: Path, name: str = EXTENSION) -> Path | None:
    """The newest built ``name`` module for this interpreter under the build tree (wherever
    its CMake puts it). The venvs under build/ (``make venvs``, ``make test-latest``) hold
    other packages' modules of the same name (torch's ``_C``): nothing under a
    site-packages directory counts."""
    want = name + sysconfig.get_config_var("EXT_SUFFIX")
    found = [
        p for p in bdir.rglob(f"{name}*.so")
        if "CMakeFiles" not in p.parts and "site-packages" not in p.parts and p.name == want and p.is_file()
    ]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def extension_expected() -> bool:
    return (REPO_ROOT / "csrc" / "python" / "CMakeLists.txt").exists()


def link_extension(bdir: Path | None = None) -> Path | None:
    """Point xacc/_C<EXT_SUFFIX> at the built module. Returns the link, or None when
    there is no module to link (an error only once csrc/python exists)."""
    bdir = bdir or build_dir()
    built = find_extension(bdir)
    if built is None:
        if extension_expected():
            raise SystemExit(f"xacc: no {EXTENSION}*.so under {bdir}; did the build fail?")
        print(f"-- xacc: csrc/python not present yet, no xacc.{EXTENSION} to link", flush=True)
        return None
    for name in OPTIONAL_EXTENSIONS:
        other = find_extension(bdir, name)
        if other is not None:
            _symlink(REPO_ROOT / "xacc" / (name + sysconfig.get_config_var("EXT_SUFFIX")), other)
    return _symlink(REPO_ROOT / "xacc" / (EXTENSION + sysconfig.get_config_var("EXT_SUFFIX")), built)


def _symlink(link: Path, built: Path) -> Path:
    link.parent.mkdir(exist_ok=True)
    target = os.path.relpath(built, link.parent)
    if link.is_symlink() and os.readlink(link) == target:
        return link
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(target)
    print(f"-- xacc: {link.relative_to(REPO_ROOT)} -> {target}", flush=True)
    return link


def editable_ok() -> bool:
    """True when this interpreter imports every package present in the repo from the
    repo itself (i.e. `pip install -e .` is in place and current)."""
    import importlib.util

    for name in PACKAGES:
        if not (REPO_ROOT / name / "__init__.py").exists():
            continue
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin).resolve() if spec and spec.origin else None
        if origin != REPO_ROOT / name / "__init__.py":
            return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", nargs="?", default="build",
                        choices=["build", "link", "check-editable"],
                        help="build: configure+build+link (default); link: only link "
                             "xacc._C; check-editable: exit 0 iff the editable install "
                             "is in place")
    args = parser.parse_args()
    if args.action == "check-editable":
        # Run from outside the repo so the current directory does not shadow the install.
        os.chdir("/")
        return 0 if editable_ok() else 1
    if args.action == "build":
        try:
            build()
        except subprocess.CalledProcessError as err:
            print(f"xacc: `{' '.join(err.cmd)}` failed (exit status {err.returncode})",
                  file=sys.stderr)
            return err.returncode or 1
    link_extension()
    return 0


if __name__ == "__main__":
    sys.exit(main())
