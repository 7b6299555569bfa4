"""Builtin functions: len, range, enumerate, zip, map, filter, min/max/sum,
sorted, reversed, any/all, abs, round, divmod, isinstance, getattr, type ..."""

import torch

from . import IV, S, T, V, case


@case(T)
def len_of_tensor(x):
    return x * len(x)


@case(T, T)
def zip_pairs(x, y):
    return [a + b for a, b in zip(x.unbind(0), y.unbind(0))]


@case(T)
def enumerate_rows(x):
    out = []
    for i, row in enumerate(x.chunk(5)):
        out.append(row * i)
    return torch.cat(out)


@case(T)
def enumerate_start(x):
    return sum(i * r for i, r in enumerate(x.split(2), start=1))


@case(T)
def map_relu(x):
    return list(map(torch.relu, [x, -x, x * 2]))


@case(T)
def map_lambda(x):
    return tuple(map(lambda t: t.sum(), x.chunk(2)))


@case(T)
def filter_none(x):
    parts = [x, None, x * 2, None]
    return list(filter(None, [p is not None for p in parts])), [p for p in parts if p is not None]


@case(T)
def filter_lambda_ints(x):
    dims = list(filter(lambda d: d % 2 == 0, range(6)))
    return x * len(dims), dims


@case(T)
def sum_of_list(x):
    return sum([x, x * 2, x * 3])


@case(T)
def sum_with_start(x):
    return sum((x.mean(0), x.mean(1)), torch.zeros(10))


@case(T)
def sum_of_ints(x):
    return x + sum(range(5))


@case(T)
def min_max_ints(x):
    a, b = x.shape
    return x[: min(a, 4), : max(b - 7, 2)]


@case(T)
def max_of_tensors_elementwise(x):
    return torch.max(x, torch.zeros_like(x))


@case(S, S)
def min_of_scalar_tensors(a, b):
    return min(a, b)


@case(S, S)
def max_of_scalar_tensors(a, b):
    return max(a, b) * 2


@case(T)
def max_with_key(x):
    parts = [x[:2], x[:5], x[:3]]
    return max(parts, key=len)


@case(T)
def min_with_key_lambda(x):
    shapes = [(3, 4), (1, 9), (2, 2)]
    best = min(shapes, key=lambda s: s[0] * s[1])
    return x[: best[0], : best[1]]


@case(T)
def sorted_ints(x):
    order = sorted([3, 1, 2])
    return x[order]


@case(T)
def sorted_key_lambda(x):
    named = [("b", 2), ("a", 1), ("c", 3)]
    ordered = sorted(named, key=lambda p: p[1], reverse=True)
    return [x * v for _, v in ordered], [k for k, _ in ordered]


@case(T)
def sorted_strings(x):
    d = {"w2": x * 2, "w1": x, "w3": x * 3}
    return [d[k] for k in sorted(d)]


@case(T)
def reversed_list(x):
    parts = [x, x + 1, x + 2]
    return [p.sum() for p in reversed(parts)]


@case(T)
def reversed_range(x):
    acc = x
    for i in reversed(range(3)):
        acc = acc * (i + 1)
    return acc


@case(T)
def any_all_python(x):
    flags = [x.dim() == 2, x.shape[0] > 3]
    if all(flags) and any([False, True]):
        return x + 1
    return x - 1


@case(T)
def abs_round_divmod(x):
    q, r = divmod(17, 5)
    return x * abs(-3) + round(2.567, 2) + q - r


@case(T)
def abs_of_tensor(x):
    return abs(x)


@case(T)
def pow_builtin(x):
    return pow(x, 2) + pow(2, 3)


@case(T)
def isinstance_checks(x):
    if isinstance(x, torch.Tensor) and not isinstance(x, (list, tuple)):
        return x * 2
    return x


@case(T, 3)
def isinstance_int_arg(x, n):
    if isinstance(n, int):
        return x * n
    return x


@case(T)
def getattr_default(x):
    scale = getattr(x, "scale", 2.0)
    return x * scale


@case(T)
def hasattr_tensor(x):
    return x + 1 if hasattr(x, "shape") else x


@case(T)
def type_is_check(x):
    return x * 2 if type(x) is torch.Tensor else x


@case(T)
def callable_check(x):
    fn = torch.relu
    return fn(x) if callable(fn) else x


@case(T)
def int_float_bool_casts(x):
    n = int(3.7)
    f = float("1.5")
    b = bool([])
    return x * n + f, b


@case(T)
def int_of_size(x):
    return x.reshape(int(x.numel() / 2), 2)


@case(S)
def float_of_scalar_tensor(s):
    return float(s) * 2


@case(S)
def int_of_scalar_tensor(s):
    return int(s * 10)


@case(T)
def list_of_range(x):
    idx = list(range(0, 10, 3))
    return x[idx], idx


@case(T)
def tuple_of_generator(x):
    return tuple(r.sum() for r in x[:3])


@case(T)
def dict_of_zip(x):
    names = ["a", "b", "c"]
    return dict(zip(names, x.chunk(5)[:3]))


@case(T)
def dict_kwargs_builtin(x):
    d = dict(a=x, b=x * 2)
    return d["a"] + d["b"]


@case(T)
def set_of_ints(x):
    s = set([1, 2, 2, 3])
    return x * len(s)


@case(V)
def iter_next(v):
    it = iter([v, v * 2, v * 3])
    first = next(it)
    second = next(it)
    return first + second, next(it, None)


@case(V)
def next_default(v):
    it = iter([])
    return next(it, v)


@case(T)
def hash_and_id_free(x):
    key = hash(("layer", 3))
    return x, key == hash(("layer", 3))


@case(T)
def chr_ord(x):
    return x * (ord("a") - 96), chr(65)


@case(T)
def slice_object(x):
    s = slice(1, 8, 2)
    return x[s], s.start


@case(IV)
def all_of_tensor(v):
    return all(v >= 0)


@case(V)
def builtin_sum_of_tensor(v):
    return sum(v)


@case(T)
def zip_strict_lists(x):
    ws = [1.0, 2.0, 3.0]
    return sum(w * p for w, p in zip(ws, x.chunk(5), strict=False))


@case(T)
def bool_of_list(x):
    extra = []
    if extra:
        return x
    return -x


@case(T)
def repr_str_of_int(x):
    return x, str(len(x)) + "x" + repr(3)


@case(T)
def format_builtin(x):
    return x, format(3.14159, ".2f")


@case(V)
def print_value(v):
    print("shape:", tuple(v.shape))
    return v + 1
