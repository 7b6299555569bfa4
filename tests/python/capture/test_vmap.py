"""torch.vmap over a function the translator traces (Note [Batched metas] in
xacc/_src/capture/polyfills_vmap.py): the batching rules run at capture time on
BatchedTensor metas and the physical ATen ops are recorded, so the vmapped call
stays in the graph. Before the reference it was a GB018 break (torch.vmap given
a traced function). Every case runs through the harness (values, dtypes,
shapes, identity) against eager."""

import torch

from harness import check
from xacc._src.capture import convert
from xacc.jit import jit


def _codes():
    return [b.code for ev in convert.EVENTS for b in ev.breaks]


def _depth():
    return torch._C._functorch.get_dynamic_layer_stack_depth()


def simple(x, y):
    return torch.vmap(lambda a, b: a * b + a.sum())(x, y)


def test_vmap_of_a_lambda_is_captured():
    check(simple, lambda i: (torch.randn(4, 3), torch.randn(4, 3)), graphs=1, breaks=0)


def with_dims(x, w):
    def f(row, weight):
        return row @ weight, row.amax(0, keepdim=True)
    return torch.vmap(f, in_dims=(1, None), out_dims=1)(x, w)


def test_vmap_in_dims_none_out_dims_and_tuple_results():
    check(with_dims, lambda i: (torch.randn(3, 5), torch.randn(3, 2)), graphs=1, breaks=0)


def nested_mask(pad, q_len):
    # The shape of transformers' sdpa_mask with use_vmap: four nested vmaps
    # over a mask function that closes over a graph tensor and indexes it
    # with 0-d index tensors (written as the aten.index the mode makes of it).
    offset = pad.sum()

    def causal(b, h, q, kv):
        return kv <= q

    def padded(b, h, q, kv):
        return torch.ops.aten.index(pad, [b, kv])

    def both(b, h, q, kv):
        return causal(b, h, q, kv) & padded(b, h, q, kv) & (kv < q + offset)

    fn = both
    for dims in ((None, None, None, 0), (None, None, 0, None), (None, 0, None, None), (0, None, None, None)):
        fn = torch.vmap(fn, in_dims=dims, out_dims=0)
    b = torch.arange(pad.shape[0])
    h = torch.arange(1)
    q = torch.arange(q_len)
    kv = torch.arange(pad.shape[1])
    return fn(b, h, q, kv)


def test_nested_vmaps_over_a_mask_function():
    make = lambda i: (torch.rand(2 + i % 2, 6) > 0.3, 6)  # noqa: E731
    c = check(nested_mask, make, max_recompiles=1)
    assert c["breaks"] == 0 and "GB018" not in _codes(), (c, _codes())
    assert _depth() == 0


def break_inside(x):
    def f(row):
        print("inside")  # a break inside the vmapped function
        return row * 2
    y = x + 1
    return torch.vmap(f)(y) - 1


def test_break_inside_vmap_closes_its_level():
    check(break_inside, lambda i: (torch.randn(3, 2),), max_recompiles=1)
    assert _depth() == 0
    # Plain code after it is still captured and correct.
    check(simple, lambda i: (torch.randn(2, 5), torch.randn(2, 5)))


def different_sizes(x, y):
    return torch.vmap(lambda a, b: a + b)(x, y)


def test_vmap_error_is_eagers():
    jfn = jit(different_sizes)
    for args in ((torch.randn(3, 2), torch.randn(4, 2)),):
        try:
            different_sizes(*args)
        except ValueError as e:
            want = str(e)
        else:  # pragma: no cover
            raise AssertionError("eager accepted it")
        try:
            jfn(*args)
        except ValueError as e:
            assert str(e) == want
        else:
            raise AssertionError("the jit accepted it")
    assert _depth() == 0
