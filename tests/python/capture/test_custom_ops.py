"""Operators outside the `aten` namespace (xacc/_src/capture/decompositions.py):
traced through an exact decomposition into ATen ops, or a graph break; never
recorded under an ATen operator's name."""

import pytest
import torch

from harness import check, compare_call
from xacc._C import capture as xacc_C
from xacc._src.capture import convert
from xacc.jit import counters, jit


@torch.library.custom_op("xacc_test::relu", mutates_args=())
def not_relu(x: torch.Tensor) -> torch.Tensor:
    return x + 1  # shares its name with aten::relu, not its meaning


@not_relu.register_fake
def _(x):
    return torch.empty_like(x)


def calls_not_relu(x):
    return torch.ops.xacc_test.relu(x * 2) - 1


def test_custom_op_named_like_an_aten_op_is_not_recorded_as_it():
    c = check(calls_not_relu, lambda i: (torch.randn(3, 4),), calls=2)
    assert c["breaks"] >= 1, c
    codes = [b.code for e in convert.EVENTS for b in e.breaks]
    assert "GB006" in codes, codes


moe = pytest.importorskip("transformers.integrations.moe")


def grouped(x, w, offs):
    return torch.ops.transformers.grouped_mm_fallback(x, w, offs=offs) * 2


def offsets(counts):
    return torch.cumsum(torch.tensor(counts), 0, dtype=torch.int32)


@pytest.mark.parametrize("counts", [[3, 0, 5, 2], [0, 0, 10, 0], [1, 2, 3, 1]])
def test_grouped_mm_fallback_is_one_graph(counts):
    # rows beyond offs[-1] stay zero ([1, 2, 3, 1]: 7 of 10 rows)
    w = torch.randn(4, 6, 5)
    c = check(grouped, lambda i: (torch.randn(10, 6), w, offsets(counts)), calls=2, graphs=1, breaks=0)
    assert c["internal_errors"] == 0


def test_grouped_mm_fallback_unsorted_and_negative_offsets():
    # The fallback slices input[start:end] with Python semantics: offsets that go
    # back (an empty slice) or are negative (counted from the end) are kept exactly.
    w = torch.randn(4, 6, 5)
    jf = jit(grouped)
    for offs in ([4, 2, 8, 9], [3, -2, 10, 10], [-8, -3, 5, 2]):
        compare_call(grouped, jf, (torch.randn(10, 6), w, torch.tensor(offs, dtype=torch.int64)))
    assert counters()["breaks"] == 0, counters()


@pytest.mark.parametrize("device", ["cpu", "xpu0"])
def test_grouped_mm_fallback_dynamic_rows(device):
    # The number of routed rows follows the batch (rows = batch * top_k): one
    # recompile, then a dynamic graph (arange's end is the symbolic size).
    if not xacc_C.device_available(device):
        pytest.skip(f"no {device} target")
    w = torch.randn(4, 6, 5)

    def make(i):
        n = 4 * (i + 2)
        return (torch.randn(n, 6), w, offsets([n // 4, n // 2, 0, n // 4]))

    c = check(grouped, make, calls=4, max_recompiles=1, breaks=0, device=device)
    assert c["recompiles"] == 1, c
