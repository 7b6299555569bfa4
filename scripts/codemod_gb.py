#!/usr/bin/env python3
"""Rewrites graph-break codes spelled as string literals in the C++ sources into
the typed names of csrc/include/xacc/capture/GraphBreaks.def (issue #21):

    fail("GB003", d)                    -> fail(GB::Print, d)
    fail(code.empty() ? "GB006" : code, d) -> fail(hostBreak(code, GB::NoMetaKernel), d)
    f.code == "GB011" / f.code = "GB020"   -> f.code == gbCode(GB::UnsupportedType) / ...

Idempotent: a file without `"GBnnn"` literals is left as it is. `//` comments
are not touched. A literal whose code is not in the table is reported and left
(exit 1). Usage: codemod_gb.py [--check] [FILE_OR_DIR ...]  (default: csrc/);
`--check` only lists what it would rewrite (exit 1 if anything)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "csrc/include/xacc/capture/GraphBreaks.def"
ROW = re.compile(r'^GRAPH_BREAK\((\w+),\s*"(GB\d{3})"', re.M)
SKIP = {TABLE, ROOT / "csrc/include/xacc/capture/GraphBreaks.h"}
LIT = r'"(GB\d{3})"'
HOST = re.compile(r'([\w.\->]+)\.empty\(\)\s*\?\s*' + LIT + r'\s*:\s*([\w.\->]+)')
COMPARE = re.compile(r'(==|!=|(?<![=!<>])=)\s*' + LIT)
ANY = re.compile(LIT)


def names() -> dict[str, str]:
    return {code: name for name, code in ROW.findall(TABLE.read_text())}


def split_comment(line: str) -> tuple[str, str]:
    """(code, comment) of one line: the comment starts at a `//` outside a literal."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return line[:i], line[i:]
        i += 1
    return line, ""


def rewrite(text: str, table: dict[str, str], unknown: list[str]) -> str:
    def name(m: re.Match, group: int) -> str | None:
        code = m.group(group)
        if code not in table:
            unknown.append(code)
            return None
        return f"GB::{table[code]}"

    def host(m: re.Match) -> str:
        n = name(m, 2)
        if n is None or m.group(1) != m.group(3):
            return m.group(0)
        return f"hostBreak({m.group(1)}, {n})"

    def compare(m: re.Match) -> str:
        n = name(m, 2)
        return m.group(0) if n is None else f"{m.group(1)} gbCode({n})"

    def plain(m: re.Match) -> str:
        n = name(m, 1)
        return m.group(0) if n is None else n

    out = []
    for line in text.split("\n"):
        code, comment = split_comment(line)
        if '"GB' in code:
            code = ANY.sub(plain, COMPARE.sub(compare, HOST.sub(host, code)))
        out.append(code + comment)
    return "\n".join(out)


def files(args: list[str]) -> list[Path]:
    roots = [Path(a).resolve() for a in args] or [ROOT / "csrc"]
    out: list[Path] = []
    for r in roots:
        found = [r] if r.is_file() else sorted(r.rglob("*"))
        out += [p for p in found if p.suffix in (".cpp", ".h", ".inc") and p.is_file() and p not in SKIP]
    return out


def main() -> int:
    argv = sys.argv[1:]
    check = "--check" in argv
    table = names()
    unknown: list[str] = []
    changed = []
    for path in files([a for a in argv if a != "--check"]):
        text = path.read_text()
        new = rewrite(text, table, unknown)
        if new != text:
            changed.append(path)
            if not check:
                path.write_text(new)
    for p in changed:
        print(("would rewrite " if check else "rewrote ") + (str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)))
    if unknown:
        print(f"codes not in {TABLE.relative_to(ROOT)}: {sorted(set(unknown))}", file=sys.stderr)
        return 1
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
