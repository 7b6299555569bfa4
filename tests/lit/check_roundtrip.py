#!/usr/bin/env python3
"""Byte-for-byte round trip of every .gir file under a directory through xacc-opt.

For each file, and each `// -----` chunk of a split file, that parses, checks
print(parse(print(parse(x)))) == print(parse(x)), with and without locations, i.e.
printing is a fixpoint after one trip. Chunks that do not parse are skipped when the
file is meant to hold errors (an `expected-error` comment or a `not xacc-opt` RUN
line), is an input without RUN lines, or uses an op family this build lacks (aten.*
without libtorch); a chunk of any other file that fails to parse is a failure. The
verifier is skipped (--no-verify): this checks the printer against the parser, and
ill-typed IR must round-trip too.

All chunks go through xacc-opt in one --split-input-file run per trip (four runs in
all), because starting xacc-opt can be slow (a build with libtorch loads it).
Diagnostics keep their line numbers under --split-input-file, which is how a failing
chunk is recognised.

Usage: check_roundtrip.py DIR [--tool CMD] [--min-checked N]
Exit status 1 on any mismatch, or when fewer than N chunks were checked (so a missing
or broken tool cannot pass vacuously).
"""
from __future__ import annotations

import argparse
import difflib
import pathlib
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass

SPLIT = "// -----"
# An op family this build of xacc-opt lacks (e.g. aten.* without libtorch): the file
# is checked by builds that have it.
FAMILY_NOT_LOADED = "family is not loaded in this tool"
DIAG_LINE = re.compile(r"^<stdin>:(\d+):\d+: error", re.M)


@dataclass
class Chunk:
    where: str           # file:line of the chunk
    text: str
    may_fail: bool       # an error file or an input: not parsing is fine


def chunks_of(path: pathlib.Path, root: pathlib.Path) -> list[Chunk]:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    runs = [line for line in text.splitlines() if "RUN:" in line]
    may_fail = ("expected-error" in text or any("not xacc-opt" in r for r in runs)
                or not runs)
    rel = path.relative_to(root)
    out, cur, start = [], [], 1
    for i, line in enumerate(text.splitlines(keepends=True), 1):
        if line.startswith(SPLIT):
            out.append(Chunk(f"{rel}:{start}", "".join(cur), may_fail))
            cur, start = [], i + 1
        else:
            cur.append(line)
    out.append(Chunk(f"{rel}:{start}", "".join(cur), may_fail))
    for c in out:
        if not c.text.endswith("\n"):
            c.text += "\n"
    return out


def run_split(tool: list[str], texts: list[str], flags: tuple[str, ...]):
    """Runs all texts as chunks of one input; returns (sections, errors) where
    sections[i] is the output for texts[i] and errors[i] the diagnostics on it."""
    starts, big, line = [], [], 1
    for t in texts:
        starts.append(line)
        big.append(t)
        big.append(SPLIT + "\n")
        line += t.count("\n") + 1
    data = "".join(big[:-1]) if big else ""
    r = subprocess.run(tool + ["--no-verify", "--split-input-file", *flags],
                       input=data.encode("utf-8", "surrogateescape"),
                       capture_output=True, timeout=600)
    out = r.stdout.decode("utf-8", "surrogateescape")
    sections = re.split(r"^// -----\n", out, flags=re.M) if texts else []
    stderr = r.stderr.decode("utf-8", "replace")
    errors: list[list[str]] = [[] for _ in texts]
    for m in DIAG_LINE.finditer(stderr):
        lineno = int(m.group(1))
        idx = max(i for i, s in enumerate(starts) if s <= lineno) if starts else 0
        end = stderr.find("\n", m.start())
        errors[idx].append(stderr[m.start(): end if end >= 0 else None])
    if len(sections) != len(texts):
        raise SystemExit(f"FAIL: {len(texts)} chunks in, {len(sections)} sections out "
                         f"(exit {r.returncode}):\n{stderr[:2000]}")
    if r.returncode != 0 and not any(errors):
        raise SystemExit(f"FAIL: xacc-opt exited {r.returncode} without a located error:\n"
                         + stderr[:2000])
    return sections, errors


def diff(a: str, b: str) -> str:
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True),
                                        "print(parse(x))", "print(parse(print(parse(x))))"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=pathlib.Path)
    ap.add_argument("--tool", default="xacc-opt", help="command line of xacc-opt")
    ap.add_argument("--min-checked", type=int, default=1)
    args = ap.parse_args()
    tool = shlex.split(args.tool)

    files = sorted(p for p in args.root.rglob("*.gir")
                   if "Output" not in p.parts and "corpus" not in p.parts)
    chunks = [c for f in files for c in chunks_of(f, args.root)]
    checked = skipped = 0
    failures: list[str] = []
    for flags in ((), ("--no-locs",)):
        label = " ".join(flags) or "with locs"
        printed, errors = run_split(tool, [c.text for c in chunks], flags)
        good = []
        for c, out, errs in zip(chunks, printed, errors):
            if not errs:
                good.append((c, out))
            elif c.may_fail or any(FAMILY_NOT_LOADED in e for e in errs):
                skipped += 1
            else:
                failures.append(f"{c.where}: does not parse: {errs[0]}")
        reprinted, errors2 = run_split(tool, [out for _, out in good], flags)
        for (c, out), again, errs in zip(good, reprinted, errors2):
            if errs:
                failures.append(f"{c.where} ({label}): printed form does not parse: {errs[0]}")
            elif again != out:
                failures.append(f"{c.where} ({label}): print(parse(print(parse(x)))) "
                                "differs from print(parse(x)):\n" + diff(out, again))
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


if __name__ == "__main__":
    sys.exit(main())
