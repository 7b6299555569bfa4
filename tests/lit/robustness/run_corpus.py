"""Runs xacc-opt on every file of a corpus directory and checks that each is rejected
with exit code 1 and a located `file:line:col: error[Ennnn]` diagnostic: no crash
(signal), no hang (10 s), no other exit code, no unlocated message. Prints one line
per failure and a summary.

Inputs go to xacc-opt as the chunks of one --split-input-file run, falling back to
one run per input when that run crashes or hangs (see gir_fuzz.classify_batch).

Usage: run_corpus.py DIR [--tool xacc-opt]
The corpus is a fixed subset of tests/python/gir_fuzz.py's output; refresh it with
`python tests/python/gir_fuzz.py --write-lit-subset tests/lit/robustness/corpus`.
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
import gir_fuzz  # noqa: E402  (tests/python/gir_fuzz.py)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", type=pathlib.Path)
    ap.add_argument("--tool", default="xacc-opt")
    args = ap.parse_args()
    files = sorted(args.dir.glob("*.gir"))
    answers = gir_fuzz.classify_batch(args.tool, files)
    failures = 0
    for path, (kind, detail) in zip(files, answers):
        if kind == "rejected":
            continue
        problem = "exit code 0, expected 1" if kind == "ok" else f"{kind}: {detail[:200]}"
        print(f"FAIL {path.name}: {problem}")
        failures += 1
    print(f"{len(files)} inputs, {len(files) - failures} rejected with a located diagnostic, "
          f"{failures} failures")
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
