"""Control flow: branches on Python values and shapes, loops, while, early returns,
and (as users write it) branches on tensor values."""

import torch

from . import S, T, V, case


@case(T, True)
def branch_on_flag(x, flag):
    if flag:
        return x * 2
    return x


@case(T, None)
def branch_on_none(x, mask):
    if mask is not None:
        x = x.masked_fill(mask, 0)
    return x.softmax(-1)


@case(T)
def branch_on_shape(x):
    if x.shape[0] > 5:
        return x[:5]
    return x


@case(T)
def branch_on_dim(x):
    if x.dim() == 3:
        x = x.flatten(0, 1)
    return x.sum(-1)


@case(T)
def branch_on_dtype(x):
    if x.dtype == torch.float32:
        return x.half().float()
    return x


@case(T)
def branch_on_tensor_value(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


@case(S)
def branch_on_scalar_item(s):
    if s.item() > 0:
        return s + 1
    return s - 1


@case(T)
def ternary_shape(x):
    return x.mean(0) if x.shape[0] == x.shape[1] else x.mean(1)


@case(T)
def for_range_accumulate(x):
    acc = torch.zeros_like(x)
    for i in range(4):
        acc = acc + x * i
    return acc


@case(T)
def for_over_tensor_rows(x):
    total = 0
    for row in x:
        total = total + row.max()
    return total


@case(T)
def while_loop_counter(x):
    i = 0
    while i < 3:
        x = x * 0.5
        i += 1
    return x


@case(T)
def while_tensor_condition(x):
    n = 0
    while x.abs().max() > 1:
        x = x / 2
        n += 1
    return x, n


@case(T)
def for_break(x):
    out = x
    for i in range(10):
        if i == 3:
            break
        out = out + i
    return out


@case(T)
def for_continue(x):
    out = []
    for i in range(5):
        if i % 2:
            continue
        out.append(x[i])
    return torch.stack(out)


@case(T)
def for_else(x):
    for i in range(3):
        if i > 5:
            break
    else:
        x = x + 100
    return x


@case(T)
def nested_loops(x):
    s = 0
    for i in range(3):
        for j in range(2):
            s = s + x[i, j]
    return s


@case(T)
def early_return_in_loop(x):
    for i in range(5):
        if i == 2:
            return x * i
    return x


@case(T)
def loop_over_dict(x):
    layers = {"a": 1.0, "b": 2.0}
    for name in layers:
        x = x + layers[name]
    return x


@case(T)
def assert_shape(x):
    assert x.dim() == 2, "expected a matrix"
    return x.t()


@case(T)
def raise_value_error(x):
    if x.dim() != 3:
        raise ValueError(f"expected 3 dims, got {x.dim()}")
    return x


@case(T)
def chained_comparison(x):
    n = x.shape[0]
    return x * 2 if 0 < n <= 10 else x


@case(T)
def boolean_ops_python(x):
    a = x.shape[0] == 10 and x.shape[1] == 10
    b = x.shape[0] == 3 or x.dim() == 2
    return x if a and b else -x


@case(T)
def not_operator(x):
    training = False
    if not training:
        return x.detach()
    return x


@case(T)
def walrus(x):
    if (n := x.shape[0]) > 3:
        return x[:n // 2]
    return x


@case(T)
def match_statement(x):
    match x.dim():
        case 1:
            return x
        case 2:
            return x.sum(0)
        case _:
            return x.flatten()


@case(T)
def loop_with_list_growth(x):
    hs = [x]
    for _ in range(3):
        hs.append(torch.tanh(hs[-1]))
    return hs[-1], len(hs)


@case(T)
def loop_over_zip_enumerate(x):
    ws = [0.1, 0.2, 0.3]
    out = 0
    for i, (w, r) in enumerate(zip(ws, x.chunk(3))):
        out = out + w * r.sum() * i
    return out


@case(V)
def python_recursion(v):
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)
    return v * depth(4)


@case(T)
def tensor_bool_any(x):
    if (x > 3).any():
        return x.clamp(max=3)
    return x


@case(T)
def torch_where_instead(x):
    return torch.where(x > 0, x, x * 0.1)
