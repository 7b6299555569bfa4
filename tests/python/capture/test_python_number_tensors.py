"""Tensors made from Python numbers alone (`torch.div(n, 2, rounding_mode=
"trunc")`, `torch.randint(1, 4, ())`) are recorded like every other op: their
tracked value is a meta bound to the node (Recorder._as_meta), and a factory
without a device runs on the meta device at capture time. Before, such an op
ran for real on the CPU during recording: an in-place op then changed a
constant copy (new_zeros made 3 elements where eager makes 4, a silent wrong
value), and torch.randint drew from the user's random stream at capture time.
Found by helper "enc" (session 15); every case runs through the harness
(values, types, identity against eager)."""

import torch

from harness import check
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
