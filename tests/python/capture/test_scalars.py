"""Python ints and floats as graph inputs: one graph for every value unless the
number decides a shape or a branch, where it is specialized (guarded by value)."""

import torch

import xacc
from harness import check, compare_call
from xacc.jit import counters, jit


def scale(x, s):
    return x * s + 1


def test_ten_float_scales_one_graph():
    jf = jit(scale)
    for i in range(10):
        x = torch.randn(4, 3)
        s = 0.25 + 1.5 * i
        compare_call(scale, jf, (x, s,))
    c = counters()
    assert c["graphs"] == 1 and c["recompiles"] == 0, c
    assert c["internal_errors"] == 0


def test_float_guard_is_type_only():
    ex = xacc.explain(scale)(torch.randn(2), 0.5)
    guards = [g for gs in ex.guards for g in gs if "L['s']" in g]
    assert guards == ["L['s']: type is float"], guards


def arith(x, a, b):
    c = a * 2 + b
    return x * c - a / b, c


def test_scalar_arithmetic_stays_symbolic():
    c = check(arith, lambda i: (torch.randn(3), i + 1, 0.5 * i + 1.25), calls=5, graphs=1, max_recompiles=0)
    assert c["breaks"] == 0


def view_n(x, n):
    return x.view(n, -1) * 2


def test_int_used_as_shape_specializes():
    jf = jit(view_n)
    for n in (2, 2, 4, 4, 2):
        x = torch.randn(8)
        compare_call(view_n, jf, (x, n,))
    c = counters()
    assert c["graphs"] == 2 and c["recompiles"] == 1, c
    ex = xacc.explain(view_n)(torch.randn(8), 4)
    assert any(g == "L['n']: == 4" for gs in ex.guards for g in gs)


def branch_n(x, n):
    if n > 3:
        return x + n
    return x - n


def test_int_in_branch_specializes():
    jf = jit(branch_n)
    for n in (5, 5, 1, 1):
        x = torch.randn(3)
        compare_call(branch_n, jf, (x, n,))
    c = counters()
    assert c["graphs"] == 2 and c["recompiles"] == 1, c


def loop_n(x, n):
    for _ in range(n):
        x = x * 2
    return x


def test_int_as_trip_count_specializes():
    c = check(loop_n, lambda i: (torch.randn(3), 2 + (i % 2)), calls=4, max_recompiles=1)
    assert c["graphs"] == 2


def returns_scalar(x, s):
    return x.sum() * s, s * 3.0, -s


def test_scalar_results():
    check(returns_scalar, lambda i: (torch.randn(3), 1.0 + i), calls=3, graphs=1, max_recompiles=0)


def int_tensor_scalar(x, k):
    return (x + k) // 2, x.clamp(min=k)


def test_int_scalar_on_int_tensor():
    check(int_tensor_scalar, lambda i: (torch.arange(10), i + 2), calls=3, graphs=1, max_recompiles=0)


def type_change(x, s):
    return x * s


def test_type_change_recompiles():
    jf = jit(type_change)
    x = torch.randn(3)
    torch.testing.assert_close(jf(x, 2), x * 2)
    torch.testing.assert_close(jf(x, 2.5), x * 2.5)
    torch.testing.assert_close(jf(x, 3), x * 3)
    c = counters()
    assert c["graphs"] == 2 and c["recompiles"] == 1, c


def floor_mod(x, n):
    return x * (n // 3) + (n % 3)


def test_int_floordiv_mod():
    check(floor_mod, lambda i: (torch.randn(3), 7 + 5 * i), calls=4, graphs=1, max_recompiles=0)


def scalar_across_break(x, s):
    y = x * s
    print("between")
    return y + s * 2


def test_scalar_live_across_a_break(capsys):
    c = check(scalar_across_break, lambda i: (torch.randn(3), 0.5 + i), calls=3, max_recompiles=0)
    assert c["breaks"] == 1


def dropout_p(x, p):
    return torch.nn.functional.dropout(x, p, training=False) * 2


def test_python_level_torch_function_specializes():
    # F.dropout is Python code: its number arguments are specialized, still correct.
    c = check(dropout_p, lambda i: (torch.randn(3), 0.1 * (i + 1)), calls=3, max_recompiles=2)
    assert c["graphs"] == 3


def fill_with(x, v):
    y = x.clone()
    y[0] = v
    return y


def test_scalar_through_setitem_stays_correct():
    check(fill_with, lambda i: (torch.randn(3), 1.5 + i), calls=3, max_recompiles=2)


def test_dynamic_false_specializes_floats():
    c = check(scale, lambda i: (torch.randn(2), 0.5 + i), calls=3, max_recompiles=2, dynamic=False)
    assert c["graphs"] == 3
