"""A break that lands between a call's names and the call itself. The
translator's step budget (kMaxSteps in csrc/lib/capture/translate/Translator.h,
200000 instructions: GB016) can stop a frame at any instruction, also at 3.11's
PRECALL after KW_NAMES. The split copied PRECALL alone into the break function
and resumed at the CALL with a short stack: GB020 "stack underflow at CALL" and
then a segmentation fault in the generated code (on main before this test).
KW_NAMES and PRECALL are no split points now (CodegenSplit.cpp notBreakable):
the frame runs in Python there, eager's value. Run in a child process, since
the failure it guards against is a crash."""

import dis
import subprocess
import sys
import textwrap

import pytest

STEPS = 200000  # kMaxSteps


def _source(pad: int) -> str:
    return "def big(x):\n" + "    x = x + 0\n" * pad + \
        "    x = torch.clamp(x + 1, max=100000.0)\n" * (STEPS // 8 + 500) + "    return x\n"


def _pad_stopping_at(opname: str) -> int | None:
    for pad in range(10):
        ns: dict = {}
        exec(compile(_source(pad), "<big>", "exec"), ns)
        ins = list(dis.get_instructions(ns["big"]))
        if ins[STEPS].opname == opname:
            return pad
    return None


# The instruction that takes a keyword call's names, one 200000-step run per
# version: 3.11's PRECALL (after KW_NAMES), 3.12's CALL (after KW_NAMES: a split
# there must not lose the names), 3.13's CALL_KW.
@pytest.mark.parametrize("opname", ["PRECALL", "CALL", "CALL_KW"])
def test_budget_break_inside_a_call_with_keywords(tmp_path, opname):
    if opname == "CALL" and sys.version_info < (3, 12):
        pytest.skip("3.11's CALL follows PRECALL, the PRECALL case")
    pad = _pad_stopping_at(opname)
    if pad is None:
        pytest.skip(f"no {opname} at the budget's end on this version")
    child = textwrap.dedent(f"""
        import torch
        from xacc.jit import jit, counters
        src = open({str(tmp_path / "big.py")!r}).read()
        ns = {{"torch": torch}}
        exec(compile(src, "<big>", "exec"), ns)
        e = ns["big"](torch.zeros(1, dtype=torch.float64))
        j = jit(ns["big"])(torch.zeros(1, dtype=torch.float64))
        print(e.item(), j.item(), counters()["internal_errors"])
    """)
    (tmp_path / "big.py").write_text(_source(pad))
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    e, j, internal = r.stdout.split()
    assert e == j and internal == "0", r.stdout
