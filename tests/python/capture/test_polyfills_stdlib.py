"""functools, operator's callable classes and itertools.groupby/tee run through
their Python references (xacc/_src/capture/polyfills_stdlib.py), and a tensor
indexed by a list of Python ints stays in the graph. Each case was a graph
break before (GB002 on the call, GB018 on the list index); each is compared
with eager (values, types, identity, mutated inputs) and its counters. The
callables the references make must never be seen as another type: returning
one, or reading its attributes, breaks and Python answers."""

import functools
import itertools
import operator

import torch

from fn_corpus.stdlib_iter import wraps_decorator
from harness import check, r


def test_partial_made_inside_is_called_in_the_graph():
    def f(x):
        sm = functools.partial(torch.softmax, dim=-1)
        add = functools.partial(torch.add, other=3)
        scale = functools.partial(lambda t, k, b=0: t * k + b, k=0.5)
        nested = functools.partial(functools.partial(torch.sub, x), alpha=2)
        return sm(x), add(x), add(x, other=1), scale(x, b=1), scale(x, k=2), nested(x * 3)

    check(f, r(4, 5), graphs=1, breaks=0)


def test_partial_returned_or_inspected_is_the_real_partial():
    # The reference's closure is never rebuilt nor asked for its attributes:
    # the frame breaks and Python makes the real partial object.
    def returned(x):
        return functools.partial(torch.add, x), x + 1

    def inspected(x):
        p = functools.partial(torch.mul, other=2)
        return x * 2, p.keywords

    for fn in (returned, inspected):
        check(fn, r(3), calls=2)  # compares the result's type: functools.partial


def test_wraps_and_lru_cache_made_inside():
    def f(x):
        log = []

        @functools.lru_cache(maxsize=None)
        def scale(n):
            log.append(n)  # runs once per distinct argument
            return n * 2

        @functools.lru_cache(maxsize=1)
        def shift(n):
            log.append(-n)
            return n + 1

        @functools.cache
        def square(n):
            log.append(n * n)
            return n * n

        a = scale(3) + scale(3) + scale(4)
        b = shift(1) + shift(2) + shift(1)  # maxsize 1: the second shift(1) runs again
        return wraps_decorator(x) * a + b + square(2) + square(2), log  # x + 2 by a functools.wraps decorator

    check(f, r(3), graphs=1, breaks=0)


def test_update_wrapper_of_an_outside_function_is_left_to_python():
    # Eager sets __wrapped__, __name__ ... on a function the caller holds: that
    # must happen, so the reference breaks instead of skipping it.
    def target(t):
        return t

    def source(t):
        """source's doc"""
        return t

    def f(x):
        functools.update_wrapper(target, source)
        return x + 1

    check(f, r(3), calls=1)
    assert target.__wrapped__ is source and target.__doc__ == "source's doc"


def test_operator_itemgetter_attrgetter_methodcaller():
    def f(x):
        pairs = [(1, x), (0, x * 2), (2, x * 3)]
        first = [p[1] for p in sorted(pairs, key=operator.itemgetter(0))]
        both = operator.itemgetter(0, 2)([x, x + 1, x + 2])
        shape = operator.attrgetter("shape")(x)
        dims = operator.attrgetter("shape", "T.shape")(x[:2])
        summed = operator.methodcaller("sum", dim=0)(x)
        clamped = operator.methodcaller("clamp", -0.5, max=0.5)(x)
        return first, both, shape, dims, summed, clamped

    check(f, r(3, 4), graphs=1, breaks=0)


def test_itertools_groupby_shares_one_iterator():
    def f(x):
        data = [1, 1, 2, 3, 3, 4]
        keys = [k for k, _ in itertools.groupby(data)]
        groups = [(k, len(list(g))) for k, g in itertools.groupby(data, key=lambda v: v % 2)]
        it = itertools.groupby(data)
        k1, g1 = next(it)
        k2, g2 = next(it)  # moving on empties the first group
        stale = list(g1)
        part = next(g2)
        return x[keys], groups, k1, k2, stale, part, [list(g) for _, g in it]

    check(f, r(5, 3), graphs=1, breaks=0)


def test_itertools_tee_reads_each_item_once():
    def f(x):
        log = []

        def source():
            for i in range(3):
                log.append(i)
                yield x * i

        a, b = itertools.tee(source())
        first = next(a)
        seen = list(log)  # one item read so far
        rest_b = list(b)
        rest_a = list(a)
        c, d, e = itertools.tee([x, x + 1], 3)
        return first, seen, rest_b, rest_a, log, list(c), list(d), list(e)

    check(f, r(3), graphs=1, breaks=0)


def test_tensor_indexed_by_a_list_of_python_ints():
    def f(x):
        order = sorted([3, 1, 2])
        evens = list(itertools.filterfalse(lambda i: i % 2, range(5)))
        return x[order], x[evens], x[list(range(0, 5, 2))], x[[-1, 0]], x[[1, 1]]

    check(f, r(5, 3), graphs=1, breaks=0)


def test_list_index_that_is_not_plain_ints_is_left_to_torch():
    # A bool list is a mask (its result size depends on its values), a list
    # with a slice is a tuple index, an index out of range raises: as eager.
    def mask(x):
        return x[[True, False, True, False, True]]

    def nested(x):
        return x[[0, 2], [1, 1]], x[[0, 2], 1]

    def out_of_range(x):
        return x[[0, 7]]

    for fn in (mask, nested, out_of_range):
        check(fn, r(5, 3), calls=2)


def test_getattr_default_of_a_name_tensors_do_not_have():
    # The default, with the input tensor's own attribute guarded absent: a
    # tensor that carries the attribute on a later call gets it.
    def f(x):
        return x * getattr(x, "scale", 2.0), getattr(x * 2, "offset", 1)

    from xacc.jit import jit
    from harness import compare_call

    check(f, r(3), graphs=1, breaks=0)
    jf = jit(f)
    t = torch.randn(3)
    t.scale = 5.0
    out = jf(t)
    torch.testing.assert_close(out[0], t * 5.0)
    compare_call(f, jf, (torch.randn(3),))


def test_copy_deepcopy_of_containers_of_numbers():
    import copy

    def f(x):
        shared = [1, 2]
        cfg = {"scale": 2, "dims": shared, "again": shared, "t": (1, "a"), "nt": ([3],)}
        c = copy.deepcopy(cfg)
        c["dims"].append(3)  # the copy's one list, seen twice
        return x * c["scale"], cfg, c, c["dims"] is c["again"], c["t"] is cfg["t"], c["nt"] is cfg["nt"]

    check(f, r(3), graphs=1, breaks=0)


def test_copy_deepcopy_of_tensors_is_left_to_python():
    import copy

    def f(x):
        d = copy.deepcopy({"w": x, "n": 1})
        d["w"].add_(1)
        return d, x

    check(f, r(3), calls=2)
