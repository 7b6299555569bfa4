"""Graph breaks inside `for` loops (Note [Loop bodies] in
csrc/lib/capture/translate/Codegen.cpp): the loop runs natively in the frame's
break function, its body is a function of its own captured per iteration, so
the statements around the break stay compiled. Results and side effects must
be those of eager, in the same order."""

import pytest
import torch

from harness import check, same
from xacc import explain
from xacc.jit import counters, jit

LOG = []


def _graph_ops(out):
    return "\n".join(out.graphs)


def print_in_range_loop(x, n):
    for i in range(n):
        x = x.sin() * 2
        print("step", i)
        x = x.cos() + i
    return x * 2


def test_break_in_loop_keeps_the_body_compiled(capsys):
    c = check(print_in_range_loop, lambda i: (torch.randn(3), 3), calls=3, min_graphs=3, max_recompiles=0)
    assert c["skipped"] == 0, c
    assert capsys.readouterr().out.count("step 2") == 6  # eager and jit, 3 calls
    out = explain(print_in_range_loop)(torch.randn(3), 3)
    ops = _graph_ops(out)
    # Both halves of the body run as graphs: sin/mul before the print, cos/add after.
    assert "aten.sin" in ops and "aten.cos" in ops, ops
    assert any(b.code == "GB003" and "inside the loop" in b.detail for b in out.break_reasons), \
        [str(b) for b in out.break_reasons]
    assert not any(b.code == "GB015" for b in out.break_reasons)


def test_prints_interleave_with_the_body_like_eager(capsys):
    def f(x):
        for i in range(3):
            print("a", i, float(x.sum()) > -1e9)
            x = x + 1
            print("b", i)
        return x

    x = torch.randn(2)
    f(x)
    expected = capsys.readouterr().out
    jit(f)(x)
    assert capsys.readouterr().out == expected
    # float(x.sum()) reads a value back from a tensor: the loop runs in Python,
    # its body too, for one break (Note [Loops left to Python] in CodegenLoops.cpp).
    c = counters()
    assert c["breaks"] == 1 and c["internal_errors"] == 0, c


def break_and_else(x, xs):
    for t in xs:
        if t.sum() > 100:
            print("big")
        if t.sum() > 0:
            break
        x = x + t
    else:
        x = x * 2
    return x


@pytest.mark.parametrize("stop", [True, False])
def test_break_statement_and_else_clause(stop):
    def make(i):
        xs = [torch.randn(3) - 5, torch.randn(3) - 5]
        if stop:
            xs += [torch.ones(3), torch.randn(3) - 5]
        return torch.randn(3), xs

    c = check(break_and_else, make, calls=2, max_recompiles=4)
    assert c["graphs"] >= 2 and c["skipped"] <= 2, c


def return_inside(x, n):
    for i in range(n):
        x = x * 1.5
        print(i)
        if i == 2:
            return x - 1
        x = x + 1
    return x


@pytest.mark.parametrize("n", [5, 2, 0])
def test_return_inside_the_loop(n):
    c = check(return_inside, lambda i: (torch.randn(3), n), calls=2, max_recompiles=8)
    assert c["graphs"] >= (1 if n else 0), c


def continue_and_list(x, n):
    seen = []
    for i in range(n):
        x = x + 1
        seen.append(i)
        if i % 2:
            print("odd", i)
            continue
        x = x * 0.5
    return x, seen


def test_continue_and_a_local_list():
    c = check(continue_and_list, lambda i: (torch.randn(3), 5), calls=2, max_recompiles=8)
    assert c["graphs"] >= 2


class Box:
    pass


def attribute_writes(x, b):
    for k in range(3):
        x = x.exp().log() + k
        b.count = b.count + 1
        print("count", b.count)
        b.last = k
        x = x * 2
    return x


def test_attribute_writes_in_the_loop_happen_each_iteration(capsys):
    b1, b2 = Box(), Box()
    b1.count = b2.count = 0
    x = torch.randn(3)
    e = attribute_writes(x, b1)
    expected = capsys.readouterr().out
    same(e, jit(attribute_writes)(x, b2))
    assert capsys.readouterr().out == expected
    assert (b1.count, b1.last) == (b2.count, b2.last) == (3, 2)
    assert counters()["graphs"] >= 2


def global_log(x):
    for i in range(4):
        x = x + i
        LOG.append(i)
        x = x.tanh()
    return x


