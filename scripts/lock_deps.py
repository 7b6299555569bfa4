#!/usr/bin/env python3
"""Prints requirements/lock.txt for the packages installed in this interpreter.

Walks the dependency closure of requirements/direct.txt through importlib.metadata
(the installed distributions' own Requires-Dist, markers evaluated for this
interpreter, no extras) and pins every distribution in it to its installed version.
torch's local tag (+cpu) is dropped so the pin matches the CPU wheel and PyPI's build.
Run it after a deliberate upgrade: python scripts/lock_deps.py > requirements/lock.txt
"""

from __future__ import annotations

import importlib.metadata as md
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parent.parent
HEADER = """\
# The pinned PyPI set of the build, the tests and the benchmarks (CPython 3.11).
# scripts/install-deps.sh installs exactly these versions (pip --constraint) and checks
# every line against what is installed; `make test-latest` tries the newest releases in
# a venv of its own (build/venv-latest) and never touches this file's environment.
# Regenerate after a deliberate upgrade with: python scripts/lock_deps.py > requirements/lock.txt
"""


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def direct_names() -> list[str]:
    names = []
    for line in (REPO / "requirements" / "direct.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line.split()[0])
    return names


def closure(roots: list[str]) -> dict[str, str]:
    pinned: dict[str, str] = {}
    stack = list(roots)
    while stack:
        name = stack.pop()
        key = normalize(name)
        if key in pinned:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            sys.exit(f"lock_deps: {name} is required but not installed")
        pinned[key] = dist.version.split("+")[0]
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                stack.append(req.name)
    return pinned


def main() -> None:
    sys.stdout.write(HEADER)
    for name, version in sorted(closure(direct_names()).items()):
        sys.stdout.write(f"{name}=={version}\n")


if __name__ == "__main__":
    main()
