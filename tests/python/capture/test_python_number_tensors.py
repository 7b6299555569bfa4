"""Tensors made from Python numbers alone (`torch.div(n, 2, rounding_mode=
"trunc")`, `torch.randint(1, 4, ())`) are recorded like every other op: their
tracked value is a meta bound to the node (Recorder._as_meta), and a factory
without a device runs on the meta device at capture time. Before, such an op
ran for real on the CPU during recording: an in-place op then changed a
constant copy (new_zeros made 3 elements where eager makes 4, a silent wrong
value), and torch.randint drew from the user's random stream at capture time.
Found by helper "enc" (session 15); every case runs through the harness
(values, types, identity against eager).

Such a tensor's value depends on no input data: an op on Python numbers alone
(and factories of numbers) is a known value (Note [Known tensor values] in
known.py), so Python reading it (a view size, a slice bound, `F.pad`) does not
break; uninitialized and random tensors never are."""

import torch
import torch.nn.functional as F

from harness import check, compare_call
from xacc.explain import explain
from xacc.jit import counters, jit


def mutated(x):
    n = torch.div(x.size(1), 2, rounding_mode="trunc")
    y = x.view(x.size(0), n, 2)
    n.add_(1)  # an in-place op: no value is known any more
    z = x.new_zeros(n)  # a read back of the mutated tensor: eager's value
    return y, z, n


def test_a_mutated_tensor_still_breaks_with_eager_value():
    # The in-place op acts on the graph's value of `n` (before, on a constant
    # copy of a real CPU tensor: z had 3 elements where eager's has 4).
    check(mutated, lambda i: (torch.randn(2, 6),))


def random_size(x):
    k = torch.randint(1, 4, ())
    return x.new_ones(k), k


def test_a_random_tensor_is_never_known():
    jf = jit(random_size)
    for i in range(4):
        x = torch.randn(2, 3)
        torch.manual_seed(i)
        e = random_size(x)
        torch.manual_seed(i)
        j = jf(x)
        assert e[0].shape == j[0].shape and torch.equal(e[1], j[1])
    assert counters()["breaks"] >= 1


def bumped(x):
    n = torch.div(x.size(1), 2, rounding_mode="trunc")
    n.add_(1)
    return x.new_zeros(n), n


def test_in_place_on_a_tensor_of_python_numbers_is_seen():
    # The tracked value of torch.div(6, 2) is a meta bound to its node, as for
    # every op (before: a real CPU tensor, and add_ acted on a constant copy of
    # it, so new_zeros made 3 elements where eager makes 4: a silent wrong value).
    check(bumped, lambda i: (torch.randn(2, 6),))


# -- known values of ops on Python numbers alone (Note [Known tensor values]) -------------------

def chunked(x):
    # transformers' Longformer/LED `_chunk` and `_sliding_chunks_*`: the chunk
    # count is a torch op on Python ints (sizes), then used as a size.
    w = 2
    chunks = torch.div(x.size(1), w, rounding_mode="trunc") - 1
    v = x.view(x.size(0), torch.div(x.size(1), 2 * w, rounding_mode="trunc"), 2 * w)
    z = x.new_zeros((x.size(0), chunks + 1, w))
    return v * 2, z, chunks


def test_an_op_on_python_numbers_is_known():
    # Before: each read of torch.div(8, 4)'s value (a view size, a new_zeros
    # size) was a GB005 break; its value depends on no
    # input data, so it is known at capture time, eager's int64 tensor kept.
    check(chunked, lambda i: (torch.randn(2 + i, 8),), graphs=2, breaks=0, max_recompiles=1)


def test_an_op_on_a_changing_size_is_exact_at_every_size():
    # The chunk count follows the length: the value read depends on a dynamic
    # size, so the frame compiles static per length (never one value for all).
    jf = jit(chunked)
    for n in (8, 12, 16, 4, 8, 20):
        compare_call(chunked, jf, (torch.randn(2, n),))
    assert counters()["breaks"] == 0, counters()


def factories(x):
    k = torch.arange(3).sum()  # a factory of numbers: known (3)
    p = torch.zeros((), dtype=torch.long) + 2
    return x[:, :k], F.pad(x, (int(p), 0)), max(k, p) is k


def test_factories_of_numbers_are_known():
    check(factories, lambda i: (torch.randn(2, 8),), graphs=1, breaks=0)


def int_argument(x, n):
    m = torch.div(n, 2, rounding_mode="floor")
    return x[:, :m], m


def test_an_int_argument_is_guarded():
    # n is specialized with an equality guard before its value is known: one
    # compile per n, each eager's.
    check(int_argument, lambda i: (torch.randn(2, 8), (4, 4, 7, 9)[i]), calls=4, breaks=0, max_recompiles=2)


def uninitialized(x):
    n = torch.empty((), dtype=torch.long)  # uninitialized memory: no value eager computes
    return int(n) * 0 + x.shape[0]


def uninitialized_like(x):
    n = torch.tensor(2).new_empty(())  # from a known tensor: uninitialized all the same
    return int(n) * 0 + x.shape[0]


def test_an_uninitialized_tensor_is_never_known():
    # Reading one breaks (eager reads whatever the memory holds); before, the
    # new_empty of a known tensor was known: its capture-time garbage became a
    # constant of the graph.
    for fn in (uninitialized, uninitialized_like):
        out = explain(fn)(torch.randn(2, 3))
        assert [b.code for b in out.break_reasons] == ["GB005"], (fn.__name__, out.break_reasons)
