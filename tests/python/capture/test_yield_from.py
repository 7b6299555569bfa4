"""`yield from` in an inlined generator (Note [Yield from] in
TranslateOpsFlow.cpp): the sub-iterator (a lazily run generator, or any
iterable the translator models) is stepped by the SEND loop, each item handed
out of the outer generator in eager's order, and what the sub-generator
returns is the value of the `yield from` expression. One graph, no break."""

import torch

from fn_corpus.closures import generator_yield_from
from harness import check, r


def test_yield_from_a_generator_then_a_yield():
    check(generator_yield_from, r(4, 4), graphs=1, breaks=0)


def test_yield_from_gives_the_sub_generators_return_value():
    def f(x):
        def inner(t):
            yield t * 2
            return t.sum()

        def outer():
            got = yield from inner(x)
            yield got + 1
        a, b = outer()
        return a, b

    check(f, r(3), graphs=1, breaks=0)


def test_yield_from_a_list_and_a_range():
    def f(x):
        def gen(ts):
            yield from ts
            yield from range(2)
        out = x
        for v in gen([x, x * 3]):
            out = out + v
        return out

    check(f, r(5), graphs=1, breaks=0)


def test_yield_from_interleaves_side_effects_as_in_eager():
    def f(x):
        log = []

        def inner():
            log.append("inner start")
            yield x
            log.append("inner end")

        def outer():
            log.append("outer start")
            yield from inner()
            log.append("outer end")
            yield x * 2
        it = outer()
        first = next(it)
        log.append("consumer")
        second = next(it)
        return first + second, log

    check(f, r(2, 2), graphs=1, breaks=0)


def test_nested_yield_from_stopped_early():
    def f(x):
        def leaf():
            i = 0
            while True:
                yield x * i
                i += 1

        def mid():
            yield from leaf()

        total = torch.zeros_like(x)
        for k, v in enumerate(mid()):
            if k == 3:
                break
            total = total + v
        return total

    check(f, r(3), graphs=1, breaks=0)
