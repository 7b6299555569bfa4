"""Many graph breaks in one frame (issue #27): the pieces between breaks run
one after the other at a constant stack depth (Note [Resume trampoline] in
csrc/lib/capture/EvalFrame311.cpp), so a long function neither grows the
Python stack per break nor reaches RecursionError, and its results and
printed text are eager's. Capture time is measured by
benchmarks/capture/break_scaling.py, not here."""

import sys

import torch

from xacc.jit import counters, jit


def depth() -> int:
    """Python frames below the caller."""
    f, n = sys._getframe(1), 0
    while f is not None:
        f, n = f.f_back, n + 1
    return n


def make(n: int, body: str):
    lines = ["def many(x):"]
    for i in range(n):
        lines.append(f"    x = x * 0.5 + {i % 5}")
        lines.append("    " + body.format(i=i))
    lines.append("    return x")
    ns = {"depth": depth}
    exec(compile("\n".join(lines), f"<many_breaks:{n}>", "exec"), ns)  # noqa: S102
    return ns["many"]


def run_both(fn, capsys):
    x = torch.randn(3)
    expected = fn(x.clone())
    eager_out = capsys.readouterr().out
    got = jit(fn)(x.clone())
    out = capsys.readouterr().out
    return expected, eager_out, got, out


def test_stack_depth_does_not_grow_per_break(capsys):
    # Each print is a break; each prints how deep the stack is at that point.
    # (xacc.jit's wrapper adds one frame under all of them.)
    fn = make(40, "print({i}, depth())")
    expected, eager_out, got, out = run_both(fn, capsys)
    assert torch.equal(got, expected)

    def growth(text):
        depths = [int(line.split()[1]) for line in text.splitlines()]
        return [d - depths[0] for d in depths]

    assert growth(eager_out) == [0] * 40
    assert growth(out) == growth(eager_out)
    assert counters()["breaks"] >= 40


def test_more_breaks_than_the_recursion_limit_allows_nested(capsys):
    # Nested resume frames (a Python frame a break) would pass this recursion
    # limit halfway through; pieces run at a constant depth need only what one
    # capture needs above the caller.
    n = 300
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth() + n // 2)
    try:
        fn = make(n, "print({i}, x)")
        expected, eager_out, got, out = run_both(fn, capsys)
    finally:
        sys.setrecursionlimit(old)
    assert torch.equal(got, expected)
    assert out == eager_out
    c = counters()
    assert c["breaks"] >= n and c["internal_errors"] == 0, c
