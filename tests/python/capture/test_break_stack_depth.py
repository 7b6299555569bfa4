"""The generated code's co_stacksize holds its deepest stack.

CPython sizes a frame from co_stacksize and pushes the next frame right after
it; it never checks the value stack against it. A break function whose graph
call (NULL, the GraphFunction and one argument per parameter) is deeper than
its co_stacksize writes past its frame, and a Python frame pushed while the
graph's inputs are read (a class's own `__getattribute__`, a property) lands on
those values: the CALL then releases the pushed frame's function instead of its
own arguments, a reference that was never taken (a later crash or a freed
function reused; first seen as FastSpeech2Conformer's
`PreTrainedConfig.__getattribute__` losing a reference per call).

`stack_depth.max_depth` computes each code's deepest stack by walking its
bytecode with `dis.stack_effect`, independently of the C++ walk the code
generators set co_stacksize from (Note [Stack depth by construction]): the two
must agree exactly, so a depth the generators get wrong in either direction
fails here, on every ending a break function has.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import xacc
from stack_depth import C, generated_codes, violations
from xacc.jit import jit


class Cfg:
    """A plain configuration object: nothing runs Python code while the graph's
    inputs are read, so an overflow shows in co_stacksize here without
    corrupting this process (the subprocess test below runs the corrupting case)."""

    def __init__(self):
        self.flag = True


@dataclasses.dataclass
class Out:
    y: torch.Tensor


def many_params(n: int, body: str):
    """`f(cfg, x, a0, ..., a{n-1})`: a prefix graph that reads `cfg.flag`, then `body`."""
    names = ", ".join(f"a{i}" for i in range(n))
    src = f"def f(cfg, x, {names}):\n    y = x * 2 if cfg.flag else x\n" + textwrap.indent(body, "    ")
    ns = {"Out": Out}
    exec(compile(src, f"<many_params:{n}>", "exec"), ns)  # noqa: S102
    return ns["f"]


BODIES = {
    # The return value is rebuilt by the break function: its only stack use
    # beyond the graph call is the (small) rebuild.
    "return_object": "return Out(y + 1)\n",
    # A copied instruction (the print call), then a resume function.
    "break_then_return": "print('', end='')\nreturn y + 1\n",
    "break_in_expression": "z = y * len(str(print('', end='')))\nreturn Out(z)\n",
    # A conditional jump on a value the graph computes: two resume functions.
    "branch": "if y.sum() > 0:\n    print('', end='')\n    return y + 1\nreturn y - 1\n",
    # A break inside a loop: the loop runs in the break function around a
    # loop-body function.
    "loop": "for i in range(3):\n    print('', end='')\n    y = y + i\nreturn Out(y)\n",
}


def kinds(codes) -> set[str]:
    return {"loop_body" if C.is_loop_body(c) else "resume" if C.is_resume(c) else "break" for c in codes}


@pytest.mark.parametrize("n", [0, 20, 60])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_generated_code_stack_is_exact(n, body):
    f = many_params(n, BODIES[body])
    args = (Cfg(), torch.ones(3), *range(n))
    expected = f(*args)
    got = jit(f)(*args)
    if isinstance(expected, Out):
        assert isinstance(got, Out)
        expected, got = expected.y, got.y
    torch.testing.assert_close(got, expected)
    codes = list(generated_codes(f.__code__))
    assert codes, "no break function was generated: the test no longer covers the graph call"
    want = {"return_object": {"break"}, "loop": {"break", "loop_body", "resume"}}.get(body, {"break", "resume"})
    assert want <= kinds(codes), f"{body}: generated {kinds(codes)}, the ending under test is not covered"
    wrong = [v for c in codes for v in violations(c)]
    assert not wrong, "\n".join(wrong)


SCRIPT = """
import dataclasses, sys, torch
from xacc.jit import jit

class Cfg:
    def __init__(self):
        self.flag = True
    def __getattribute__(self, key):
        return object.__getattribute__(self, key)

@dataclasses.dataclass
class Out:
    y: torch.Tensor

names = ", ".join(f"a{i}" for i in range(40))
ns = {"Out": Out}
exec(f"def f(cfg, x, {names}):\\n    y = x * 2 if cfg.flag else x\\n    return Out(y + 1)\\n", ns)
cf = jit(ns["f"])
getattribute = Cfg.__dict__["__getattribute__"]
cfg = Cfg()
before = sys.getrefcount(getattribute)
for _ in range(8):
    out = cf(cfg, torch.ones(3), *range(40))
    assert out.y.tolist() == [3.0, 3.0, 3.0], out
print(before, sys.getrefcount(getattribute))
"""


def test_getattribute_keeps_its_references(tmp_path):
    """The FastSpeech2Conformer symptom without transformers: the function of a
    class's own __getattribute__, read while a wide break function's graph call
    is on the stack, keeps its reference count (it lost one per call, then the
    process crashed). In a subprocess: on the broken code the process dies."""
    script = tmp_path / "getattribute_refs.py"
    script.write_text(SCRIPT)
    root = Path(xacc.__file__).resolve().parents[1]  # the checkout under test
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    before, after = map(int, r.stdout.split())
    assert after == before
