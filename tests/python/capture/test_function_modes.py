"""A TorchFunctionMode entered inside captured code (Note [Function modes in
the frame] in csrc/lib/capture/translate/TranslateModes.cpp): every torch call
in the block, at any inlining depth, goes to the mode's __torch_function__
with eager's func/types/args/kwargs, the mode popped while it runs. It was a
GB002 break at the mode's construction (TorchFunctionMode.__init__ is torch's).
Every case runs through the harness (values, types, identity) against eager."""

import torch
from torch.overrides import TorchFunctionMode

from harness import check, r
from xacc._src.capture import convert


def _codes():
    return [b.code for ev in convert.EVENTS for b in ev.breaks]


def _stack():
    return torch._C._len_torch_function_stack()


class Counting(TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.names = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", "?"))
        return func(*args, **(kwargs or {}))


def helper(t):
    return torch.relu(t) * 2


def counted(x):
    y = x + 1
    with Counting() as m:
        z = helper(y).sum(0)
        n = z.shape[0]
        w = z[1:] - len(z)
    return w + n, m.names


def test_counting_mode_sees_every_call():
    check(counted, r(3, 4), graphs=1, breaks=0)
    assert _stack() == 0


class SwapAddSub(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.add or func is torch.add:
            func = torch.sub
        return func(*args, **(kwargs or {}))


def rewritten(x, y):
    a = x + y
    with SwapAddSub():
        b = x + y
        c = torch.add(x, y, alpha=2)
    return a, b, c


def test_rewriting_mode():
    check(rewritten, lambda i: (torch.randn(3), torch.randn(3)), graphs=1, breaks=0)


class Outer(TorchFunctionMode):
    def __init__(self, log):
        super().__init__()
        self.log = log

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append("outer")
        return func(*args, **(kwargs or {}))


class Inner(Outer):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.log.append("inner")
        out = func(*args, **(kwargs or {}))
        return out * 2 if isinstance(out, torch.Tensor) else out


def nested(x):
    log = []
    with Outer(log):
        with Inner(log):
            y = x.exp()
        z = y + 1
    return z, log


def test_nested_modes_run_top_first():
    check(nested, r(4), graphs=1, breaks=0)


class GetItemToIndex(TorchFunctionMode):
    # Written the way torch._dynamo's TransformGetItemToIndex is: tensor
    # indices become aten.index, which vmap can batch.
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func == torch.Tensor.__getitem__:
            idx = args[1] if isinstance(args[1], tuple) else (args[1],)
            if all(isinstance(i, torch.Tensor) for i in idx):
                return torch.ops.aten.index(args[0], list(idx))
        return func(*args, **(kwargs or {}))


def mask(pad, q_len):
    window = 3

    def f(b, h, q, kv):
        return (kv <= q) & (q - kv < window) & pad[b, kv]

    for dims in ((None, None, None, 0), (None, None, 0, None), (None, 0, None, None), (0, None, None, None)):
        f = torch.vmap(f, in_dims=dims, out_dims=0)
    with GetItemToIndex():
        out = f(torch.arange(pad.shape[0]), torch.arange(1), torch.arange(q_len), torch.arange(pad.shape[1]))
    return out


def test_mask_pattern_under_a_mode_and_vmap():
    make = lambda i: (torch.rand(2 + i % 2, 5) > 0.3, 5)  # noqa: E731
    c = check(mask, make, max_recompiles=1)
    assert c["breaks"] == 0, (c, _codes())
    assert _stack() == 0 and torch._C._functorch.get_dynamic_layer_stack_depth() == 0


def broken_inside(x):
    with Counting() as m:
        y = x * 2
        print("inside")  # a break in the block: the frame runs in Python
        z = y + 1
    return z, m.names


def test_break_inside_the_block_runs_in_python():
    check(broken_inside, r(3), max_recompiles=1)
    assert _stack() == 0


class Reads(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor) and out.dtype == torch.float32:
            return out + 0.5  # the mode's own calls do not reach it again
        return out


def through_helper(x):
    with Reads():
        return helper(x), x.dtype, x.ndim


def test_mode_result_replaces_the_call():
    check(through_helper, r(2, 3), graphs=1, breaks=0)
