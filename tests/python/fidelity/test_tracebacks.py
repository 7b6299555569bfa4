"""Tracebacks and frame introspection through graph breaks look like plain
Python: each case runs eagerly and under capture, each in a process of its
own (this file run as a script), and the two reports must be equal: the
exception's type and message, the traceback's (file, line, function) list,
the innermost frame's local names, what `sys._getframe().f_code.co_name`,
`inspect.stack()` and `warnings.warn` see from inside, and the printed text.
Every case has a graph break before the point it observes (checked), so what
it sees comes from a break or resume function (Note [Resume trampoline] in
csrc/lib/capture/EvalFrameImpl.inc).
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import subprocess
import sys
import traceback
import warnings

import pytest
import torch

SEEN: list = []  # what the cases observe from inside


def helper_raises(y):
    raise RuntimeError(f"helper got {tuple(y.shape)}")


def raise_after_print(x):
    y = x * 2
    print("before", y.shape)
    z = y + 1
    raise ValueError(f"bad value {float(z.sum()) > -1e9}")


def name_after_break(x):
    y = x.sin()
    print("step")
    SEEN.append(sys._getframe().f_code.co_name)
    SEEN.append(sys._getframe().f_code.co_qualname)
    SEEN.append([fi.function for fi in inspect.stack()[:2]])
    return y * 3


def helper_after_breaks(x):
    y = x + 1
    print("one")
    y = y * 2
    print("two")
    return helper_raises(y)


def raise_in_branch(x):
    y = x.cos()
    if y.sum() > -100:
        w = y - 1
        raise KeyError(f"branch {tuple(w.shape)}")
    return y


def warn_after_break(x):
    y = x.exp()
    print("warn next")
    warnings.warn("careful", UserWarning)
    SEEN.append(sys._getframe().f_code.co_name)
    return y


def frame_locals_at_raise(x):
    a = x * 2
    b = a.sum().item()  # a break: .item()
    c = a + b
    print("c", c.shape)
    raise IndexError(f"{len(c)}")


def raise_in_for_loop(x):
    y = x * 1
    for i in range(3):
        y = y + i + x  # uses x: a loop body's frame has the locals the body uses only
        print("iter", i)
        if i == 2:
            raise ValueError(f"loop {i} {tuple(y.shape)}")
    return y


def helper_in_while_loop(x):
    y = x.sin()
    n = 0
    while n < 3:
        print("n", n)
        y = y * 2
        n += 1
        if n == 2:
            helper_raises(y)
    return y


CASES = ["raise_after_print", "name_after_break", "helper_after_breaks", "raise_in_branch", "warn_after_break",
         "frame_locals_at_raise", "raise_in_for_loop", "helper_in_while_loop"]


def child(case: str, mode: str) -> None:
    """Runs `case` once, eagerly or captured; prints a JSON report as the last line."""
    torch.manual_seed(0)
    fn = globals()[case]
    x = torch.randn(3, 4)
    if mode == "jit":
        from xacc.jit import capture
        ctx = capture()
    else:
        ctx = contextlib.nullcontext()
    report: dict = {"exc": None}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with ctx: fn(x)  # noqa: E701 - one line: the same traceback entry in both modes
        except Exception as e:  # noqa: BLE001 - the report compares it
            tb = e.__traceback__
            entries = [(os.path.basename(f.filename), f.lineno, f.name) for f in traceback.extract_tb(tb)]
            while tb.tb_next is not None:
                tb = tb.tb_next
            report["exc"] = [type(e).__name__, str(e), entries, sorted(tb.tb_frame.f_locals)]
    report["seen"] = SEEN
    report["warnings"] = [(os.path.basename(w.filename), w.lineno, str(w.message)) for w in caught]
    if mode == "jit":
        from xacc.jit import counters
        report["breaks"] = counters()["breaks"]
    print(json.dumps(report))


def run(case: str, mode: str) -> tuple[dict, str]:
    env = dict(os.environ)
    p = subprocess.run([sys.executable, __file__, case, mode], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    lines = p.stdout.rstrip("\n").split("\n")
    return json.loads(lines[-1]), "\n".join(lines[:-1])


@pytest.mark.parametrize("case", CASES)
def test_traceback_like_eager(case):
    eager, eager_out = run(case, "eager")
    got, got_out = run(case, "jit")
    assert got.pop("breaks") >= 1, "the case must go through a graph break"
    assert got == eager
    assert got_out == eager_out


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2])