def test_appends_to_a_global_list_in_order():
    LOG.clear()
    x = torch.randn(3)
    e = global_log(x)
    expected = list(LOG)
    LOG.clear()
    same(e, jit(global_log)(x))
    assert LOG == expected == [0, 1, 2, 3]
    c = counters()
    # Note [Replayed container mutation]: the appends to the module's list are
    # replayed after the one graph, in order, instead of breaking the loop.
    assert c["internal_errors"] == 0 and c["graphs"] == 1 and c["breaks"] == 0, c


def bound_only_in_loop(x, n):
    for i in range(n):
        y = x * i
        print("i", i)
    return y


def test_local_bound_only_in_the_loop():
    same(bound_only_in_loop(torch.ones(2), 3), jit(bound_only_in_loop)(torch.ones(2), 3))
    assert counters()["graphs"] >= 1
    # No iteration: y is unbound after the loop, as in eager.
    with pytest.raises(UnboundLocalError):
        bound_only_in_loop(torch.ones(2), 0)
    with pytest.raises(UnboundLocalError):
        jit(bound_only_in_loop)(torch.ones(2), 0)


def nested_loops(x):
    for i in range(2):
        for j in range(3):
            x = x + i * j
            print(i, j)
            x = x.sin()
    return x


def test_nested_loops_with_a_break_in_the_inner_one(capsys):
    # One recompile: the outer body first sees `j` unbound (the sentinel), then an int.
    check(nested_loops, lambda i: (torch.randn(3),), calls=2, min_graphs=2, max_recompiles=1)
    out = capsys.readouterr().out
    assert out.count("1 2") == 4
    ex = explain(nested_loops)(torch.randn(3))
    assert not any(b.code == "GB015" for b in ex.break_reasons), [str(b) for b in ex.break_reasons]
    assert "aten.sin" in _graph_ops(ex)


def enumerate_zip(x, ys):
    total = x * 0
    for i, (a, b) in enumerate(zip(ys, ys[1:])):
        total = total + i * a * b
        print(i)
        total = total.cos()
    return total


def test_enumerate_zip_loop_with_a_break():
    # The index is an argument of the body (unpacked from the tuple): no recompile per iteration.
    c = check(enumerate_zip, lambda i: (torch.randn(3), [torch.randn(3) for _ in range(4)]), calls=2,
              min_graphs=2)
    assert c["skipped"] <= 1, c


def after_an_earlier_break(x):
    x = x + 1
    print("before")
    y = x * 2
    for i in range(3):
        y = y + i
        print("in", i)
        y = y * 3
    return y + x


def test_loop_in_a_resume_function():
    c = check(after_an_earlier_break, lambda i: (torch.randn(3),), calls=2, min_graphs=4)
    assert c["skipped"] == 0, c


def module_loop(m, x):
    for layer in m:
        x = layer(x)
        print(type(layer).__name__)
        x = torch.relu(x)
    return x


def test_loop_over_modules_with_a_break():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 3))
    x = torch.randn(2, 3)
    same(module_loop(m, x), jit(module_loop)(m, x))
    ex = explain(module_loop)(m, x)
    assert "aten.relu" in _graph_ops(ex) and not any(b.code == "GB015" for b in ex.break_reasons)


def loop_over_a_generator(x):
    def gen():
        yield 1
        yield 2

    for k in gen():
        x = x * k
    return x


def grows_while_iterated(x, xs):
    for t in xs:
        x = x + t
        print(len(xs))
        if len(xs) < 5:
            xs.append(t * 2)
    return x


def test_list_appended_to_while_iterated_sees_the_new_items():
    def make(i):
        return torch.randn(3), [torch.randn(3), torch.randn(3)]

    check(grows_while_iterated, make, calls=2, max_recompiles=8)


def test_loop_over_a_generator_runs_like_eager():
    same(loop_over_a_generator(torch.ones(2)), jit(loop_over_a_generator)(torch.ones(2)))
    assert counters()["internal_errors"] == 0


def test_try_inside_the_loop_still_falls_back_with_a_reason():
    def f(x):
        for i in range(2):
            try:
                print(i)
            finally:
                x = x + 1
        return x

    same(f(torch.ones(2)), jit(f)(torch.ones(2)))
    out = explain(f)(torch.ones(2))
    assert any(b.code in ("GB014", "GB015") for b in out.break_reasons), [str(b) for b in out.break_reasons]


def while_with_print(x):
    i = 0
    while i < 3:
        x = x + 1
        print("w", i)
        x = x * 2
        i += 1
    return x


def while_true_with_break(x):
    n = 0
    while True:
        x = x.sin()
        print("n", n)
        n += 1
        if n > 4:
            break
    return x, n


