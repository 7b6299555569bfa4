"""A transformers ModelOutput that enters the frame from outside (an argument,
or a local of the resume function after a graph break: the model's `outputs`
indexed `outputs[0]` after an inlined call broke) is the Dict tracker a
ModelOutput built in the frame is (Note [Model outputs as inputs] in
TranslateDataclass.cpp): `o[0]`, `o.to_tuple()`, `o.keys()`, attributes and
keys stay in the graph. Before, `to_tuple`'s `self.keys()` on such an object
was a GB002 break. Its type, keys and the agreement of each field's attribute
with its item are guarded; an object where they disagree stays a plain object
(eager-equal, as before); a return hands back the object itself."""

from dataclasses import dataclass

import pytest
import torch

from harness import check, compare_call
from xacc.jit import counters, jit

generic = pytest.importorskip("transformers.utils.generic")


@dataclass
class _Out(generic.ModelOutput):
    last: torch.Tensor | None = None
    other: torch.Tensor | None = None
    hidden: tuple | None = None


def reads(o):
    return (o[0] * 2, o.to_tuple(), o.last is o["last"], o.other, o.hidden, list(o.keys()), len(o),
            [k for k, _ in o.items()], o)


def _made(i):
    return (_Out(last=torch.randn(3), hidden=(torch.randn(2), torch.randn(2))),)


def test_an_argument_is_read_in_the_graph():
    # Before: GB002 (Out.keys in to_tuple), 2 breaks over the first call.
    check(reads, _made, graphs=1, breaks=0)


def test_keys_and_fields_are_guarded():
    jf = jit(reads)
    compare_call(reads, jf, _made(0))
    compare_call(reads, jf, (_Out(last=torch.randn(3), other=torch.randn(1)),))  # other keys: compiled again
    assert counters()["recompiles"] == 1 and counters()["breaks"] == 0, counters()
    compare_call(reads, jf, _made(1))  # the first entry again
    assert counters()["recompiles"] == 1, counters()


def _none_last(i):
    torch.manual_seed(i)
    o = _made(i)[0]
    o.last = None  # sets the attribute only: the item keeps the tensor
    return o


def test_an_attribute_that_left_its_item_is_not_modelled():
    # The tracker would read `o.last` from the item: not modelled, eager's
    # values (objects made twice: the harness's clone would rebuild them).
    jf = jit(reads)
    for i in (0, 1, 0):
        e, j = reads(_none_last(i)), jf(_none_last(i))
        assert e[2] is j[2] is False and e[0].equal(j[0]) and e[5] == j[5] and j[8].last is None
    jf2 = jit(reads)
    compare_call(reads, jf2, _made(0))
    j = jf2(_none_last(1))  # the first entry's guard on the attribute fails
    assert j[2] is False and j[8].last is None and torch.equal(j[0], reads(_none_last(1))[0])


def after_a_break(x):
    o = _Out(last=x + 1, other=x * 2)
    print("step")  # a graph break: the resume function gets `o` as an input
    return o[0] + o.other, o.to_tuple()


def test_a_model_output_across_a_break_is_read_in_the_graph():
    # Before: the resume function's o[0] broke again in to_tuple (2 breaks).
    c = check(after_a_break, lambda i: (torch.randn(4),))
    assert c["breaks"] == 1, c


def written(o):
    o["last"] = o.last * 2  # a write to the caller's object: a break, eager's effect
    return o.last


def test_a_write_to_it_is_a_break_with_eager_effect():
    check(written, _made)


def test_its_items_take_part_in_dynamic_shapes():
    # The items' sources (`dict.__getitem__(L['o'], 'last')`) are rooted at an
    # argument: a new batch size makes their dims dynamic like an argument's,
    # once (before: the resume function compiled again for every batch size).
    jf = jit(after_a_break)
    for b in (2, 3, 4, 5):
        compare_call(after_a_break, jf, (torch.randn(b, 4),))
    c = counters()
    assert c["recompiles"] + c["dynamic_followups"] <= 2, c
