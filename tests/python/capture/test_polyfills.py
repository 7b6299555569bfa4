"""Builtins and standard-library helpers written in C run through their Python
references (xacc/_src/capture/polyfills.py) and stay in the graph: each case
was a graph break (GB002/GB011) before the table existed, and each is compared
with eager on values, structure and the capture counters."""

import functools
import itertools
import math

import pytest
import torch

from harness import check, r

from xacc._src.capture import polyfills


def test_itertools_chain_product_and_accumulate():
    def f(x):
        parts = [x, x + 1]
        flat = list(itertools.chain(parts, (x * 2,), [x * 3]))
        grid = [a * b for a, b in itertools.product(range(2), range(3))]
        sums = list(itertools.accumulate(flat))
        return flat, grid, sums[-1]

    check(f, r(3), graphs=1, breaks=0)


def test_itertools_pairwise_islice_zip_longest_starmap():
    def f(x):
        xs = [x, x * 2, x * 3, x * 4]
        diffs = [b - a for a, b in itertools.pairwise(xs)]
        every_other = list(itertools.islice(xs, 0, None, 2))
        padded = list(itertools.zip_longest(xs, [1, 2], fillvalue=0))
        prods = list(itertools.starmap(torch.mul, zip(xs, xs)))
        return diffs, every_other, [a * b for a, b in padded], prods

    check(f, r(2), graphs=1, breaks=0)


def test_itertools_combinations_permutations_repeat_chain_from_iterable():
    def f(x):
        xs = [x, x + 1, x + 2]
        pairs = [a + b for a, b in itertools.combinations(xs, 2)]
        orders = [a - b for a, b in itertools.permutations(xs[:2])]
        reps = list(itertools.repeat(x, 3))
        nested = list(itertools.chain.from_iterable([[x], [x * 5, x * 6]]))
        return pairs, orders, reps, nested

    check(f, r(2), graphs=1, breaks=0)


def test_functools_reduce_and_dict_fromkeys():
    def f(x):
        parts = [x, x * 2, x * 3]
        total = functools.reduce(lambda a, b: a * 0.5 + b, parts)
        seeded = functools.reduce(torch.add, parts, x)
        d = dict.fromkeys(["a", "b"], x)
        return total, seeded, d["a"] + d["b"], list(d)

    check(f, r(3), graphs=1, breaks=0)


def test_sorted_min_max_with_key_over_tensors():
    def f(x, y):
        ts = [x, y, x[:2]]
        by_len = sorted(ts, key=lambda t: t.shape[0])
        rev = sorted(ts, key=lambda t: t.shape[0], reverse=True)
        shortest = min(ts, key=lambda t: t.numel())
        longest = max(ts, key=len)
        return by_len, rev, shortest, longest

    check(f, lambda i: (torch.randn(4), torch.randn(3)), graphs=1, breaks=0)


def math_prod_user(x, strides):
    size = [s * 2 for s in strides]  # a list built in the frame: not a constant
    flat = x.reshape(-1, math.prod(x.shape[1:]))  # sizes: symbolic once the batch is dynamic
    return flat * math.prod(size), math.prod(strides, start=0.5), math.prod([x[0, 0, 0], 2.0])


def test_math_prod_of_lists_sizes_and_tensors():
    check(math_prod_user, lambda i: (torch.randn(2, 3, 4), [2, 3]), graphs=1, breaks=0)


def test_math_prod_of_dynamic_sizes_keeps_them_dynamic():
    # Batch 2, 3, 4: one recompile (the batch dim made dynamic), no break and
    # no specialisation of math.prod(x.shape[1:]) to a number.
    check(math_prod_user, lambda i: (torch.randn(2 + i, 3, 4), [2, 3]), graphs=2, breaks=0, max_recompiles=1)


def test_lazy_reference_keeps_eager_order_of_side_effects():
    # chain's reference is a generator: `log` grows between items as in eager.
    def f(x):
        log = []
        a = [x, x + 1]
        out = []
        for t in itertools.chain(a, [x * 2]):
            log.append(len(out))
            out.append(t * len(log))
        return out, log

    check(f, r(2), graphs=1, breaks=0)


def test_data_dependent_key_is_a_break_not_a_wrong_answer():
    def f(x, y):
        return max([x, y], key=lambda t: t.sum())

    check(f, lambda i: (torch.randn(3), torch.randn(3)), min_graphs=0)


def test_references_agree_with_their_originals_in_plain_python():
    # The references themselves, run by CPython against the C originals on
    # random inputs (values, order, stability, ties, empty inputs).
    import random
    rng = random.Random(0)
    P = polyfills
    for _ in range(200):
        xs = [rng.randint(0, 5) for _ in range(rng.randint(0, 9))]
        key = lambda v: -v % 3
        for rev in (False, True):
            assert P.sorted_(xs, key=key, reverse=rev) == sorted(xs, key=key, reverse=rev)
        if xs:
            assert P.min_(xs, key=key) == min(xs, key=key) and P.max_(*xs, 9) == max(*xs, 9)
            assert P.reduce(lambda a, b: a * 2 + b, xs) == functools.reduce(lambda a, b: a * 2 + b, xs)
        assert P.max_(xs, default=-1) == max(xs, default=-1)
        assert list(P.accumulate(xs, initial=1)) == list(itertools.accumulate(xs, initial=1))
        assert list(P.pairwise(xs)) == list(itertools.pairwise(xs))
        assert list(P.zip_longest(xs, xs[:3], fillvalue=9)) == list(itertools.zip_longest(xs, xs[:3], fillvalue=9))
        for a in [(3,), (1, 5), (0, 7, 2), (2, None), (None,)]:
            assert list(P.islice(xs, *a)) == list(itertools.islice(xs, *a)), a
        n = rng.randint(0, 4)
        assert list(P.combinations(xs[:6], n)) == list(itertools.combinations(xs[:6], n))
        assert list(P.permutations(xs[:5], n)) == list(itertools.permutations(xs[:5], n))
        assert list(P.product(xs[:3], xs[:2], repeat=2)) == list(itertools.product(xs[:3], xs[:2], repeat=2))
        assert list(P.takewhile(lambda v: v < 3, xs)) == list(itertools.takewhile(lambda v: v < 3, xs))
        assert list(P.dropwhile(lambda v: v < 3, xs)) == list(itertools.dropwhile(lambda v: v < 3, xs))
        assert list(P.filterfalse(None, xs)) == list(itertools.filterfalse(None, xs))
        assert list(P.compress(xs, xs[::-1])) == list(itertools.compress(xs, xs[::-1]))
        assert P.reduce(lambda a, b: a - b, xs, 7) == functools.reduce(lambda a, b: a - b, xs, 7)
        assert list(P.dict_fromkeys(xs, 1).items()) == list(dict.fromkeys(xs, 1).items())
        fs = [v / 3 for v in xs] + [2**62, 2**40]
        for start in (1, 0.5, 3):
            for seq in (xs, fs, xs + [2**70]):
                got, want = P.prod(seq, start=start), math.prod(seq, start=start)
                assert got == want and type(got) is type(want), (seq, start)
    for bad in (lambda: P.min_([]), lambda: P.reduce(max, [])):
        with pytest.raises((ValueError, TypeError)):
            bad()
