"""Filling a filesystem, for the tests of what xacc does when a disk is full
(the kernel disk cache and AOT artifacts)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def fill(d: Path) -> None:
    """Writes to `d` until its filesystem is full (unbuffered: a buffered close
    would raise ENOSPC)."""
    fd = os.open(d / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, os.urandom(4096))
    finally:
        os.close(fd)
