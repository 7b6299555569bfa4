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

`max_depth` computes each code's deepest stack by walking its bytecode (with
`dis.stack_effect`), so the check covers every path of the code generator, not
only the call that went wrong.
"""

from __future__ import annotations

import dataclasses
import dis
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
import torch

import xacc
from xacc import _C
from xacc.jit import jit

C = _C.capture
_ENDS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD", "JUMP_BACKWARD",
         "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"}


def max_depth(code: types.CodeType) -> int:
    """The deepest value stack any path through `code` reaches."""
    insts = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
    index = {ins.offset: k for k, ins in enumerate(insts)}
    depth_at = {0: 0}
    for entry in dis._parse_exception_table(code) if code.co_exceptiontable else ():  # noqa: SLF001
        depth_at.setdefault(entry.target, entry.depth + 1 + int(entry.lasti))
    work = list(depth_at)
    best = 0
    while work:
        k = index[work.pop()]
        d = depth_at[insts[k].offset]
        while k < len(insts):
            ins = insts[k]
            arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
            if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
                taken = d + dis.stack_effect(ins.opcode, arg, jump=True)
                best = max(best, taken)
                if depth_at.get(ins.argval, -1) < taken:
                    depth_at[ins.argval] = taken
                    work.append(ins.argval)
            if ins.opname in _ENDS:
                break
            d += dis.stack_effect(ins.opcode, arg, jump=False)
            best = max(best, d)
            k += 1
            if k < len(insts):
                if depth_at.get(insts[k].offset, -1) >= d:
                    break
                depth_at[insts[k].offset] = d
    return best


def generated_codes(code: types.CodeType, seen: set | None = None):
    """The break functions xacc made for `code`, and those of the resume
    functions they call, with the code objects nested in them."""
    seen = set() if seen is None else seen
    if id(code) in seen:
        return
    seen.add(id(code))
    for info in C.entries(code):
        made = info["code"]
        if made is None:
            continue
        stack = [made]
        while stack:
            c = stack.pop()
            yield c
            for k in c.co_consts:
                if isinstance(k, types.CodeType):
                    stack.append(k)
                    yield from generated_codes(k, seen)  # a resume function's own entries


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
    "break_then_return": "print('', end='')\nreturn y + 1\n",
    "break_in_expression": "z = y * len(str(print('', end='')))\nreturn Out(z)\n",
}


@pytest.mark.parametrize("n", [0, 20, 60])
@pytest.mark.parametrize("body", sorted(BODIES))
def test_generated_code_stack_fits(n, body):
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
    for c in codes:
        need = max_depth(c)
        assert need <= c.co_stacksize, (f"{c.co_qualname} (argcount {c.co_argcount}) reaches stack depth {need} "
                                        f"but has co_stacksize {c.co_stacksize}")


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
