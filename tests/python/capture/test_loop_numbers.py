"""`while <tensor>:` loops whose body also counts in a Python int (Note
[Loop-carried numbers] in TranslateLoops.cpp): the int is carried by the
ctrl.loop as an i64 value, so the loop is one graph without a break, and the
count comes back as a Python int equal to eager's. Using the count as a plain
number inside the body (a branch on it) cannot be traced: that loop breaks
as before, and stays eager-equal."""

import torch

from harness import check, r
from xacc.jit import counters, jit


def test_while_tensor_condition_with_a_counter_is_one_graph():
    def f(x):
        n = 0
        while x.abs().max() > 1:
            x = x / 2
            n += 1
        return x, n

    check(f, lambda i: (torch.randn(6, 6) * (3 + 20 * i),), graphs=1, breaks=0)


def test_the_count_is_a_python_int_and_can_be_used_after_the_loop():
    def f(x):
        steps = 0
        total = 2
        while x.sum() > 0.5:
            x = x - 1
            steps = steps + 1
            total += steps * 2
        return x * steps, steps, total

    jf = jit(f)
    for k in range(3):
        x = torch.rand(4) + k
        want = f(x.clone())
        got = jf(x.clone())
        assert type(got[1]) is int and type(got[2]) is int
        assert got[1:] == want[1:]
        assert torch.allclose(got[0], want[0])
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1, c


def test_a_counter_that_does_not_run_keeps_its_value():
    def f(x):
        n = 5
        while x.max() > 100:
            x = x * 0.5
            n -= 1
        return x + n, n

    check(f, r(3, 3), graphs=1, breaks=0)


def test_a_branch_on_the_count_in_the_body_still_breaks_and_is_exact():
    def f(x):
        n = 0
        while x.abs().max() > 1:
            x = x / 2
            if n > 2:
                x = x - 0.1
            n += 1
        return x, n

    c = check(f, lambda i: (torch.randn(5) * 10,), max_recompiles=20)
    assert c["breaks"] >= 1, c