@pytest.mark.parametrize("fn", [while_with_print, while_true_with_break])
def test_while_loop_with_a_break_keeps_the_body_compiled(fn, capsys):
    # The counter is a Python int the condition branches on: it specializes
    # per iteration (recompiles), but the statements around the print are graphs.
    x = torch.randn(3)
    e = fn(x)
    expected = capsys.readouterr().out
    same(e, jit(fn)(x))
    assert capsys.readouterr().out == expected
    ex = explain(fn)(x)
    assert not any(b.code == "GB015" for b in ex.break_reasons), [str(b) for b in ex.break_reasons]
    assert "aten.sin" in _graph_ops(ex) or "aten.mul" in _graph_ops(ex)


def while_in_for(x, xs):
    for t in xs:
        j = 0
        while j < 2:
            x = x + t
            print(j)
            j += 1
    return x


def test_while_inside_a_for_loop():
    c = check(while_in_for, lambda i: (torch.randn(3), [torch.randn(3), torch.randn(3)]), calls=2,
              min_graphs=1, max_recompiles=8)
    assert c["internal_errors"] == 0


def loop_body_with_print(w, x):
    for i in range(3):
        x = torch.tanh(x * w)
        print(i)
        x = x + w
    return x.sum()


def range_loop_past_the_unroll_bound(w, x):
    for i in range(70):
        x = torch.sin(x * w) + 0.1
    return x.sum()


@pytest.mark.parametrize("f,graphs_ok", [
    # the print splits the body: loop-body functions, several graphs
    pytest.param(loop_body_with_print, lambda c: c["graphs"] >= 2, id="body-with-print"),
    # one ctrl.loop: one graph, no break
    pytest.param(range_loop_past_the_unroll_bound, lambda c: c["graphs"] == 1 and c["breaks"] == 0,
                 id="range-ctrl-loop"),
])
def test_loop_gradients_match_eager(f, graphs_ok):
    w1 = torch.randn(3, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    x = torch.randn(3)
    f(w1, x).backward()
    jit(f)(w2, x).backward()
    same(w1.grad, w2.grad)
    assert graphs_ok(counters()), counters()


# -- range loops past the unroll bound: one ctrl.loop -------------------------

def long_range(x, w):
    for i in range(100):
        x = torch.tanh(x @ w) + i * 0.01
    return x


def range_from_argument(x, n):
    for i in range(2, n, 3):
        x = x * 0.99 + i
    return x


def index_as_python_number(x):
    for i in range(80):
        if i == 3:
            x = x + 1
        x = x * 0.5
    return x


def _loops_in(fn, *args):
    out = explain(fn)(*args)
    return sum(g.count("ctrl.loop(") for g in out.graphs), out


def test_long_range_loop_is_one_ctrl_loop():
    c = check(long_range, lambda i: (torch.randn(2, 4), torch.randn(4, 4) * 0.3), calls=3, graphs=1, breaks=0)
    assert c["frames"] == 1
    n, out = _loops_in(long_range, torch.randn(2, 4), torch.randn(4, 4))
    assert n == 1 and out.graph_break_count == 0
    # The body is traced once: the graph stays small.
    assert out.graphs[0].count("aten.mm") == 1, out.graphs[0]


def test_range_loop_with_its_bound_from_an_int_argument():
    # n specializes (guarded by value, as for any int used by range): one recompile per n.
    for n in (200, 301):
        x = torch.randn(3)
        same(range_from_argument(x, n), jit(range_from_argument)(x, n))
    assert counters()["graphs"] == 2
    n, _ = _loops_in(range_from_argument, torch.randn(3), 200)
    assert n == 1


def test_short_range_loops_still_unroll():
    n, out = _loops_in(range_from_argument, torch.randn(3), 20)
    assert n == 0 and out.graph_count == 1


def test_loop_index_used_as_a_python_number_unrolls():
    check(index_as_python_number, lambda i: (torch.randn(3),), calls=2, graphs=1, breaks=0)
    n, _ = _loops_in(index_as_python_number, torch.randn(3))
    assert n == 0


def temp_used_after(x):
    for i in range(70):
        y = x * 0.5
        x = y + 1
    return x + y


def test_range_loop_with_a_temporary_read_after_it_stays_correct():
    check(temp_used_after, lambda i: (torch.randn(3),), calls=2, graphs=1, breaks=0)


def _has_xpu():
    from xacc._C import capture
    return capture.device_available("xpu0")


@pytest.mark.skipif(not _has_xpu(), reason="no MLIR backend")
def test_long_range_loop_on_xpu0():
    check(long_range, lambda i: (torch.randn(2, 4), torch.randn(4, 4) * 0.3), calls=2, graphs=1, breaks=0,
          device="xpu0", atol=1e-4)
