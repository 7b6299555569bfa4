#!/usr/bin/env python3
"""Writes docs/diagnostics.md from the diagnostic tables: the core's
(csrc/include/xacc/support/CoreDiags.def) and Camel's front end and runtime
(csrc/include/xacc/camel/CamelDiags.def, RuntimeDiags.def). `--check`: exit 1 if
the file is out of date."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "diagnostics.md"
TABLES = [
    ("The core (GIR, passes, interpreter and runtime, backends, ONNX export)",
     "csrc/include/xacc/support/CoreDiags.def"),
    ("Camel's front end", "csrc/include/xacc/camel/CamelDiags.def"),
    ("Camel's runtime", "csrc/include/xacc/camel/RuntimeDiags.def"),
]
ROW = re.compile(r'^(?:RUNTIME_)?DIAG\((\w+),\s*"(\w+)",\s*(?:(\w+),\s*)?"((?:[^"\\]|\\.)*)"\)', re.M)


def rows(rel: str) -> list[tuple[str, str, str, str]]:
    """(name, code, severity, text) of every DIAG row of a table."""
    text = (ROOT / rel).read_text()
    return [(m.group(1), m.group(2), m.group(3) or "", m.group(4)) for m in ROW.finditer(text)]


def markdown() -> str:
    out = ["# Diagnostics", "",
           "Every diagnostic xacc reports carries a stable code: `file:line:col: error[E0101]: message`.",
           "This page is generated from the tables by `scripts/gen_diag_doc.py`; a code is declared once,",
           "in its table, and `tests/python/test_code_tables.py` checks that it appears nowhere else as a",
           "literal. Graph-break codes (`GBnnn`) are listed in [logging.md](logging.md).", ""]
    for title, rel in TABLES:
        out += [f"## {title}", "", f"Table: `{rel}`.", "", "| code | name | severity | meaning |",
                "| --- | --- | --- | --- |"]
        for name, code, sev, text in rows(rel):
            sev = sev.lower() or ("warning" if code.startswith("W") else "error")
            cell = text.replace("|", "\\|")
            out.append(f"| {code} | {name} | {sev} | {cell} |")
        out.append("")
    return "\n".join(out)


def main() -> int:
    text = markdown()
    if "--check" in sys.argv[1:]:
        if not DOC.exists() or DOC.read_text() != text:
            print(f"{DOC} is out of date: run scripts/gen_diag_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
