"""XJIT on each CPython version (issue 20; Note [Bytecode versions] in
csrc/lib/capture/translate/Bytecode.h and BytecodeFacts.h).

* 3.11: everything is modelled; a frame with a break is split by a break function.
* 3.12: the opcode handlers model its bytecode, and break, resume and loop-body
  functions are generated in its bytecode (Note [Codegen versions] in
  csrc/lib/capture/translate/CodegenImpl.h): the same graphs and breaks as 3.11.
* 3.13: the opcode handlers model its bytecode (its fused and split opcodes are
  modelled as the instructions they stand for, TranslateOps313.cpp); break functions
  are not generated yet, so a frame with a break runs as plain Python (GB001).
* a version whose bytecode is not modelled: every frame runs as plain Python with
  GB001 "not supported yet", never a crash or another result.
"""

import sys

import pytest
import torch

import xacc

VERSION = sys.version_info[:2]
TRANSLATED = VERSION in ((3, 11), (3, 12), (3, 13))
SPLITS = VERSION in ((3, 11), (3, 12))


def whole(x, y):
    z = torch.relu(x @ y) + 1
    if z.shape[0] > 1:  # a static size: Python control flow, no break
        z = z * 2
    w = z[1:3]  # BINARY_SLICE on 3.12
    n = None
    if n is None:  # POP_JUMP_IF_NOT_NONE on 3.12
        w = -w
    return w.sum(dim=0) + z.mean(), z.shape[0] >= 2


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, t, *, bias=0.0):
        return t * self.k + bias


def fused_opcodes(x, y, flag, n):
    # 3.13: LOAD_FAST_LOAD_FAST, STORE_FAST_STORE_FAST, CALL_KW, TO_BOOL,
    # CONVERT_VALUE/FORMAT_WITH_SPEC/FORMAT_SIMPLE, SET_FUNCTION_ATTRIBUTE
    # (defaults, keyword defaults, closure), CALL_FUNCTION_EX's [callable, NULL].
    a, b = y, x
    s = torch.sum(a @ b, dim=1, keepdim=True)
    if flag:
        s = s + 1
    if not flag:
        s = s - 100
    if f"{n!r:>3}|{n}" == "  2|2":
        s = s * 2

    def inner(u, k=3, *, m=2):
        return u * k * m + s.mean()

    parts = [s, inner(s)]
    out = torch.cat(*[parts], dim=0)
    w = Scaler(n).scale(out, bias=0.5)
    return w, out.shape[0] > 1 and flag


def test_fused_opcodes_whole_graph():
    x, y = torch.randn(3, 4), torch.randn(4, 3)
    got = xacc.jit(fused_opcodes)(x, y, True, 2)
    want = fused_opcodes(x, y, True, 2)
    assert torch.allclose(got[0], want[0]) and got[1] is want[1]
    out = xacc.explain(fused_opcodes)(x, y, False, 3)
    assert out.graph_count == 1 and out.graph_break_count == 0, str(out)


def with_break(x):
    y = x.sin()
    print("side effect")
    return y + 1


def test_whole_graph_equals_eager():
    x, y = torch.randn(4, 3), torch.randn(3, 5)
    got = xacc.jit(whole)(x, y)
    want = whole(x, y)
    assert torch.equal(got[0], want[0]) and got[1] is want[1]


def test_exceptions_equal_eager():
    x, y = torch.randn(4, 3), torch.randn(4, 5)
    with pytest.raises(RuntimeError) as eager:
        whole(x, y)
    with pytest.raises(RuntimeError) as jitted:
        xacc.jit(whole)(x, y)
    assert str(jitted.value) == str(eager.value)


def test_explain_whole_graph():
    out = xacc.explain(whole)(torch.randn(4, 3), torch.randn(3, 5))
    if TRANSLATED:
        assert out.graph_count == 1 and out.graph_break_count == 0, str(out)
        return
    assert out.graph_count == 0, str(out)
    assert [b.code for b in out.break_reasons] == ["GB001"], str(out)
    assert f"CPython 3.{VERSION[1]} bytecode not supported yet" in out.break_reasons[0].detail, str(out)


def test_break_equals_eager(capsys):
    x = torch.randn(5)
    got = xacc.jit(with_break)(x)
    assert capsys.readouterr().out == "side effect\n"
    assert torch.equal(got, with_break(x))


def test_explain_break():
    out = xacc.explain(with_break)(torch.randn(5))
    codes = [b.code for b in out.break_reasons]
    if SPLITS:
        assert out.graph_count >= 1 and codes == ["GB003"], str(out)
    elif TRANSLATED:
        # The break is found, then the frame runs as plain Python: no break function.
        assert out.graph_count == 0 and codes == ["GB003", "GB001"], str(out)
        assert f"break functions for CPython 3.{VERSION[1]} bytecode not generated yet" in \
            out.break_reasons[1].detail, str(out)
    else:
        assert out.graph_count == 0 and codes == ["GB001"], str(out)


def in_loop(x, n):
    for i in range(n):
        x = x * 2
        print("step", i)  # a break inside the loop: the body becomes a function of its own
        if i == 2:
            break
        x = x + i
    return x.sum()


def test_break_in_loop_equals_eager(capsys):
    x = torch.randn(4)
    got = xacc.jit(in_loop)(x, 5)
    jitted_out = capsys.readouterr().out
    want = in_loop(x, 5)
    assert capsys.readouterr().out == jitted_out == "step 0\nstep 1\nstep 2\n"
    assert torch.equal(got, want)


def test_explain_break_in_loop():
    out = xacc.explain(in_loop)(torch.randn(4), 5)
    codes = sorted({b.code for b in out.break_reasons})
    if SPLITS:
        # The loop is split at its header, its body captured per iteration.
        assert out.graph_count >= 2 and codes == ["GB003"], str(out)
    elif TRANSLATED:
        assert out.graph_count == 0 and "GB001" in codes, str(out)


def resume_raises(x):
    y = x + 1
    print("side effect")
    return y.view(7, 7)  # raises in the resume function


def test_traceback_after_break_names_the_function():
    x = torch.randn(5)
    with pytest.raises(RuntimeError) as eager:
        resume_raises(x)
    with pytest.raises(RuntimeError) as jitted:
        xacc.jit(resume_raises)(x)
    assert str(jitted.value) == str(eager.value)
    last_eager, last_jit = eager.traceback[-1], jitted.traceback[-1]
    assert last_jit.name == last_eager.name == "resume_raises"
    assert last_jit.lineno == last_eager.lineno
    assert last_jit.frame.code.raw.co_qualname == "resume_raises"
