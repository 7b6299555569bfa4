"""Issue 25, criterion 3: collectives called inside a captured function are graph
nodes (Note [Collectives as nodes], AtenOps.cpp; polyfills_dist.py). On 2 ranks
over gloo, `dist.all_reduce` on an activation (in place) and the functional
`_functional_collectives.all_reduce` compile under fullgraph=True to one graph
each (a break would raise) that the executor runs through the process group,
eager-equal on every rank; `all_reduce(async_op=True)` (a Work object) breaks
cleanly with GB026 and stays eager-equal."""

from __future__ import annotations

import re

import pytest

from dist_proc import SCRIPTS, run


def _has_xpu() -> bool:
    from xacc._C import capture
    return capture.device_available("xpu0")


@pytest.mark.parametrize("device", ["cpu", "xpu0"])
def test_all_reduce_inside_a_graph(device):
    if device != "cpu" and not _has_xpu():
        pytest.skip("built without the MLIR backend")
    p = run([str(SCRIPTS / "allreduce.py"), device])
    lines = re.findall(r"^rank (\d): (\w+) diff (\S+) graphs (\d+) breaks (\S+)$", p.stdout, re.M)
    assert len(lines) == 6, p.stdout + p.stderr[-3000:]
    for rank, fn, diff, graphs, breaks in lines:
        assert float(diff) <= 1e-5, (rank, fn, diff)
        if fn == "async_wait":
            assert breaks == "GB026" and int(graphs) >= 1, (rank, fn, graphs, breaks)
        else:
            assert int(graphs) == 1, (rank, fn, graphs)
