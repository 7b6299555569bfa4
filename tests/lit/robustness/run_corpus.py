"""Runs xacc-opt on every file of a corpus directory and checks that each is rejected
with exit code 1 and a located `file:line:col: error[Ennnn]` diagnostic: no crash
(signal), no hang (10 s), no other exit code, no unlocated message. Prints one line
per failure and a summary.

Usage: run_corpus.py DIR [--tool xacc-opt]
The corpus is a fixed subset of tests/python/gir_fuzz.py's output; refresh it with
`python tests/python/gir_fuzz.py --write-lit-subset tests/lit/robustness/corpus`.
"""
import argparse
import pathlib
import re
import subprocess
import sys

LOCATED = re.compile(r"^[^:\n]+:\d+:\d+: error\[E\d{4}\]", re.M)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--tool", default="xacc-opt")
    args = ap.parse_args()
    files = sorted(args.dir.glob("*.gir"))
    failures = 0
    for path in files:
        try:
            r = subprocess.run([args.tool, str(path)], capture_output=True, timeout=10)
        except subprocess.TimeoutExpired:
            print(f"FAIL {path.name}: hang (no answer within 10 s)")
            failures += 1
            continue
        err = r.stderr.decode("utf-8", errors="replace")
        if r.returncode < 0:
            problem = f"crash (signal {-r.returncode})"
        elif r.returncode != 1:
            problem = f"exit code {r.returncode}, expected 1"
        elif not LOCATED.search(err):
            problem = "no located diagnostic: " + err[:200]
        else:
            continue
        print(f"FAIL {path.name}: {problem}")
        failures += 1
    print(f"{len(files)} inputs, {len(files) - failures} rejected with a located diagnostic, "
          f"{failures} failures")
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
