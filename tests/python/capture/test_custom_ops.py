"""Operators outside the `aten` namespace (a library's custom ops, registered
with torch.library): one node `aten.<ns>.<name>.<overload>` each, run through
the dispatcher by its qualified name (Note [Custom operators as nodes] in
AtenOps.cpp); a graph break when its schema writes or aliases an argument or
its meta (fake) kernel is missing or reads data. Never recorded under an ATen
operator's name."""

import pytest
import torch

from harness import check, compare_call
from xacc._C import capture as xacc_C
from xacc._src.capture import convert
from xacc.jit import counters, jit

DEVICES = ["cpu", pytest.param("xpu0", marks=pytest.mark.skipif(
    not xacc_C.device_available("xpu0"), reason="no MLIR backend"))]


@torch.library.custom_op("xacc_test::relu", mutates_args=())
def not_relu(x: torch.Tensor) -> torch.Tensor:
    return x + 1  # shares its name with aten::relu, not its meaning


@not_relu.register_fake
def _(x):
    return torch.empty_like(x)


def calls_not_relu(x):
    return torch.ops.xacc_test.relu(x * 2) - 1


def op_counts():
    counts = {}
    for e in convert.EVENTS:
        for k, v in e.op_counts.items():
            counts[k] = counts.get(k, 0) + v
    return counts


@pytest.mark.parametrize("device", DEVICES)
def test_custom_op_is_one_node_under_its_own_name(device):
    # aten.xacc_test.relu.default, never aten.relu (x + 1 is not relu)
    c = check(calls_not_relu, lambda i: (torch.randn(3, 4),), calls=2, graphs=1, breaks=0, device=device)
    assert c["internal_errors"] == 0, c
    ops = op_counts()
    assert ops.get("aten.xacc_test.relu.default") == 1 and "aten.relu.default" not in ops, ops


CALLS = []


@torch.library.custom_op("xacc_test::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor, k: float) -> torch.Tensor:
    CALLS.append(k)  # a side effect the schema does not declare
    return x * k + y


@scale_add.register_fake
def _(x, y, k):
    return torch.empty_like(x)


def _scale_add_setup(ctx, inputs, output):
    ctx.k = inputs[2]


scale_add.register_autograd(lambda ctx, g: (g * ctx.k, g, None), setup_context=_scale_add_setup)


def uses_scale_add(x, y):
    return torch.ops.xacc_test.scale_add(x.sin(), y, 3.0).cos()


@pytest.mark.parametrize("device", DEVICES)
def test_custom_op_with_autograd_matches_eager_gradients(device):
    # Under grad the node runs through the dispatcher with the op's autograd
    # kernel, as eager does: same values and gradients.
    jf = jit(uses_scale_add, device=device)
    for i in range(3):
        x, y = torch.randn(4, 5, requires_grad=True), torch.randn(4, 5, requires_grad=True)
        want = uses_scale_add(x, y)
        gx, gy = torch.autograd.grad(want.sum(), (x, y))
        got = jf(x, y)
        assert got.requires_grad
        jx, jy = torch.autograd.grad(got.sum(), (x, y))
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(jx, gx)
        torch.testing.assert_close(jy, gy)
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1 and c["internal_errors"] == 0, c
    assert op_counts().get("aten.xacc_test.scale_add.default") == 1, op_counts()


@torch.library.custom_op("xacc_test::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


twice.register_fake(lambda x: torch.empty_like(x))


def backward_of_op_without_autograd(x):
    return torch.ops.xacc_test.twice(x).sum()


def test_custom_op_without_autograd_kernel_fails_backward_as_in_eager():
    jf = jit(backward_of_op_without_autograd)
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError) as eager:
        backward_of_op_without_autograd(x).backward()
    with pytest.raises(RuntimeError) as jitted:
        jf(x).backward()
    assert str(jitted.value) == str(eager.value)
    assert "no autograd formula" in str(eager.value)


def unused_result(x):
    torch.ops.xacc_test.scale_add(x, x, 2.0)  # result unused: still runs, as in eager
    torch.ops.xacc_test.scale_add(x, x, 2.0)  # the same call again: not merged
    return x + 1


@pytest.mark.parametrize("device", DEVICES)
def test_custom_op_is_never_dropped_or_merged(device):
    jf = jit(unused_result, device=device)
    for _ in range(3):
        CALLS.clear()
        compare_call(unused_result, jf, (torch.randn(4),))
    CALLS.clear()
    jf(torch.randn(4))
    assert CALLS == [2.0, 2.0], CALLS
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1, c


@torch.library.custom_op("xacc_test::no_fake", mutates_args=())
def no_fake(x: torch.Tensor) -> torch.Tensor:
    return x - 1


@torch.library.custom_op("xacc_test::positives", mutates_args=())
def positives(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].clone()


@positives.register_fake
def _(x):
    return x.new_empty(torch.library.get_ctx().new_dynamic_size())


@torch.library.custom_op("xacc_test::add_into", mutates_args=("out",))
def add_into(x: torch.Tensor, out: torch.Tensor) -> None:
    out.add_(x)


@add_into.register_fake
def _(x, out):
    return None


def calls_no_fake(x):
    return torch.ops.xacc_test.no_fake(x.cos()) * 2


def calls_positives(x):
    return torch.ops.xacc_test.positives(x.cos() - 0.5) * 2


def calls_add_into(x, y):
    z = y * 2
    torch.ops.xacc_test.add_into(x, z)
    return z + 1


@pytest.mark.parametrize("fn, code, nargs", [(calls_no_fake, "GB006", 1), (calls_positives, "GB005", 1),
                                             (calls_add_into, "GB006", 2)])
def test_custom_op_without_a_usable_meta_kernel_or_with_writes_breaks(fn, code, nargs):
    # No fake kernel, one that needs data, or a schema that writes an argument:
    # the call runs in Python, eager-equal.
    check(fn, lambda i: tuple(torch.randn(6) for _ in range(nargs)), calls=2, min_graphs=1, max_recompiles=2)
    codes = [b.code for e in convert.EVENTS for b in e.breaks]
    assert code in codes, codes


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
