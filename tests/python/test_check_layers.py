"""Issue 21, criterion 1: scripts/check_layers.py passes on this tree, and fails
on a planted back-edge (a C++ include against the layering, a cycle between
components of one layer, a Python import cycle, the library importing a tool)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_layers.py"


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, timeout=120)


def test_this_tree_is_clean() -> None:
    r = check(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "clean" in r.stderr


def write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small clean tree: ir uses support, capture uses ir, a backend uses
    capture, the library and a tool in Python without cycles."""
    write(tmp_path, "csrc/include/xacc/support/S.h", "#pragma once\n")
    write(tmp_path, "csrc/lib/ir/Graph.cpp", '#include "xacc/support/S.h"\n')
    write(tmp_path, "csrc/lib/capture/Cache.cpp", '#include "xacc/ir/Graph.h"\n#include <vector>\n')
    write(tmp_path, "csrc/lib/backend/aten/Exe.cpp", '#include "xacc/capture/Backend.h"\n#include "Local.h"\n')
    write(tmp_path, "xacc/__init__.py", "from xacc import a\n")
    write(tmp_path, "xacc/a.py", "import os\nfrom xacc import b\n")
    write(tmp_path, "xacc/b.py", "from . import c\n")
    write(tmp_path, "xacc/c.py", "import xacc\n")  # a module importing its package is not a cycle
    write(tmp_path, "xjit/__init__.py", "import xacc.a\n")
    r = check(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    return tmp_path


def test_include_against_the_layering_fails(tree: Path) -> None:
    write(tree, "csrc/lib/capture/Bad.cpp", '#include "xacc/capture/X.h"\n\n#include "../backend/aten/AtenOp.h"\n')
    r = check(tree)
    assert r.returncode == 1
    assert "csrc/lib/capture/Bad.cpp:3: capture (layer 2) includes \"../backend/aten/AtenOp.h\" of backend" in r.stdout


def test_cycle_within_a_layer_fails(tree: Path) -> None:
    write(tree, "csrc/lib/passes/P.cpp", '#include "xacc/camel/C.h"\n')
    write(tree, "csrc/lib/camel/C.cpp", '#include "xacc/passes/P.h"\n')
    r = check(tree)
    assert r.returncode == 1
    assert "C++ components include each other in a cycle: camel <-> passes" in r.stdout


def test_python_import_cycle_fails_even_when_lazy(tree: Path) -> None:
    write(tree, "xacc/c.py", "def f():\n    from xacc.a import thing\n    return thing\n")
    r = check(tree)
    assert r.returncode == 1
    assert "Python modules import each other in a cycle: xacc.a <-> xacc.b <-> xacc.c" in r.stdout


def test_type_checking_imports_are_not_cycles(tree: Path) -> None:
    write(tree, "xacc/c.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from xacc.a import T\n")
    assert check(tree).returncode == 0


def test_library_importing_a_tool_fails(tree: Path) -> None:
    write(tree, "xacc/b.py", "def where():\n    import xjit\n    return xjit.__file__\n")
    r = check(tree)
    assert r.returncode == 1
    assert "xacc/b.py:2: xacc imports xjit (a tool)" in r.stdout
