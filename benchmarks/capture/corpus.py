"""The capture corpus (tests/python/capture/fn_corpus/) in one run beside
torch.compile: for every function, eager vs xacc.jit (values, types, identity,
printed output, exceptions, mutated inputs: tests/python/capture/harness.py),
xacc's graphs and breaks with their codes, and torch.compile(backend="eager")'s
graphs and breaks (Dynamo runs in a child process started by this run: two
frame hooks in one process are not supported together).

Writes benchmarks/capture/expected/corpus.csv, one row per function, which
tests/python/capture/test_corpus.py reads (torch is pinned, so Dynamo's counts
are a fixed fact), and prints a summary.

    PYTHONPATH=$PWD python3 benchmarks/capture/corpus.py [--only SUBSTR] [--csv PATH]

Counting, the same for both: one call of a fresh function on inputs of seed 0
after a reset; graphs are the graphs compiled, breaks the graph breaks reported
(xacc: counters()["breaks"], codes from its capture events; Dynamo: its
`graph_break` counters). A second call (seed 1) is compared with eager as well.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CAPTURE_TESTS = ROOT / "tests" / "python" / "capture"
EXPECTED = Path(__file__).resolve().parent / "expected" / "corpus.csv"
FIELDS = ["function", "area", "eager_equal", "xacc_graphs", "xacc_breaks", "xacc_break_codes",
          "dynamo_graphs", "dynamo_breaks", "verdict"]

sys.path.insert(0, str(CAPTURE_TESTS))


def load(only: str | None) -> list:
    import fn_corpus as corpus
    return [c for c in corpus.cases() if only is None or only in c.name]


def dynamo_counts(cases: list) -> dict:
    """{name: [graphs, breaks] or None (Dynamo raised an internal error)}, measured here."""
    import torch
    import torch._dynamo
    from torch._dynamo.testing import CompileCounterWithBackend
    from torch._dynamo.utils import counters

    # Dynamo's first compile turns torch.distributions' argument validation off
    # for the whole process (Distribution.set_default_validate_args(False) in
    # its TorchPatcher), so its counts would be of a program that no longer
    # raises eager's ValueError on bad parameters. Measure the program the user
    # wrote: trigger the patch once, then restore eager's setting before each
    # function.
    validate = torch.distributions.Distribution._validate_args
    torch.compile(lambda x: x + 1, backend="eager")(torch.zeros(1))
    out = {}
    for c in cases:
        torch._dynamo.reset()
        torch.distributions.Distribution.set_default_validate_args(validate)
        counters.clear()
        cnt = CompileCounterWithBackend("eager")
        args = c.make_args(0)
        try:
            torch.compile(c.fn, backend=cnt)(*args)
        except Exception as e:  # noqa: BLE001 - the function's own exception is eager behaviour
            if "torch._dynamo" in "".join(traceback.format_exception(e)) and not _raises_in_eager(c):
                out[c.name] = None
                continue
        out[c.name] = [cnt.frame_count, sum(counters["graph_break"].values())]
    return out


def _raises_in_eager(c) -> bool:
    try:
        c.fn(*c.make_args(0))
    except Exception:  # noqa: BLE001
        return True
    return False


def measure_xacc(c) -> dict:
    """One corpus function under xacc: counts after the first call, eager-equal over two."""
    from harness import compare_call

    from xacc._src.capture import convert
    from xacc.jit import counters, jit, reset

    reset()
    jfn = jit(c.fn)
    row = {"eager_equal": True, "detail": ""}
    try:
        compare_call(c.fn, jfn, c.make_args(0))
    except Exception as e:  # noqa: BLE001 - recorded, not fatal to the run
        row["eager_equal"], row["detail"] = False, f"{type(e).__name__}: {e}"[:300]
    k = counters()
    row["graphs"], row["breaks"] = k["graphs"], k["breaks"]
    row["codes"] = sorted({b.code for ev in convert.EVENTS for b in ev.breaks})
    if k["internal_errors"]:
        row["eager_equal"], row["detail"] = False, f"internal_errors={k['internal_errors']}"
    if row["eager_equal"]:
        try:
            compare_call(c.fn, jfn, c.make_args(1))
        except Exception as e:  # noqa: BLE001
            row["eager_equal"], row["detail"] = False, f"second call: {type(e).__name__}: {e}"[:300]
    reset()
    return row


def verdict(xb: int, db: int | None) -> str:
    if db is None:
        return "dynamo_error"
    return "more" if xb > db else "fewer" if xb < db else "equal"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="run only the functions whose name contains this")
    ap.add_argument("--csv", default=str(EXPECTED), help="where to write the CSV")
    ap.add_argument("--dynamo-child", action="store_true", help=argparse.SUPPRESS)
    ns = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    cases = load(ns.only)
    if ns.dynamo_child:
        print(json.dumps(dynamo_counts(cases)))
        return
    cmd = [sys.executable, __file__, "--dynamo-child"] + (["--only", ns.only] if ns.only else [])
    child = subprocess.run(cmd, capture_output=True, text=True)
    if child.returncode != 0:
        sys.exit(f"torch.compile child failed:\n{child.stderr[-4000:]}")
    dyn = json.loads(child.stdout.strip().splitlines()[-1])

    rows = []
    for c in cases:
        x = measure_xacc(c)
        d = dyn.get(c.name)
        rows.append({"function": c.name, "area": c.area, "eager_equal": int(x["eager_equal"]),
                     "xacc_graphs": x["graphs"], "xacc_breaks": x["breaks"],
                     "xacc_break_codes": " ".join(x["codes"]),
                     "dynamo_graphs": "" if d is None else d[0], "dynamo_breaks": "" if d is None else d[1],
                     "verdict": verdict(x["breaks"], None if d is None else d[1]), "_detail": x["detail"]})
    out = Path(ns.csv)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)

    n = len(rows)
    eq = sum(r["eager_equal"] for r in rows)
    by = {v: [r for r in rows if r["verdict"] == v] for v in ("more", "fewer", "equal", "dynamo_error")}
    print(f"corpus: {n} functions, torch {torch.__version__}")
    print(f"  eager-equal under xacc: {eq}/{n}")
    for r in rows:
        if not r["eager_equal"]:
            print(f"    NOT EQUAL {r['function']}: {r['_detail']}")
    print(f"  xacc breaks more than torch.compile: {len(by['more'])}   fewer: {len(by['fewer'])}   "
          f"equal: {len(by['equal'])}   torch.compile failed: {len(by['dynamo_error'])}")
    for r in by["more"]:
        print(f"    MORE {r['function']}: xacc {r['xacc_breaks']} ({r['xacc_break_codes']}) "
              f"vs torch.compile {r['dynamo_breaks']}")
    print(f"  zero breaks: xacc {sum(r['xacc_breaks'] == 0 for r in rows)}, "
          f"torch.compile {sum(r['dynamo_breaks'] == 0 for r in rows)}")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
