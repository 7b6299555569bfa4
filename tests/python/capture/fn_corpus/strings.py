"""Strings and formatting: f-strings, format, join, split, methods."""

import torch

from . import T, case


@case(T)
def fstring_key(x):
    d = {}
    for i in range(3):
        d[f"layer_{i}"] = x * i
    return d


@case(T)
def fstring_format_spec(x):
    return x, f"{3.14159:.2f}|{7:03d}|{'a':>3}"


@case(T)
def fstring_of_shape(x):
    return x, f"shape={tuple(x.shape)}"


@case(T)
def percent_format(x):
    return x, "%s-%d" % ("a", 3)


@case(T)
def str_format_method(x):
    return x, "{}_{}".format("w", 2)


@case(T)
def str_join_split(x):
    parts = "a.b.c".split(".")
    return x * len(parts), "/".join(parts)


@case(T)
def str_startswith(x):
    name = "encoder.layer.0"
    if name.startswith("encoder"):
        return x * 2
    return x


@case(T)
def str_methods(x):
    s = "  Hello World "
    return x, s.strip().lower().replace("world", "there"), s.upper().count("L")


@case(T)
def str_in(x):
    return x + 1 if "mask" in "attention_mask" else x


@case(T)
def str_concat_multiply(x):
    return x, "ab" + "c" * 3


@case(T)
def str_indexing(x):
    s = "relu"
    return x, s[0], s[-2:], len(s)


@case(T)
def str_to_activation(x):
    name = "gelu"
    fn = getattr(torch.nn.functional, name)
    return fn(x)


@case(T)
def str_compare(x):
    mode = "mean"
    if mode == "sum":
        return x.sum()
    elif mode == "mean":
        return x.mean()
    return x


@case(T)
def str_partition_isdigit(x):
    head, _, tail = "layer.12".partition(".")
    return x * int(tail) if tail.isdigit() else x, head


@case(T)
def str_encode(x):
    return x, "abc".encode()


@case(T)
def tensor_repr_in_fstring(x):
    return f"{x.dtype}", str(x.device), x
