"""Fails when a core op declared in Ops.def has no test in the given .gir files.

Usage: check_op_coverage.py OPS_DEF GLOB_DIR PATTERN
Every op name from an XACC_OP(...) row must appear as an operation (`name(`) in at
least one file under GLOB_DIR matching PATTERN, so adding an op without a round-trip
or interpreter test fails this check.
"""
import pathlib
import re
import sys


def main() -> int:
    ops_def, directory, pattern = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
    ops = re.findall(r'^XACC_OP\(\w+,\s*"([^"]+)"', pathlib.Path(ops_def).read_text(), re.M)
    if len(ops) < 40:
        print(f"only {len(ops)} ops parsed from {ops_def}; is the table format unchanged?")
        return 1
    files = sorted(directory.glob(pattern))
    text = "\n".join(
        line for f in files for line in f.read_text().splitlines()
        if not line.lstrip().startswith("//"))
    missing = [op for op in ops if not re.search(r"(^|[\s=])" + re.escape(op) + r"\(", text, re.M)]
    for op in missing:
        print(f"no test uses {op} in {directory}/{pattern}")
    if missing:
        return 1
    print(f"coverage: all {len(ops)} ops are used by {len(files)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
