"""Builtins the way model code uses them: zip(*...) transposes, key= lambdas
over indices, numel counts, padding arithmetic with % and divmod, argument
normalisation with isinstance, dtype lookup by name, shape tests with
any/all/min (issue 18)."""

import math

import torch
import torch.nn.functional as F

from . import T, V, case


@case(T)
def zip_star_transpose(x):
    pairs = [(x, 1), (x * 2, 2), (x * 3, 3)]
    tensors, weights = zip(*pairs)
    return sum(t * w for t, w in zip(tensors, weights)), weights


@case(T)
def argmax_of_list_by_key(x):
    parts = [x[:3], x[3:8], x[8:]]
    i = max(range(len(parts)), key=lambda k: parts[k].shape[0])
    return parts[i] * i


@case(T, V)
def numel_count_generator(x, v):
    n = sum(t.numel() for t in (x, v))
    return x.flatten()[: n // 11], n


@case(T)
def pad_to_multiple(x):
    pad = (-x.shape[-1]) % 4
    q, r = divmod(x.shape[0], 3)
    return F.pad(x, (0, pad)), q, r


@case(T)
def normalise_dims_arg(x, dims=1):
    if not isinstance(dims, (list, tuple)):
        dims = (dims,)
    return x.sum(dim=dims), len(dims)


@case(T)
def dtype_by_name(x):
    dt = getattr(torch, "float64")
    return x.to(dt), str(dt)


@case(T)
def round_fraction_of_size(x):
    k = round(x.shape[0] * 0.25)
    return x[:k], k


@case(T, V)
def all_isinstance_tensors(x, v):
    xs = [x, v, x.t()]
    if all(isinstance(t, torch.Tensor) for t in xs):
        return [t.mean() for t in xs]
    return None


@case(T)
def enumerate_zip_nested(x):
    a, b = x.chunk(2), (-x).chunk(2)
    out = []
    for i, (p, q) in enumerate(zip(a, b)):
        out.append(p * i + q)
    return torch.cat(out)


@case(T)
def min_of_shape(x):
    side = min(x[:, :7].shape)
    return x[:side, :side], side


@case(T)
def map_int_over_split(x):
    shape = list(map(int, "5,20".split(",")))
    return x.reshape(shape)


@case(T)
def any_singleton_dim(x):
    y = x[:1]
    squeeze = any(s == 1 for s in y.shape)
    return (y.squeeze(0) if squeeze else y), squeeze


@case(T)
def ceil_of_division(x):
    chunks = int(math.ceil(x.shape[0] / 3))
    return [c.sum() for c in x.split(chunks)], chunks


@case(T)
def callable_optional_fn(x, fn=None):
    if fn is None or not callable(fn):
        fn = torch.tanh
    return fn(x)


@case(T)
def reversed_enumerate(x):
    rows = list(enumerate(x.unbind(0)[:4]))
    acc = x[0]
    for i, r in reversed(rows):
        acc = acc * 0.5 + r * i
    return acc
