"""A frame with closure cells that breaks (Note [Cells across a break]): the
code that continues it shares the frame's cell objects, so a closure made
before the break sees what the frame stores after it and the frame sees what
the closure stores; functions made before the break are made again over the
same cells, with their defaults and annotations. A frame that stores into one
of its cells after the break point runs in Python (GB017): the code after the
break could not write the shared cell without breaking again at every store."""

import torch

from harness import check
from xacc.explain import explain


# A function made before the break is a new object on every call, and the
# resume function guards a local function by identity: each call recompiles
# (a known limit, not a wrong value). The values, identities and printed
# output are compared on every call.
RECOMPILES = 8


def codes(fn, *args):
    return [b.code for b in explain(fn)(*args).break_reasons]


def frame_writes_after_break(x):
    k = 2
    scale = lambda t: t * k  # noqa: E731 - `k` is a cell of this frame
    y = scale(x)
    print("break")
    k = 3  # the closure made before the break reads this
    return scale(y) + k


def closure_writes_after_break(x):
    total = x
    calls = []

    def add(t):
        nonlocal total
        total = total + t
        calls.append(1)

    add(x)
    print("break")
    add(x * 2)  # the frame reads what the closure stored
    return total, len(calls)


def argument_cell(x, s):
    g = lambda: x * s  # noqa: E731 - `x` and `s` are argument cells
    y = g()
    print("break")
    x = x + 1
    return g() + y


def function_with_defaults_kept(x):
    k = x.sum()  # a graph value in a cell

    def f(t: torch.Tensor, scale: float = 2.0, *, shift: int = 1) -> torch.Tensor:
        return t * k * scale + shift

    print("break")
    return f, f, f(x)


def loop_over_cell(x):
    acc = x

    def read():
        return acc * 2

    for i in range(3):
        x = x + read()
        print(i)
    return x


def test_frame_write_after_break_runs_in_python():
    assert "GB017" in codes(frame_writes_after_break, torch.randn(3))
    check(frame_writes_after_break, lambda i: (torch.randn(3),), calls=2, min_graphs=0, max_recompiles=RECOMPILES)


def test_closure_write_after_break_reaches_the_frame():
    assert "GB017" not in codes(closure_writes_after_break, torch.randn(3))
    check(closure_writes_after_break, lambda i: (torch.randn(3),), calls=2, min_graphs=1, max_recompiles=RECOMPILES)


def argument_cell_read(x, s):
    g = lambda: x * s  # noqa: E731 - `x` and `s` are argument cells
    y = g()
    print("break")
    return g() + y + x


def test_argument_cells_are_shared():
    assert "GB017" not in codes(argument_cell_read, torch.randn(3), torch.randn(3))
    check(argument_cell_read, lambda i: (torch.randn(3), torch.randn(3)), calls=2, min_graphs=1,
          max_recompiles=RECOMPILES)
    # A store into an argument cell after the break: the frame runs in Python.
    assert "GB017" in codes(argument_cell, torch.randn(3), torch.randn(3))
    check(argument_cell, lambda i: (torch.randn(3), torch.randn(3)), calls=2, min_graphs=0, max_recompiles=RECOMPILES)


def test_function_made_before_a_break_is_made_again_over_its_cells():
    assert "GB017" not in codes(function_with_defaults_kept, torch.randn(3))
    check(function_with_defaults_kept, lambda i: (torch.randn(3),), calls=2, min_graphs=1, max_recompiles=RECOMPILES)
    from xacc.jit import jit

    x = torch.randn(3)
    f, g, y = jit(function_with_defaults_kept)(x)
    ef, _, ey = function_with_defaults_kept(x)
    assert f is g
    assert f.__defaults__ == ef.__defaults__ and f.__kwdefaults__ == ef.__kwdefaults__
    assert f.__annotations__ == ef.__annotations__
    assert f.__qualname__ == ef.__qualname__ and f.__module__ == ef.__module__
    torch.testing.assert_close(f(x), ef(x))
    torch.testing.assert_close(y, ey)
    torch.testing.assert_close(f.__closure__[0].cell_contents, x.sum())


def test_loop_with_a_break_over_a_cell():
    assert "GB017" not in codes(loop_over_cell, torch.randn(3))
    check(loop_over_cell, lambda i: (torch.randn(3),), calls=2, min_graphs=1, max_recompiles=RECOMPILES)


def make_reader(w):
    def fn(x):
        k = 2
        g = lambda t: t * k  # noqa: E731 - a cell of this frame
        print("break")
        return g(x), w  # `w` is a free variable: read from the closure

    return fn


def test_free_variable_read_in_a_frame_with_cells():
    w = torch.randn(3)
    fn = make_reader(w)
    check(fn, lambda i: (torch.randn(3),), calls=2, min_graphs=1, max_recompiles=RECOMPILES)
