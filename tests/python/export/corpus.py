"""Capture cases for the export and compare tests: name -> (function, args,
whether Camel can express its graphs). Straight-line tensor code, breaks with
resume functions, effects, modules, and scalar-only graphs (the cases whose
graphs Camel can express)."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _r(*s: int) -> torch.Tensor:
    return torch.randn(*s)


def add(x, y):
    return x + y


def mlp_block(x, w1, w2):
    return F.relu(x @ w1) @ w2


def softmax_attn(q, k, v):
    a = torch.softmax(q @ k.transpose(-1, -2) / 2.0, dim=-1)
    return a @ v


def layer_norm(x):
    return F.layer_norm(x, (x.shape[-1],)) * 2 + 1


def reductions(x):
    return x.sum(0), x.mean(1), x.amax()


def views(x):
    return x.reshape(2, 6).transpose(0, 1).contiguous().flatten()


def where_clamp(x, y):
    return torch.where(x > y, x, y).clamp(-0.5, 0.5)


def cat_stack(x, y):
    return torch.cat([x, y], 0), torch.stack([x, y])


def scalar_arg(x, s):
    return x * s + 1


def helper_print(z):
    print("helper sees", tuple(z.shape))
    return z * 2


def break_print(x, y):
    a = torch.relu(x) + y
    b = helper_print(a)
    return b.sum()


def break_item(x):
    n = (x > 0).sum().item()
    return x * n


def break_twice(x):
    y = x.sin()
    print("first")
    y = y + 1
    print("second")
    return y.cos()


def inplace(x):
    x.add_(1)
    return x * 2


COUNTER = {"n": 0}


def global_write(x):
    global LAST
    LAST = x.sum()
    return x - 1


def dict_return(x):
    return {"a": x.exp(), "b": [x.tanh(), x.sigmoid()]}


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(F.gelu(self.lin(x)))


BLOCK = Block()


def module_call(x):
    return BLOCK(x) + x


def gelu_chain(x):
    return F.gelu(x).tanh().exp().log1p()


def data_branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 2


def data_branch_shapes(x):
    # Arms of different shapes: not one ctrl.if, a break at the jump.
    if x.sum() > 0:
        return x[:2] * 2
    return x - 2


# Scalar-only graphs: Camel can express these.
def int_math(x, a, b):
    c = a * 2 + b
    return c, c // 3 - a % 4, -a


def float_math(x, a, b):
    return (a + 0.5) / b, a * b - 1.25


def mixed_math(x, n, s):
    return float(n) * s + n, n - 7


def compare_ops(x, a, b):
    return a < b, a * a == b, (a + b) * (a - b)


def nested_math(x, a):
    b = a * a
    c = b * b - a
    return c + b // 2


CASES: dict[str, tuple] = {
    "add": (add, lambda: (_r(3, 4), _r(3, 4)), False),
    "mlp_block": (mlp_block, lambda: (_r(2, 4), _r(4, 8), _r(8, 3)), False),
    "softmax_attn": (softmax_attn, lambda: (_r(2, 3, 4), _r(2, 3, 4), _r(2, 3, 4)), False),
    "layer_norm": (layer_norm, lambda: (_r(3, 5),), False),
    "reductions": (reductions, lambda: (_r(4, 3),), False),
    "views": (views, lambda: (_r(3, 4),), False),
    "where_clamp": (where_clamp, lambda: (_r(5), _r(5)), False),
    "cat_stack": (cat_stack, lambda: (_r(2, 3), _r(2, 3)), False),
    "scalar_arg": (scalar_arg, lambda: (_r(4), 0.75), False),
    "break_print": (break_print, lambda: (_r(3, 4), _r(3, 4)), False),
    "break_item": (break_item, lambda: (_r(6),), False),
    "break_twice": (break_twice, lambda: (_r(3),), False),
    "inplace": (inplace, lambda: (_r(3),), False),
    "global_write": (global_write, lambda: (_r(3),), False),
    "dict_return": (dict_return, lambda: (_r(2),), False),
    "module_call": (module_call, lambda: (_r(2, 4),), False),
    "gelu_chain": (gelu_chain, lambda: (_r(6),), False),
    "data_branch": (data_branch, lambda: (_r(4),), False),
    "data_branch_shapes": (data_branch_shapes, lambda: (_r(4),), False),
    "int_math": (int_math, lambda: (_r(2), 7, 5), True),
    "float_math": (float_math, lambda: (_r(2), 3.5, 2.0), True),
    "mixed_math": (mixed_math, lambda: (_r(2), 4, 0.25), True),
    "compare_ops": (compare_ops, lambda: (_r(2), 3, 9), True),
    "nested_math": (nested_math, lambda: (_r(2), 6), True),
}
