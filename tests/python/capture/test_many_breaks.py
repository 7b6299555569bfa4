"""Many graph breaks in one frame (issue #27): the pieces between breaks run
one after the other at a constant stack depth (Note [Resume trampoline] in
csrc/lib/capture/EvalFrameImpl.inc), so a long function neither grows the
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


def test_resume_code_holds_only_the_code_after_its_break(capsys):
    # Note [Resume code]: the resume function of break k copies the code from
    # break k on, not the whole function, so making and translating it does
    # not grow with the breaks before it. Every resume code of the original is
    # at most a prologue longer than the code after the offset it continues
    # at, and tracebacks and line numbers still map to the user's lines.
    import types

    from xacc._C import capture as C

    n = 60
    fn = make(n, "print({i}, x)")
    expected, eager_out, got, out = run_both(fn, capsys)
    assert torch.equal(got, expected) and out == eager_out
    orig = fn.__code__
    orig_lines = dict((2 * k, p) for k, p in enumerate(orig.co_positions()))
    # Break code holds its resume code as constants (made into functions per
    # call: Note [Generated code holds no globals]); walk from the original.
    resumes, todo = [], [orig]
    while todo:
        for e in C.entries(todo.pop()):
            bcode = e["code"]
            for c in bcode.co_consts if bcode is not None else ():
                if isinstance(c, types.CodeType) and C.is_resume(c) and c not in resumes:
                    assert C.resume_info(c)[0] is orig
                    resumes.append(c)
                    todo.append(c)
    assert len(resumes) >= n
    for code in resumes:
        shift = C.resume_info(code)[1]  # resume offset - original offset
        positions = list(code.co_positions())
        body = [2 * k for k, p in enumerate(positions) if p[0] is not None]
        start = body[0]  # the first located instruction: the prologue has no location
        assert len(code.co_code) - start <= len(orig.co_code) - (start - shift)
        for off in body:
            assert positions[off // 2] == orig_lines[off - shift]
    total = sum(len(c.co_code) for c in resumes)
    assert total < 0.6 * len(resumes) * len(orig.co_code)
