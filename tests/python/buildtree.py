"""Where the build under test lives, for tests that run its executables.

`XACC_BUILD_DIR` (set by scripts/run_tests.py and the Makefile) wins, then the
repository's `build/`, then whatever `camel` is on PATH (an installed tree)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    return Path(os.environ.get("XACC_BUILD_DIR") or REPO / "build")


def camel_binary() -> str | None:
    for d in (os.environ.get("XACC_BUILD_DIR"), str(REPO / "build")):
        exe = Path(d) / "bin" / "camel" if d else None
        if exe and exe.is_file() and os.access(exe, os.X_OK):
            return str(exe.resolve())
    return shutil.which("camel")
