"""itertools, functools and operator as users reach for them."""

import functools
import itertools
import operator

import torch

from . import T, V, case


@case(T)
def chain_lists(x):
    a = [x, x + 1]
    b = [x * 2]
    return list(itertools.chain(a, b))


@case(T)
def chain_from_iterable(x):
    groups = [[x], [x * 2, x * 3]]
    return torch.stack(list(itertools.chain.from_iterable(groups)))


@case(T)
def product_grid(x):
    return [x[i, j] for i, j in itertools.product(range(2), range(3))]


@case(T)
def product_repeat(x):
    return [a * b for a, b in itertools.product([1, 2], repeat=2)], x


@case(T)
def accumulate_sums(x):
    return list(itertools.accumulate([x, x, x]))


@case(T)
def accumulate_func(x):
    return list(itertools.accumulate([x, x * 2, x * 3], torch.maximum))


@case(T)
def accumulate_ints(x):
    sizes = [2, 3, 5]
    offsets = [0, *itertools.accumulate(sizes)]
    return [x[a:b] for a, b in zip(offsets, offsets[1:])]


@case(T)
def pairwise_diffs(x):
    rows = list(x[:4])
    return [b - a for a, b in itertools.pairwise(rows)]


@case(T)
def islice_every_other(x):
    return list(itertools.islice(x.chunk(10), 0, None, 2))


@case(T)
def islice_first_n(x):
    return torch.cat(list(itertools.islice(iter(x.chunk(5)), 3)))


@case(T)
def zip_longest_pad(x):
    a = [x, x]
    b = [x]
    return [p if q is None else p + q for p, q in itertools.zip_longest(a, b)]


@case(T)
def starmap_mul(x):
    return list(itertools.starmap(torch.mul, [(x, x), (x, 2)]))


@case(T)
def repeat_times(x):
    return torch.cat(list(itertools.repeat(x, 3)))


@case(T)
def combinations_sum(x):
    parts = x.chunk(4)
    return [a.sum() + b.sum() for a, b in itertools.combinations(parts, 2)]


@case(T)
def permutations_len(x):
    return x * len(list(itertools.permutations(range(3), 2)))


@case(T)
def takewhile_dropwhile(x):
    sizes = [1, 2, 5, 1]
    small = list(itertools.takewhile(lambda s: s < 3, sizes))
    rest = list(itertools.dropwhile(lambda s: s < 3, sizes))
    return x[: sum(small)], rest


@case(T)
def compress_select(x):
    return list(itertools.compress(x.chunk(5), [1, 0, 1, 0, 1]))


@case(T)
def filterfalse_odd(x):
    return x[list(itertools.filterfalse(lambda i: i % 2, range(10)))]


@case(T)
def count_with_zip(x):
    return [r * i for i, r in zip(itertools.count(), x.chunk(3))]


@case(T)
def cycle_with_zip(x):
    signs = itertools.cycle([1, -1])
    return torch.stack([r * s for r, s in zip(x.unbind(0), signs)])


@case(T)
def groupby_lengths(x):
    keys = [k for k, _ in itertools.groupby([1, 1, 2, 3, 3])]
    return x[keys]


@case(T)
def tee_copies(x):
    a, b = itertools.tee([x, x * 2])
    return list(a), list(b)


@case(T)
def partial_softmax(x):
    sm = functools.partial(torch.softmax, dim=-1)
    return sm(x)


@case(T)
def partial_positional(x):
    add3 = functools.partial(torch.add, other=3)
    return add3(x)


@case(T)
def partial_of_lambda(x):
    scale = functools.partial(lambda t, k: t * k, k=0.5)
    return scale(x)


@case(T)
def reduce_add(x):
    return functools.reduce(operator.add, [x, x * 2, x * 3])


@case(T)
def reduce_matmul(x):
    return functools.reduce(torch.matmul, [x, x, x])


@case(T)
def reduce_initial(x):
    return functools.reduce(lambda a, b: a + b.sum(), x.chunk(5), 0)


@case(T)
def reduce_mul_ints(x):
    n = functools.reduce(operator.mul, x.shape, 1)
    return x.reshape(n)


@case(T)
def wraps_decorator(x):
    def twice(fn):
        @functools.wraps(fn)
        def inner(t):
            return fn(fn(t))
        return inner

    @twice
    def inc(t):
        return t + 1
    return inc(x)


@case(T)
def lru_cache_inside(x):
    @functools.lru_cache(maxsize=None)
    def scale(n):
        return n * 2
    return x * scale(3)


@case(T, T)
def operator_add_mul(x, y):
    return operator.add(x, y), operator.mul(x, 2)


@case(T)
def operator_getitem(x):
    return operator.getitem(x, 0)


@case(T)
def operator_itemgetter(x):
    pairs = [(1, x), (0, x * 2)]
    return [p[1] for p in sorted(pairs, key=operator.itemgetter(0))]


@case(T)
def operator_attrgetter(x):
    return operator.attrgetter("shape")(x), x


@case(T)
def operator_methodcaller(x):
    return operator.methodcaller("sum", dim=0)(x)


@case(T, T)
def operator_matmul(x, y):
    return operator.matmul(x, y)


@case(T)
def operator_neg_truediv(x):
    return operator.neg(x), operator.truediv(x, 4)


@case(T)
def operator_iadd(x):
    y = x.clone()
    y = operator.iadd(y, 1)
    return y


@case(V)
def operator_in_map(v):
    return list(map(operator.sub, [v, v * 2], [1, 2]))
