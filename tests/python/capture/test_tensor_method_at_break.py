"""A tensor's method on the stack at a break: `(x * 2).to(helper(x))` where
`helper` breaks while the bound method `t.to` waits on the stack. The resume
function receives the method object; it is modelled as the method of its
tensor `__self__` (a TensorMethod, guarded by type and name, Translator::wrap).
Before, it was guarded by equality, which compares the bound tensor (a new one
at every call): the resume function recompiled at every call and broke on the
call (GB002 Tensor.to); transformers' `.to(self.device)` in Idefics3Model."""

from __future__ import annotations

import torch

from harness import compare_call
from xacc._src.capture import convert
from xacc.jit import counters, jit


def dtype_of(x):
    print("reading the dtype")
    return x.dtype


def cast_after_break(x):
    return (x * 2).to(dtype_of(x)) + 1


def test_method_on_the_stack_survives_a_break_without_recompiles():
    jf = jit(cast_after_break)
    for i in range(4):
        compare_call(cast_after_break, jf, (torch.randn(3),))
    c = counters()
    assert c["recompiles"] == 0 and c["internal_errors"] == 0, c
    codes = [b.code for e in convert.EVENTS for b in e.breaks]
    assert "GB002" not in codes, codes


def scale_after_break(x, y):
    return x.mul(dtype_of(x) is torch.float32 and y.sum())


def test_method_of_another_tensor_uses_that_tensor():
    # The bound tensor differs per call (another argument): the method is
    # called on this call's tensor, never the first call's.
    jf = jit(scale_after_break)
    for n in (1.0, 2.0, 3.0):
        compare_call(scale_after_break, jf, (torch.full((3,), n), torch.ones(2) * n))
    assert counters()["internal_errors"] == 0, counters()
