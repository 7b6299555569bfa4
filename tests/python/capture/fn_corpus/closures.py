"""Closures, lambdas, nested functions, default arguments, generators."""

import torch

from . import T, V, case


@case(T)
def closure_read(x):
    k = 3

    def f(t):
        return t * k
    return f(x)


@case(T)
def closure_nonlocal(x):
    count = 0

    def bump():
        nonlocal count
        count += 1
    bump()
    bump()
    return x * count


@case(T)
def closure_over_tensor(x):
    w = x * 2

    def apply(t):
        return t @ w
    return apply(x)


@case(T)
def lambda_list(x):
    fns = [lambda t: t + 1, lambda t: t * 2]
    return [f(x) for f in fns]


@case(T)
def lambda_default_capture(x):
    fns = [lambda t, i=i: t * i for i in range(3)]
    return [f(x) for f in fns]


@case(T)
def nested_function_defaults(x):
    def scale(t, factor=2.0, *, bias=0.0):
        return t * factor + bias
    return scale(x), scale(x, 3.0, bias=1.0)


@case(T)
def kwargs_forwarding(x):
    def inner(t, **kw):
        return t * kw.get("alpha", 1.0)

    def outer(t, **kw):
        return inner(t, **kw)
    return outer(x, alpha=0.5)


@case(T)
def args_forwarding(x):
    def inner(*args):
        return sum(args)
    return inner(x, x, x)


@case(T)
def returns_function(x):
    def make(k):
        return lambda t: t * k
    return make(4)(x)


@case(T)
def generator_function(x):
    def gen(t):
        for i in range(3):
            yield t * i
    return list(gen(x))


@case(T)
def generator_next(x):
    def gen():
        yield x
        yield x * 2
    g = gen()
    return next(g) + next(g)


@case(T)
def generator_yield_from(x):
    def inner():
        yield x
        yield x + 1

    def outer():
        yield from inner()
        yield x + 2
    return list(outer())


@case(T)
def generator_early_stop(x):
    def gen():
        i = 0
        while True:
            yield x * i
            i += 1
    out = []
    for v in gen():
        if len(out) == 3:
            break
        out.append(v)
    return out


@case(T)
def generator_send_sum(x):
    def chunks():
        for c in x.chunk(5):
            yield c.sum()
    return sum(chunks())


@case(T)
def decorator_applied(x):
    def double_result(fn):
        def wrapper(*a, **k):
            return fn(*a, **k) * 2
        return wrapper

    @double_result
    def f(t):
        return t + 1
    return f(x)


@case(T)
def recursive_closure(x):
    def apply_n(t, n):
        if n == 0:
            return t
        return apply_n(torch.sin(t), n - 1)
    return apply_n(x, 3)


@case(T)
def higher_order_compose(x):
    def compose(*fns):
        def run(t):
            for f in fns:
                t = f(t)
            return t
        return run
    return compose(torch.relu, torch.exp, torch.log1p)(x)


@case(V)
def closure_cell_mutated_later(v):
    k = 1

    def f(t):
        return t * k
    k = 5
    return f(v)


@case(T)
def global_constant_read(x):
    return x * SCALE


SCALE = 0.25
