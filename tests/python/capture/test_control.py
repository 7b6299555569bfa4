"""Python control flow and data structures around tensor code: loops over
ranges and containers are unrolled, branches on constants and shapes are
specialized, closures and nested calls are inlined, dataclasses are read."""

import dataclasses
from typing import NamedTuple

import pytest
import torch
import torch.nn.functional as F

from harness import check, r, r2

SCALE = 3.0


def helper(x, k=2):
    return x * k + 1


def nested(x):
    return helper(helper(x), k=3)


def loop_range(x):
    for i in range(4):
        x = x * 0.5 + i
    return x


def loop_list(x, y):
    out = []
    for t in [x, y, x + y]:
        out.append(t.sum())
    return torch.stack(out)


def loop_enumerate_zip(x, y):
    acc = torch.zeros(())
    for i, (a, b) in enumerate(zip(x, y)):
        acc = acc + i * (a * b).sum()
    return acc


def while_loop(x):
    n = 0
    while n < 3:
        x = x + n
        n += 1
    return x


def shape_branch(x):
    if x.shape[0] > 2:
        return x.sum(0)
    return x.mean(0)


def const_branch(x, flag=True):
    y = x * 2 if flag else x * 3
    return y if flag else -y


def none_default(x, bias=None):
    if bias is not None:
        x = x + bias
    return x.relu()


def closure_outer(x):
    k = x.shape[-1]

    def inner(y):
        return y / k

    return inner(x) + inner(x * 2)


def lambda_call(x):
    f = lambda t: t.tanh() * 2  # noqa: E731
    return f(x) + f(-x)


def list_comp(x):
    return torch.cat([x * i for i in range(3)])


def dict_comp(x):
    d = {k: x * v for k, v in {"a": 1, "b": 2}.items()}
    return d["a"] + d["b"]


def tuple_unpack(x):
    a, *rest = x.unbind(0)
    return a + sum(rest)


def kwargs_call(x):
    def g(a, *, scale=1.0, shift=0.0):
        return a * scale + shift
    return g(x, shift=1.0) + g(x, scale=2.0)


def star_args(x, y):
    def g(*ts):
        return sum(ts)
    args = (x, y, x)
    return g(*args)


def global_read(x):
    return x * SCALE


@dataclasses.dataclass
class Config:
    scale: float = 2.0
    shift: float = 1.0


CFG = Config()


def dataclass_read(x):
    return x * CFG.scale + CFG.shift


class Pair(NamedTuple):
    a: torch.Tensor
    b: torch.Tensor


def namedtuple_in(p):
    return p.a * p.b


def isinstance_check(x):
    if isinstance(x, torch.Tensor):
        return x + 1
    return x


def len_and_min(x, y):
    n = min(len(x), len(y))
    return x[:n] + y[:n]


def str_format(x):
    name = f"layer{2}"
    return x * len(name)


def dict_arg(d):
    return d["x"] * d["y"]


def list_arg(xs):
    return xs[0] + xs[1] * xs[2]


def reversed_loop(x):
    parts = list(x.split(1))
    acc = parts[0]
    for p in reversed(parts):
        acc = acc * 0.5 + p
    return acc


def int_arg(x, n):
    return x * n


def getattr_builtin(x):
    return getattr(torch, "relu")(x)


def nested_modules_call(x):
    return F.relu(helper(x))


def no_grad_inside(x):
    with torch.no_grad():
        y = x * 2
    return y + x


CASES = {
    "nested_calls": (nested, r(3)),
    "loop_range": (loop_range, r(4)),
    "loop_list": (loop_list, r2(3)),
    "loop_enumerate_zip": (loop_enumerate_zip, r2(3, 2)),
    "while_loop": (while_loop, r(2)),
    "shape_branch": (shape_branch, r(4, 2)),
    "const_branch": (const_branch, r(3)),
    "none_default": (none_default, r(3)),
    "closure": (closure_outer, r(2, 4)),
    "lambda": (lambda_call, r(5)),
    "list_comprehension": (list_comp, r(2)),
    "dict_comprehension": (dict_comp, r(2)),
    "star_unpack": (tuple_unpack, r(4, 2)),
    "kwargs": (kwargs_call, r(3)),
    "star_args": (star_args, r2(2)),
    "global_read": (global_read, r(3)),
    "dataclass_read": (dataclass_read, r(3)),
    "namedtuple_arg": (namedtuple_in, lambda i: (Pair(torch.randn(2), torch.randn(2)),)),
    "isinstance": (isinstance_check, r(3)),
    "len_min": (len_and_min, lambda i: (torch.randn(4), torch.randn(3))),
    "fstring": (str_format, r(2)),
    "dict_arg": (dict_arg, lambda i: ({"x": torch.randn(3), "y": torch.randn(3)},)),
    "list_arg": (list_arg, lambda i: ([torch.randn(2), torch.randn(2), torch.randn(2)],)),
    "reversed": (reversed_loop, r(3, 2)),
    "int_arg": (int_arg, lambda i: (torch.randn(3), 4)),
    "getattr": (getattr_builtin, r(3)),
    "nested_torch": (nested_modules_call, r(3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_control(name):
    fn, make = CASES[name]
    check(fn, make, graphs=1, breaks=0)


def test_no_grad_block_splits_and_stays_correct():
    x = torch.randn(3, requires_grad=True)
    c = check(no_grad_inside, lambda i: (torch.randn(3, requires_grad=True),), min_graphs=2)
    assert c["breaks"] >= 1


def test_shape_branch_recompiles_per_shape():
    check(shape_branch, lambda i: (torch.randn(2 + i, 3),), calls=3, max_recompiles=2)


def test_int_arg_is_a_graph_input():
    # `x * n`: n is an ATen Scalar, so it is a graph input guarded by type only.
    c = check(int_arg, lambda i: (torch.randn(3), i), calls=3, max_recompiles=0)
    assert c["graphs"] == 1


def test_int_arg_specializes_with_dynamic_false():
    c = check(int_arg, lambda i: (torch.randn(3), i), calls=3, max_recompiles=2, dynamic=False)
    assert c["graphs"] == 3


def test_global_rebinding_is_seen():
    global SCALE
    from xacc.jit import jit
    j = jit(global_read)
    x = torch.randn(3)
    assert torch.allclose(j(x), x * 3.0)
    SCALE = 5.0
    try:
        assert torch.allclose(j(x), x * 5.0)
    finally:
        SCALE = 3.0
