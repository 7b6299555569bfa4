"""A list inside a tuple index (`x[..., [-2], :]`, falcon's `_split_heads`):
torch's indexing makes every such list an index tensor inside the dispatcher,
where it would have no graph value (a GB018 break before). The translator
makes the tensor itself (lists of ints only: int64 for certain), for reads and
for stores; other lists (bools: a mask; nested) go to torch as they were."""

from __future__ import annotations

import torch
from harness import check


def _read(x):
    return x[..., :-2, :], x[..., [-2], :], x[:, [0, -1]], x[1, [2, 0], 1:]


def _store(x):
    y = x.clone()
    y[..., [1], :] = 0.5
    y[0, [2, 0]] = y[1, [0, 2]] * 2
    return y


def test_int_lists_inside_a_tuple_index_read():
    c = check(_read, lambda i: (torch.randn(2, 3, 6, 4),), calls=2)
    assert c["breaks"] == 0 and c["graphs"] == 1, c


def test_int_lists_inside_a_tuple_index_store():
    c = check(_store, lambda i: (torch.randn(2, 3, 6, 4),), calls=2)
    assert c["breaks"] == 0 and c["graphs"] == 1, c


def test_bool_list_inside_a_tuple_index_stays_exact():
    # a list of bools is a mask (its result size depends on its values): not made
    # an int64 tensor; whatever the translator does, the values are eager's
    check(lambda x: x[:, [True, False, True]] * 2, lambda i: (torch.randn(2, 3),), calls=2)
