"""Issue 25, DDP bucket split (Note [Bucket split] in
csrc/include/xacc/passes/GraphSplit.h): xacc.jit on a DDP module whose buckets
are small (scripts/ddp_split.py: a 4-layer MLP, bucket_cap_mb=0.05, 2 ranks over
gloo) compiles its training graph as 3 pieces, one per bucket, so DDP's comm
hook reduces the later layers' buckets before the first layer's gradient
exists, exactly as in eager autograd (the all-reduce overlaps the rest of the
backward); parameters after 3 steps and 2 no_sync accumulation steps equal
plain DDP's within 1e-5. Real processes, real gloo (dist_proc.py)."""

from __future__ import annotations

import pytest
import torch

from dist_proc import SCRIPTS, run


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("ddp_split")
    out = {}
    for mode in ("plain", "xacc"):
        run([str(SCRIPTS / "ddp_split.py"), mode, str(d / mode)])
        out[mode] = [torch.load(str(d / f"{mode}.rank{r}")) for r in range(2)]
    return out


def test_graph_split_per_bucket(runs):
    for r in runs["xacc"]:
        c = r["counters"]
        assert c["graphs"] == 1 and c["training_fallbacks"] == 0, c
        assert (c["ddp_split_graphs"], c["ddp_split_pieces"]) == (1, 3), c
        # Every piece ran a compiled forward and backward per call (7 calls: 3 steps, 2 x 2 micro-batches).
        assert c["compiled_backward_runs"] == 3 * 7, c


def test_entry_reports_the_captured_graph_without_compiling_it(runs):
    # The entry shows the whole captured graph (4 linears: 4 mm) on the jit's
    # device; its plan is the split, not an executable's plan of a whole graph
    # prepared for the ATen executor only to be reported (it never runs).
    for r in runs["xacc"]:
        (e,) = r["entries"]
        assert e["graph"].count("aten.mm.") + e["graph"].count("aten.addmm.") == 4, e["graph"]
        assert e["device"] == "cpu"
        assert e["plan"] == "split at DDP buckets into 3 pieces, each compiled for cpu", e["plan"]


def test_buckets_reduced_during_backward(runs):
    for plain, xacc in zip(runs["plain"], runs["xacc"]):
        # After DDP rebuilt its buckets (step 1 on), some bucket is reduced while
        # the first layer's gradient is still to be computed.
        assert any(early for step, early in plain["notes"] if step in (1, 2)), plain["notes"]
        assert xacc["notes"] == plain["notes"]


def test_parameters_equal_plain_ddp(runs):
    for plain, xacc in zip(runs["plain"], runs["xacc"]):
        for k, v in plain["params"].items():
            assert (xacc["params"][k] - v).abs().max().item() <= 1e-5, k
