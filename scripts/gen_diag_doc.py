#!/usr/bin/env python3
"""Writes docs/diagnostics.md from the diagnostic tables: the core's
(csrc/include/xacc/support/CoreDiags.def) and Camel's front end and runtime
(csrc/include/xacc/camel/CamelDiags.def, RuntimeDiags.def), and
docs/graph-breaks.md from the graph-break table
(csrc/include/xacc/capture/GraphBreaks.def). `--check`: exit 1 if a file is out
of date."""

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
GRAPH_BREAKS = "csrc/include/xacc/capture/GraphBreaks.def"
BREAK_DOC = ROOT / "docs" / "graph-breaks.md"
# GRAPH_BREAK(Name, "GBnnn", "reason", "hint"), a row may span lines (one literal per field).
BREAK_ROW = re.compile(r'^GRAPH_BREAK\((\w+),\s*"(GB\d{3})",\s*"((?:[^"\\]|\\.)*)",\s*"((?:[^"\\]|\\.)*)"\)', re.M)
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
           "literal. Graph-break codes (`GBnnn`) are listed in [graph-breaks.md](graph-breaks.md).", ""]
    for title, rel in TABLES:
        out += [f"## {title}", "", f"Table: `{rel}`.", "", "| code | name | severity | meaning |",
                "| --- | --- | --- | --- |"]
        for name, code, sev, text in rows(rel):
            sev = sev.lower() or ("warning" if code.startswith("W") else "error")
            cell = text.replace("|", "\\|")
            out.append(f"| {code} | {name} | {sev} | {cell} |")
        out.append("")
    return "\n".join(out)


def break_rows() -> list[tuple[str, str, str, str]]:
    """(name, code, reason, hint) of every GRAPH_BREAK row."""
    return BREAK_ROW.findall((ROOT / GRAPH_BREAKS).read_text())


def break_markdown() -> str:
    out = ["# Graph breaks", "",
           "When the translator meets something it does not capture, the frame *breaks*: the graph",
           "so far runs compiled and the rest of the frame runs in Python. Each kind of break has a",
           "stable code, reported by `xacc.explain`, `XACC_LOG=breaks` and `fullgraph=True` errors",
           "together with a detail and the user's file:line.", "",
           f"This page is generated from `{GRAPH_BREAKS}`",
           "by `scripts/gen_diag_doc.py`. C++ names a row as `GB::Name`; `tests/python/test_code_tables.py`",
           "checks that no code is spelled as a literal elsewhere in `csrc/` and that every code the Python",
           "sources spell is in the table. Codes never change meaning; a new kind of break gets a new row.", "",
           "| code | name | reason | hint |", "| --- | --- | --- | --- |"]
    for name, code, reason, hint in break_rows():
        cells = [c.replace("|", "\\|") for c in (reason, hint)]
        out.append(f"| {code} | {name} | {cells[0]} | {cells[1]} |")
    out.append("")
    return "\n".join(out)


def main() -> int:
    stale = []
    for doc, text in ((DOC, markdown()), (BREAK_DOC, break_markdown())):
        if "--check" in sys.argv[1:]:
            if not doc.exists() or doc.read_text() != text:
                stale.append(doc)
        else:
            doc.write_text(text)
    for doc in stale:
        print(f"{doc} is out of date: run scripts/gen_diag_doc.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
