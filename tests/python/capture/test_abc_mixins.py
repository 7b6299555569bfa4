"""Classes built on collections.abc (Sequence, Mapping, Set, ...) get their
mixin methods from _collections_abc as plain Python: Sequence.__iter__ is a
generator that reads self[0], self[1], ... until __getitem__ raises
IndexError, __contains__ iterates, index/count loop over self[i]. The
translator inlines them like user code, and an exception raised and caught
inside a lazily run generator's own frame (the IndexError that ends
Sequence.__iter__) jumps to its handler as in any other frame (Note [Traced
exceptions]). transformers' `config.per_layer_config` (a Sequence view over a
config, iterated by cache_utils.get_layer_types_and_kwargs) is such a class.
Every case is compared with eager (harness.check: values, types, identity,
printed output, exceptions) over three calls.
"""

import collections.abc

import torch
from harness import check

from xacc.jit import reset


class Scales(collections.abc.Sequence):
    """A read-only view: __len__ and __getitem__ only, the rest from Sequence."""

    def __init__(self, n, step):
        self._n = n
        self._step = step

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if i < 0 or i >= len(self):
            raise IndexError("list index out of range")
        return 1.0 + self._step * i


def iterate_built_inside(x):
    total = x
    for s in Scales(3, 0.5):
        total = total * s
    return total


def mixin_queries(x):
    seq = Scales(4, 0.25)
    y = x * seq.index(1.5) + seq.count(1.25)
    if 1.75 in seq and 9.0 not in seq:
        y = y + 1
    for s in reversed(seq):
        y = y - s
    return y, list(seq), seq[1:3]


def early_break(x):
    # The generator is left suspended after the loop breaks: eager reads only
    # self[0] and self[1] (a later self[i] never runs).
    for i, s in enumerate(Scales(5, 1.0)):
        x = x + s
        if i == 1:
            break
    return x


class Log(collections.abc.Sequence):
    def __init__(self, log):
        self._log = log

    def __len__(self):
        return 2

    def __getitem__(self, i):
        self._log.append(i)
        if i >= 2:
            raise IndexError(i)
        return i


def interleaved_side_effects(x, log):
    for v in Log(log):
        log.append("body")
        x = x + v
    return x


def r(i):
    return (torch.randn(4, 4),)


def test_sequence_mixins_inline_without_a_break():
    for fn in (iterate_built_inside, mixin_queries, early_break):
        reset()
        check(fn, r, graphs=1, breaks=0)


def test_getitem_side_effects_interleave_with_the_loop_body_as_in_eager():
    reset()
    # compare_call checks the list the call appended to: [0, 'body', 1, 'body', 2].
    check(interleaved_side_effects, lambda i: (torch.randn(3), []), graphs=1, breaks=0)
