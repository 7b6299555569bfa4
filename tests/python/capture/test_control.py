"""Python control flow and data structures around tensor code: loops over
ranges and containers are unrolled, branches on constants and shapes are
specialized, closures and nested calls are inlined, dataclasses are read."""

import dataclasses
from typing import NamedTuple

import pytest
import torch
import torch.nn.functional as F

from harness import check, r, r2, same
from xacc.jit import counters, jit

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


def test_no_grad_block_is_one_graph():
    c = check(no_grad_inside, lambda i: (torch.randn(3, requires_grad=True),), graphs=1, breaks=0)
    assert c["frames"] == 1


def _grad_of(fn, x):
    x = x.detach().clone().requires_grad_(True)
    out = fn(x)
    out.sum().backward()
    return out.requires_grad, x.grad


def test_no_grad_region_records_no_history():
    # Inside the region nothing is differentiated: d/dx (2x + x) = 1, not 3.
    x = torch.randn(4)
    e_req, e_grad = _grad_of(no_grad_inside, x)
    j_req, j_grad = _grad_of(jit(no_grad_inside), x)
    assert e_req and j_req
    same(e_grad, j_grad)
    assert torch.allclose(j_grad, torch.ones(4))
    assert counters()["graphs"] == 1 and counters()["breaks"] == 0


def no_grad_result(x):
    with torch.no_grad():
        y = x.sin() * 2
    return y, x.cos()


def test_no_grad_results_do_not_require_grad():
    x = torch.randn(3, requires_grad=True)
    y, z = jit(no_grad_result)(x)
    ey, ez = no_grad_result(x)
    assert not y.requires_grad and not ey.requires_grad
    assert z.requires_grad and ez.requires_grad
    same(ey, y)
    same(ez, z)
    assert counters()["graphs"] == 1 and counters()["breaks"] == 0


def sgd_step(w, x, lr):
    loss = (w * x).sum()
    with torch.no_grad():
        w.sub_(lr * x)
    return loss * w


