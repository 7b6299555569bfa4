#!/usr/bin/env python3
"""Byte-for-byte round trip of every .gir file under a directory through xacc-opt.

For each file (and each `// -----` chunk of files run with --split-input-file) that
parses, checks print(parse(print(parse(x)))) == print(parse(x)), with and without
locations, i.e. printing is a fixpoint after one trip. Chunks that do not parse are
skipped when the file is meant to hold errors (an `expected-error` comment or a
`not xacc-opt` RUN line) or is an input without RUN lines; a chunk of any other file
that fails to parse is itself a failure. The verifier is skipped (--no-verify): this
checks the printer against the parser, and ill-typed IR must round-trip too.

Usage: check_roundtrip.py DIR [--tool CMD] [--min-checked N]
Exit status 1 on any mismatch, or when fewer than N chunks were checked (so a
missing or broken tool cannot pass vacuously).
"""
from __future__ import annotations

import argparse
import pathlib
import shlex
import subprocess
import sys

SPLIT = "// -----"


def chunks_of(text: str, split: bool) -> list[tuple[int, str]]:
    """(first line number, text) of each chunk; line numbers kept by padding."""
    if not split:
        return [(1, text)]
    out, cur, start = [], [], 1
    for i, line in enumerate(text.splitlines(keepends=True), 1):
        if line.startswith(SPLIT):
            out.append((start, "\n" * (start - 1) + "".join(cur)))
            cur, start = [], i + 1
        else:
            cur.append(line)
    out.append((start, "\n" * (start - 1) + "".join(cur)))
    return out


def run(tool: list[str], text: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(tool + ["--no-verify", *flags], input=text.encode(),
                          capture_output=True, timeout=60)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=pathlib.Path)
    ap.add_argument("--tool", default="xacc-opt", help="command line of xacc-opt")
    ap.add_argument("--min-checked", type=int, default=1)
    args = ap.parse_args()
    tool = shlex.split(args.tool)

    checked = skipped = 0
    failures: list[str] = []
    files = sorted(p for p in args.root.rglob("*.gir")
                   if "Output" not in p.parts and "corpus" not in p.parts)
    for path in files:
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        runs = [l for l in text.splitlines() if "RUN:" in l]
        expects_errors = "expected-error" in text or any("not xacc-opt" in l for l in runs)
        split = any("--split-input-file" in l for l in runs) or SPLIT in text
        rel = path.relative_to(args.root)
        for line, chunk in chunks_of(text, split):
            where = f"{rel}:{line}"
            for flags in ((), ("--no-locs",)):
                first = run(tool, chunk, *flags)
                if first.returncode != 0:
                    if expects_errors or not runs:
                        skipped += 1
                    else:
                        failures.append(f"{where}: does not parse:\n"
                                        + first.stderr.decode(errors="replace"))
                    break
                printed = first.stdout.decode(errors="surrogateescape")
                second = run(tool, printed, *flags)
                reprinted = second.stdout.decode(errors="surrogateescape")
                if second.returncode != 0:
                    failures.append(f"{where} {' '.join(flags)}: printed form does not parse:\n"
                                    + second.stderr.decode(errors="replace"))
                elif reprinted != printed:
                    failures.append(f"{where} {' '.join(flags)}: print(parse(print(parse(x)))) "
                                    "differs from print(parse(x)):\n" + diff(printed, reprinted))
                else:
                    checked += 1
    for f in failures:
        print("FAIL:", f)
    print(f"round trip: {checked} checked, {skipped} skipped (do not parse), "
          f"{len(failures)} failed, {len(files)} files")
    if checked < args.min_checked:
        print(f"FAIL: only {checked} chunks checked, expected at least {args.min_checked}")
        return 1
    return 1 if failures else 0


def diff(a: str, b: str) -> str:
    import difflib
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                        "print(parse(x))", "print(parse(print(parse(x))))"))


if __name__ == "__main__":
    sys.exit(main())
