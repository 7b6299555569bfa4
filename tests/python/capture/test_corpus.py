"""The capture corpus (corpus/, issue 18 criterion 4): every function is
eager-equal under xacc.jit (harness.compare_call: values, types, identity,
printed output, exceptions, mutated inputs; two calls) and breaks the graph no
more often than torch.compile(backend="eager") did on it, as recorded in
benchmarks/capture/expected/corpus.csv by benchmarks/capture/corpus.py (torch
is pinned, so Dynamo's count is a fixed fact; the runner re-measures it).

A function whose recorded row says xacc was not eager-equal or broke more than
Dynamo is a strict xfail naming that row: it fails as soon as xacc does better,
so the CSV is regenerated with the fix. A function missing from the CSV fails.
"""

import csv
from pathlib import Path

import pytest
import torch

import fn_corpus as corpus
from harness import compare_call

from xacc.jit import counters, jit

CSV = Path(__file__).resolve().parents[3] / "benchmarks" / "capture" / "expected" / "corpus.csv"
ROWS = {r["function"]: r for r in csv.DictReader(CSV.open())} if CSV.exists() else {}
CASES = corpus.cases()


def _param(c):
    row = ROWS.get(c.name)
    marks = []
    if row is not None and (row["eager_equal"] != "1" or row["verdict"] == "more"):
        why = ("not eager-equal" if row["eager_equal"] != "1" else
               f"xacc broke more than torch.compile ({row['xacc_breaks']} {row['xacc_break_codes']} "
               f"vs {row['dynamo_breaks']})")
        marks.append(pytest.mark.xfail(strict=True, reason=f"recorded in corpus.csv: {why}"))
    return pytest.param(c, id=c.name, marks=marks)


def test_corpus_is_large_and_recorded():
    assert len(CASES) >= 300, len(CASES)
    missing = sorted({c.name for c in CASES} - set(ROWS))
    assert not missing, f"not in {CSV.name} (run benchmarks/capture/corpus.py): {missing[:10]}"


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_corpus_function(case):
    row = ROWS.get(case.name)
    assert row is not None, f"{case.name} is not in {CSV.name}: run benchmarks/capture/corpus.py"
    jfn = jit(case.fn)
    compare_call(case.fn, jfn, case.make_args(0))
    k = counters()
    assert k["internal_errors"] == 0, k
    if row["dynamo_breaks"] != "":
        assert k["breaks"] <= int(row["dynamo_breaks"]), (
            f"xacc breaks {k['breaks']} times, torch {torch.__version__} compile {row['dynamo_breaks']}")
    compare_call(case.fn, jfn, case.make_args(1))