def test_no_grad_in_place_update_of_a_leaf():
    # In-place on a leaf that requires grad is only legal under no_grad; the
    # leaf keeps requiring grad after the region and later ops track it.
    x = torch.randn(5)
    w1 = torch.randn(5, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    e = sgd_step(w1, x, 0.1)
    g = jit(sgd_step)(w2, x, 0.1)
    same(e, g)
    same(w1, w2)
    assert g.requires_grad and w2.requires_grad and w2.is_leaf
    e.sum().backward()
    g.sum().backward()
    same(w1.grad, w2.grad)
    assert counters()["graphs"] == 1 and counters()["breaks"] == 0


def nested_grad_modes(x):
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 3
    return a + b


def test_enable_grad_inside_no_grad_stays_correct():
    x = torch.randn(3, requires_grad=True)
    e = nested_grad_modes(x)
    g = jit(nested_grad_modes)(x)
    same(e, g)
    assert e.requires_grad == g.requires_grad
    assert counters()["internal_errors"] == 0


def test_no_grad_region_under_outer_no_grad():
    jf = jit(no_grad_inside)
    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        out = jf(x)
        expected = no_grad_inside(x)  # eager under the same outer mode
    assert not out.requires_grad
    same(expected, out)
    out2 = jf(x)  # grad mode differs: a second entry, same results
    assert out2.requires_grad
    same(no_grad_inside(x), out2)
    assert counters()["breaks"] == 0


def dict_methods(x):
    d = {"a": x}
    d.update(b=x * 2)
    d.update({"c": x * 3})
    d.setdefault("e", x * 4)
    gone = d.pop("c")
    return d["a"] + d.get("b") + d.get("z", x) + d["e"] + gone, sorted(d)


def test_dict_methods_are_tracked():
    check(dict_methods, r(3), graphs=1, breaks=0)


# -- sets -------------------------------------------------------------------

def set_literal(x):
    s = {1, 2, 3}
    s.add(4)
    s.discard(1)
    if 4 in s and 1 not in s:
        x = x * len(s)
    return x


def set_builtin(x, y):
    seen = set()
    out = x
    for k in (1, 2, 2, 3, 1):
        if k not in seen:
            seen.add(k)
            out = out + y * k
    return out, len(seen)


def set_ops(x):
    a = {1, 2, 3}
    b = set([3, 4])
    u = a | b
    i = a & b
    a |= {7}
    total = sum(sorted(u)) + len(i) + len(a - b)
    return x * total, sorted(a)


def set_comprehension(x):
    s = {k % 3 for k in range(7)}
    t = {*s, 10}
    return x + sum(t) + len(frozenset(s))


def set_iteration(x):
    acc = x
    for k in {3, 1, 2}:
        acc = acc * k
    return acc


def set_arg(x, names):
    return x * 2 if "scale" in names else x


SET_CASES = {
    "set_literal": (set_literal, r(3)),
    "set_builtin": (set_builtin, r2(3)),
    "set_ops": (set_ops, r(2)),
    "set_comprehension": (set_comprehension, r(2)),
    "set_iteration": (set_iteration, r(2)),
    "set_arg": (set_arg, lambda i: (torch.randn(3), {"scale", "bias"})),
}


@pytest.mark.parametrize("name", sorted(SET_CASES))
def test_sets(name):
    fn, make = SET_CASES[name]
    check(fn, make, graphs=1, breaks=0)


def set_returned(x):
    s = {1, 2}
    s.add(5)
    return x + 1, s


def test_set_returned_is_fresh_each_call():
    jf = jit(set_returned)
    x = torch.randn(2)
    _, s1 = jf(x)
    _, s2 = jf(x)
    assert s1 == s2 == {1, 2, 5} and s1 is not s2
    s1.add(9)
    assert jf(x)[1] == {1, 2, 5}
    assert counters()["internal_errors"] == 0


def test_set_arg_change_recompiles():
    jf = jit(set_arg)
    x = torch.randn(3)
    same(jf(x, {"scale"}), x * 2)
    same(jf(x, {"bias"}), x)
    names = {"scale"}
    same(jf(x, names), x * 2)
    names.discard("scale")  # the guard keeps a copy, so mutating the set is seen
    same(jf(x, names), x)
    assert counters()["internal_errors"] == 0


def mutate_set_arg(x, s):
    s.add(3)
    return x + len(s)


def test_mutating_a_set_argument_stays_correct():
    s1, s2 = {1}, {1}
    x = torch.randn(2)
    same(mutate_set_arg(x, s1), jit(mutate_set_arg)(x, s2))
    assert s1 == s2 == {1, 3}
    assert counters()["internal_errors"] == 0


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


# -- data-dependent branches: one ctrl.if ------------------------------------
# Inputs alternate in sign so every case runs both arms across the calls of
# one compiled entry (check() also compares with eager on each call).

def signs(*shape: int):
    return lambda i: (torch.randn(*shape).abs() * (1 if i % 2 == 0 else -1),)


def signs2(*shape: int):
    return lambda i: (torch.randn(*shape).abs() * (1 if i % 2 == 0 else -1), torch.randn(*shape))


def if_else(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y + 1


def if_without_else(x, y):
    z = x * y
    if x.mean() > 0:
        z = z + x.exp()
    return z.sin()


def ternary(x):
    y = x.cos() if x.sum() > 0 else x.sin() * 3
    return y * x


def returns_in_arms(x, y):
    if (x * y).sum() < 0:
        return x - y, y
    return x + y, y * 2


def nested_if(x):
    s = x.sum()
    if s > 0:
        if x.max() > 1.0:
            x = x * 3
        else:
            x = x * 4
    else:
        x = -x
    return x


def bool_of_tensor(x):
    flag = x.min() < 0
    if flag:
        return x.relu()
    return x.tanh()


def branch_in_loop(x):
    for i in range(3):
        if x.sum() > 0:
            x = x - 1.5
        else:
            x = x + 1.0
    return x


def helper_with_branch(x):
    if x.sum() > 0:
        return x * 2
    return x * 3


def branch_in_callee(x):
    return helper_with_branch(x) + helper_with_branch(-x)


class Gate(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.a(x)
        if h.mean() > 0:
            h = self.b(h)
        else:
            h = h.relu()
        return h


def in_place_in_arm(x, y):
    y = y.clone()
    if x.sum() > 0:
        y.add_(x)
    else:
        y.mul_(2)
    return y


def branch_on_item(x):
    if x.sum().item() > 0:
        return x * 2
    return x * 3


def branch_on_item_truth(x):
    if (x > 0).sum().item():
        return x + 1
    return x - 1


def int_item_compared(x):
    # An int64 count compared with an int: exact in int64.
    if (x > 0).sum().item() >= 2:
        return x.cumsum(0)
    return x.flip(0)


def if_not(x):
    # `if not t:` jumps on true: the ^then arm is the jump side.
    if not x.sum() > 0:
        x = x * 5
    else:
        x = x - 7
    return x


def or_condition(x, y):
    if x.sum() > 0 or y.sum() > 0:
        return x + y
    return x - y


CTRL_IF_CASES = {
    "if_not": (if_not, signs(3)),
    "or_condition": (or_condition, lambda i: (torch.randn(3).abs() * [1, -1, -1, 1][i % 4],
                                              torch.randn(3).abs() * [1, 1, -1, -1][i % 4])),
    "if_else": (if_else, signs(4)),
    "if_without_else": (if_without_else, signs2(3)),
    "ternary": (ternary, signs(5)),
    "returns_in_arms": (returns_in_arms, signs2(4)),
    "nested_if": (nested_if, lambda i: (torch.randn(4).abs() * [2.0, 0.1, -1.0][i % 3],)),
    "bool_of_tensor": (bool_of_tensor, lambda i: (torch.randn(4).abs() + (-1.0 if i % 2 else 1.0),)),
    "branch_in_loop": (branch_in_loop, signs(3)),
    "branch_in_callee": (branch_in_callee, signs(3)),
    "in_place_in_arm": (in_place_in_arm, signs2(3)),
    "branch_on_item": (branch_on_item, signs(3)),
    "branch_on_item_truth": (branch_on_item_truth, signs(3)),
    "int_item_compared": (int_item_compared, signs(3)),
}


def _ctrl_nodes(fn, *args, op="ctrl.if"):
    from xacc import explain

    out = explain(fn)(*args)
    return sum(g.count(op + "(") for g in out.graphs), out


@pytest.mark.parametrize("name", sorted(CTRL_IF_CASES))
def test_data_dependent_branch_is_one_graph(name):
    fn, make = CTRL_IF_CASES[name]
    c = check(fn, make, calls=4, graphs=1, breaks=0)
    assert c["frames"] == 1
    n, out = _ctrl_nodes(fn, *make(0))
    assert n >= 1 and out.graph_break_count == 0, out.graphs


def test_module_branch_is_one_graph_and_trains():
    torch.manual_seed(0)
    m1 = Gate()
    m2 = Gate()
    m2.load_state_dict(m1.state_dict())
    jm = jit(m2)
    for i in range(4):
        x = torch.randn(2, 4) * (1 if i % 2 == 0 else -1) + (0.5 if i % 2 == 0 else -0.5)
        e = m1(x)
        g = jm(x)
        same(e, g)
        e.pow(2).sum().backward()
        g.pow(2).sum().backward()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        same(p1.grad, p2.grad)
    c = counters()
    assert c["graphs"] == 1 and c["breaks"] == 0, c


def test_branch_condition_with_many_elements_raises_like_eager():
    def f(x):
        if x > 0:
            return x + 1
        return x - 1

    x = torch.randn(3)
    with pytest.raises(RuntimeError):
        f(x)
    with pytest.raises(Exception):
        jit(f)(x)


def print_in_arm(x):
    if x.sum() > 0:
        print("positive")
        x = x + 1
    return x * 2


def test_branch_with_print_in_an_arm_still_runs_both_sides(capsys):
    # An arm that cannot be captured: the old split at the jump (a break).
    check(print_in_arm, signs(3), calls=4)
    c = counters()
    assert c["breaks"] >= 1
    assert "positive" in capsys.readouterr().out


def shape_differs(x):
    if x.sum() > 0:
        y = x[:2]
    else:
        y = x
    return y * 2


def test_arms_with_different_shapes_break_with_a_reason():
    from xacc import explain

    check(shape_differs, signs(4), calls=4)
    out = explain(shape_differs)(torch.ones(4))
    assert any("not captured as ctrl.if" in b.detail and "float32[2]" in b.detail for b in out.break_reasons), \
        [str(b) for b in out.break_reasons]


# -- while <tensor>: one ctrl.loop --------------------------------------------

def halve_until(x, eps):
    steps = torch.zeros(())
    while x.abs().max() > eps:
        x = x * 0.5
        steps = steps + 1
    return x, steps


def while_with_branch(x):
    while x.sum() > 1.0:
        if x.max() > 2.0:
            x = x - 1.0
        else:
            x = x * 0.5
    return x.exp()


def while_temp_local(x):
    while x.norm() > 1.0:
        y = x * 0.75
        x = y.sin()
    return x


WHILE_CASES = {
    "halve_until": (halve_until, lambda i: (torch.randn(4) * [10.0, 0.01, 1000.0, 3.0][i % 4], 0.1)),
    "while_with_branch": (while_with_branch, lambda i: (torch.rand(3) * [4.0, 0.1, 2.0, 1.0][i % 4],)),
    "while_temp_local": (while_temp_local, lambda i: (torch.randn(5) * [3.0, 0.1, 1.0, 10.0][i % 4],)),
}


@pytest.mark.parametrize("name", sorted(WHILE_CASES))
def test_while_on_a_tensor_is_one_loop(name):
    fn, make = WHILE_CASES[name]
    c = check(fn, make, calls=4, graphs=1, breaks=0)
    assert c["frames"] == 1
    n, out = _ctrl_nodes(fn, *make(0), op="ctrl.loop")
    assert n == 1 and out.graph_break_count == 0, out.graphs


def test_while_loop_gradients_match_eager():
    def f(w, x):
        x = x * w.exp()  # carried tensors keep requires_grad through the loop
        while x.abs().sum() > 0.5:
            x = x * torch.sigmoid(w)
        return x.sum()

    w1 = torch.randn(3, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    x = torch.randn(3) * 4
    f(w1, x).backward()
    jit(f)(w2, x).backward()
    same(w1.grad, w2.grad)
    assert counters()["graphs"] == 1 and counters()["breaks"] == 0


def while_python_string(x):
    tag = ""
    while x.sum() > 1.0:
        x = x * 0.5
        tag = tag + "."
    return x, tag


def test_while_changing_a_python_value_breaks_with_a_reason():
    # The trip count is not known: a Python value other than an int counter
    # (carried as an i64: test_loop_numbers.py) cannot be carried.
    from xacc import explain

    check(while_python_string, lambda i: (torch.rand(3) * [4.0, 0.1][i % 2],), calls=2, max_recompiles=4)
    out = explain(while_python_string)(torch.ones(3) * 4)
    assert any("changes a Python value" in b.detail for b in out.break_reasons), \
        [str(b) for b in out.break_reasons]


def while_item_vs_argument(x, eps):
    while x.abs().max().item() > eps:
        x = x / 2
    return x


def test_while_on_item_compared_with_a_number_argument():
    # eps stays a graph input (no recompile when it changes).
    c = check(while_item_vs_argument, lambda i: (torch.randn(3) * [10.0, 0.1, 100.0][i % 3], [0.5, 0.25, 2.0][i % 3]),
              calls=3, graphs=1, breaks=0)
    assert c["recompiles"] == 0
    n, out = _ctrl_nodes(while_item_vs_argument, torch.randn(3) * 10, 0.5, op="ctrl.loop")
    assert n == 1


def item_used_as_number(x):
    v = x.sum().item()
    return x * v


def test_item_used_otherwise_is_still_a_break():
    check(item_used_as_number, lambda i: (torch.randn(3),), calls=2, max_recompiles=2)
    assert counters()["breaks"] >= 1
