"""XJIT on each CPython version (issue 20; Note [Bytecode versions] in
csrc/lib/capture/translate/Bytecode.h and BytecodeFacts.h).

* 3.11: everything is modelled; a frame with a break is split by a break function.
* 3.12: the opcode handlers model its bytecode, and break, resume and loop-body
  functions are generated in its bytecode (Note [Codegen versions] in
  csrc/lib/capture/translate/CodegenImpl.h): the same graphs and breaks as 3.11.
* 3.13: the opcode handlers model its bytecode (its fused and split opcodes are
  modelled as the instructions they stand for, TranslateOps313.cpp), and break,
  resume and loop-body functions are generated in its bytecode (the call's NULL
  above the callable, TO_BOOL before a truth jump, END_FOR and POP_TOP after a
  loop, closures through SET_FUNCTION_ATTRIBUTE).
* a version whose bytecode is not modelled: every frame runs as plain Python with
  GB001 "not supported yet", never a crash or another result.
"""

import dis
import sys

import pytest
import torch

import xacc

VERSION = sys.version_info[:2]
TRANSLATED = VERSION in ((3, 11), (3, 12), (3, 13))
SPLITS = VERSION in ((3, 11), (3, 12), (3, 13))


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


class CodeRecorder:
    """A file for print(): write() notes the code object of the frame that
    called print (print is C: the frame below write is the caller's)."""

    def __init__(self):
        self.codes = []

    def write(self, text):
        self.codes.append(sys._getframe(1).f_code)

    def flush(self):
        pass


def assert_generated(codes, fn):
    # Code made by the break machinery (not fn's own), which CPython's own
    # disassembler decodes, named as the user's function.
    assert codes, "print was not called"
    for code in codes:
        assert code is not fn.__code__
        assert code.co_qualname == fn.__qualname__
        ops = [i.opname for i in dis.get_instructions(code)]
        assert ops and "<" not in " ".join(ops), ops


def make_closure(k):
    def with_free_vars(x, out):
        y = x * k
        print("k", k, file=out)  # break: resume code of a frame with a free variable
        return y + k

    return with_free_vars


@pytest.mark.skipif(not SPLITS, reason="break functions are generated on 3.11-3.13")
def test_break_with_free_variables():
    fn = make_closure(3.0)
    x = torch.randn(4)
    rec = CodeRecorder()
    got = xacc.jit(fn)(x, rec)
    assert torch.equal(got, fn(x, CodeRecorder()))
    assert_generated(rec.codes, fn)
    out = xacc.explain(fn)(x, CodeRecorder())
    assert out.graph_count == 2 and [b.code for b in out.break_reasons] == ["GB003"], str(out)


def fused_in_loop(x, n, out):
    a, b = x, x + 1
    for i in range(n):
        a, b = b, a + b  # STORE_FAST_STORE_FAST, LOAD_FAST_LOAD_FAST (3.13)
        print("i", i, sep="=", file=out)  # CALL_KW: a break inside the loop body
        if i == 3:
            break
    return a - b, i


@pytest.mark.skipif(not SPLITS, reason="loop bodies are generated on 3.11-3.13")
@pytest.mark.parametrize("n", [2, 6])
def test_break_in_loop_with_fused_locals(n):
    x = torch.randn(3)
    rec, ref = CodeRecorder(), CodeRecorder()
    got = xacc.jit(fused_in_loop)(x, n, rec)
    want = fused_in_loop(x, n, ref)
    assert torch.equal(got[0], want[0]) and got[1] == want[1]
    assert len(rec.codes) == len(ref.codes)
    assert_generated(rec.codes, fused_in_loop)
    out = xacc.explain(fused_in_loop)(x, n, CodeRecorder())
    assert out.graph_count >= 2 and {b.code for b in out.break_reasons} == {"GB003"}, str(out)


def tensor_branch(x):
    y = x * 2
    if y.sum() > 0:  # a tensor's truth: a break at the conditional jump
        return y + 1
    return y - 1


@pytest.mark.skipif(not SPLITS, reason="break functions are generated on 3.11-3.13")
def test_break_at_tensor_condition():
    for x in (torch.ones(3), -torch.ones(3)):
        assert torch.equal(xacc.jit(tensor_branch)(x), tensor_branch(x))
    # A ctrl.if region where regions are modelled (3.11, 3.12), else a split
    # at the jump: never the whole frame in Python (GB001).
    out = xacc.explain(tensor_branch)(torch.ones(3))
    assert out.graph_count >= 1 and "GB001" not in {b.code for b in out.break_reasons}, str(out)


def except_then_break(x, d):
    y = x.cos()
    try:
        k = d["missing"]  # KeyError: the handler runs
    except KeyError:
        k = 2.0
    # 3.13 compiles the handler's end as a JUMP_BACKWARD_NO_INTERRUPT back to here.
    print("after", k)  # a break after the try: no loop around it
    return y * k + x.sum(), d


def test_break_after_except_handler_is_not_in_a_loop(capsys):
    """A backward jump from an `except` handler to the code after its `try` is no
    loop (Note [Loops are cycles] in Bytecode.cpp): the break after it splits the
    frame (GB003) like on 3.11, where 3.13 took it for a break inside a loop
    (GB015) and ran the whole frame as plain Python."""
    x, d = torch.randn(4), {"present": 1}
    got = xacc.jit(except_then_break)(x, d)
    assert capsys.readouterr().out == "after 2.0\n"
    want = except_then_break(x, d)
    assert capsys.readouterr().out == "after 2.0\n"
    assert torch.equal(got[0], want[0]) and got[1] is d
    out = xacc.explain(except_then_break)(x, d)
    capsys.readouterr()
    assert out.graph_count >= 1 and [b.code for b in out.break_reasons] == ["GB003"], str(out)
