"""Issue 21, criterion 4 (diagnostic codes): every diagnostic code is declared
once, in its table (csrc/include/xacc/support/CoreDiags.def for the core,
camel/CamelDiags.def and camel/RuntimeDiags.def for Camel), appears nowhere
else in the C++ sources as a literal, and docs/diagnostics.md is generated from
the tables."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLES = ["csrc/include/xacc/support/CoreDiags.def", "csrc/include/xacc/camel/CamelDiags.def",
          "csrc/include/xacc/camel/RuntimeDiags.def"]
ROW = re.compile(r'^(?:RUNTIME_)?DIAG\((\w+),\s*"([EW]\d{4})"', re.M)
LITERAL = re.compile(r'"([EW]\d{4})"')

# Files that may still spell codes as literals: none left. (The test fails when a
# file here has no literal left, so the list can only shrink.)
PENDING: set[str] = set()


def code_text(path: Path) -> str:
    """The file without its // comments (examples of codes in comments are fine)."""
    return re.sub(r"//[^\n]*", "", path.read_text(errors="replace"))


def literals() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "csrc").rglob("*")):
        if path.suffix in (".cpp", ".h", ".in") and path.is_file():
            codes = LITERAL.findall(code_text(path))
            if codes:
                found[str(path.relative_to(ROOT))] = codes
    return found


def test_codes_are_declared_once() -> None:
    seen: dict[str, str] = {}
    for table in TABLES:
        for name, code in ROW.findall((ROOT / table).read_text()):
            assert code not in seen, f"{code} is declared twice: {seen[code]} and {table} ({name})"
            seen[code] = table
    assert len(seen) > 150


def test_no_code_literal_outside_its_table() -> None:
    found = literals()
    stray = {f: c for f, c in found.items() if f not in PENDING}
    assert not stray, f"diagnostic codes spelled as literals (use the table's name): {stray}"
    done = sorted(f for f in PENDING if f not in found)
    assert not done, f"no literal codes left in {done}: remove them from PENDING"


def test_every_core_code_is_used() -> None:
    """A row nobody reports is a stale fact."""
    text = "".join(code_text(p) for p in (ROOT / "csrc").rglob("*") if p.suffix in (".cpp", ".h") and p.is_file())
    pending = "".join(code_text(ROOT / f) for f in sorted(PENDING))
    rows = ROW.findall((ROOT / TABLES[0]).read_text())
    unused = [name for name, code in rows
              if f"CoreDiag::{name}" not in text and f'"{code}"' not in pending]
    assert not unused, f"CoreDiags.def rows never reported: {unused}"


def test_diagnostics_doc_is_generated() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_diag_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = (ROOT / "docs" / "diagnostics.md").read_text()
    assert "| E0417 | StackOverflow |" in doc and "| E3014 |" in doc
