"""Numbers a frame hands to its resume functions (Note [Fragment groups] in
xacc/_src/capture/dynamic.py) and torch.Size arguments.

A resume function receives the frame's live values as arguments: sizes in a
tuple (`shape = x.shape[:-1]`), the stack as a tuple, lists of ints. An int
item of a tuple or list argument is a symbolic scalar like an int argument
itself (Translator::wrap): guarded by value only where the code uses it as a
plain number. Before, every such item was guarded by value, so a resume
function that merely carried `shape` recompiled for every new batch size
after the frame had made the batch dim dynamic.

A torch.Size argument is a constant of the entry: its value is guarded.
Before, only its type and length were, and a graph that read `shape[0]`
returned the first call's value for every other size (a silent wrong
result)."""

from __future__ import annotations

import torch

from harness import check, compare_call
from xacc._src.capture import convert
from xacc.jit import counters, jit

W = torch.randn(4, 4)


def carries_shape(x):
    shape = x.shape[:-1]
    y = torch.relu(x @ W)
    print("break")
    return y + 1, len(shape)


def test_resume_function_carrying_sizes_compiles_once_more():
    # Batch 2: frame and resume function. Batch 3: the frame recompiles with
    # dim 0 dynamic and the resume function follows. Batches 4, 5: nothing.
    c = check(carries_shape, lambda i: (torch.randn((2, 3, 4, 5)[i], 4),), calls=4, breaks=2,
              max_recompiles=1)
    assert c["recompiles"] == 1 and c["dynamic_followups"] == 1, c
    assert c["frames"] == 4, c


def stack_tuple(x):
    n = x.shape[0]
    sizes = [n, 2 * n]
    y = x * 2
    print("break")
    return y.sum(0) + 1, sizes


def test_ints_in_a_list_passed_through_a_break():
    c = check(stack_tuple, lambda i: (torch.randn((2, 3, 4, 5)[i], 4),), calls=4, max_recompiles=1)
    assert c["frames"] <= 4, c


def reads_size(y, shape):
    return y + shape[0]


def test_torch_size_argument_items_follow_the_value():
    # A torch.Size argument's items are trackers like a tuple's (Note [Symbolic
    # shapes keep their type]): `shape[0]` is the call's value, never the first
    # call's (compare_call checks each result against eager).
    jf = jit(reads_size)
    y = torch.zeros(3)
    for n in (2, 3, 4, 3):
        compare_call(reads_size, jf, (y, torch.Size([n, 5])))
    assert counters()["recompiles"] <= 2, counters()


def uses_item(y, pair):
    if pair[1] > 2:  # a plain number: guarded by value
        return y * pair[0]
    return y - pair[0]


def test_tuple_item_used_as_a_number_is_guarded():
    jf = jit(uses_item)
    y = torch.ones(3)
    for p in ((2, 3), (5, 3), (5, 1), (7, 4)):
        compare_call(uses_item, jf, (y, p))
    assert counters()["internal_errors"] == 0, counters()
    assert not any(e.breaks for e in convert.EVENTS), [e.breaks for e in convert.EVENTS]
