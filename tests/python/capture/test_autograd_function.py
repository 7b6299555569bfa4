"""Note [autograd.Function without autograd] (polyfills_autograd.py):
`Fn.apply(...)` where autograd records nothing runs the Function's forward
inlined, with a fresh ctx and grad mode off. Before, apply was recorded as one
call of a torch function: an argument that is not a tensor or number (a
ModuleList) broke (GB018) and forward broke again at `ctx.save_for_backward`
(GB007); a list forward appended to was a copy, so the caller's list stayed
empty (a silently wrong result); and with an input that requires grad the
recorded call lost the Function's own backward (the gradient was autograd's
of the forward's ops). Now the first two are captured and match eager, and
the last breaks, so Python runs the real apply and its backward."""

import collections

import pytest
import torch

from harness import check

from xacc.jit import counters, jit


class Layers(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, layers, scale):
        for layer in layers:
            x = layer(x)
        ctx.save_for_backward(x.detach())
        ctx.layers = layers
        ctx.scale = scale
        return torch.cat([x * scale, x], dim=-1)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("not under no_grad")


LAYERS = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 4)])


def with_layers(x):
    with torch.no_grad():
        return Layers.apply(x + 1, LAYERS, 3) * 2


def test_forward_with_a_module_list_and_ctx_writes_is_captured():
    check(with_layers, lambda i: (torch.randn(2, 4),), graphs=1, breaks=0)


class Appends(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, acc):
        acc.append(x * 3)
        ctx.mark_non_differentiable(x)
        return x + 1, len(acc)

    @staticmethod
    def backward(ctx, g, n):
        return g, None


def appends(x):
    acc = [x]
    with torch.no_grad():
        y, n = Appends.apply(x, acc)
    return y, n, acc


def test_forward_appends_to_the_callers_list():
    check(appends, lambda i: (torch.randn(3),), graphs=1, breaks=0)


Pair = collections.namedtuple("Pair", "a b")


class ReturnsInput(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        assert ctx.needs_input_grad == (False, False) and ctx.saved_tensors == ()
        assert ctx.to_save is None and ctx.dirty_tensors is None and ctx.non_differentiable is None
        return Pair(x, y * 2)

    @staticmethod
    def backward(ctx, ga, gb):
        return ga, gb * 2


def returns_input(x, y):
    with torch.no_grad():
        out = ReturnsInput.apply(x, y)
    # an input returned as is comes back as a new tensor viewing it; a named
    # tuple as a plain tuple
    return out, out[0] is x, out[0]._base is x, type(out)


def test_input_returned_comes_back_as_a_view_and_tuples_are_plain():
    check(returns_input, lambda i: (torch.randn(3), torch.randn(3)), graphs=1, breaks=0)
    assert returns_input(torch.ones(1), torch.ones(1))[1:] == (False, True, tuple)


class Dirty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def dirty(x):
    with torch.no_grad():
        return Dirty.apply(x * 1) * 2


def test_mark_dirty_is_not_modelled():
    c = check(dirty, lambda i: (torch.randn(3),))
    assert c["breaks"] >= 1, c


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2  # its backward says 2 * x: not the derivative of forward's ops

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 2 * x


def square(x):
    return Square.apply(x + 1) + 1


class ReadsMaterialize(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, ctx.materialize_grads  # write-only on the real ctx: AttributeError

    @staticmethod
    def backward(ctx, g, _):
        return g


def reads_materialize(x):
    with torch.no_grad():
        return ReadsMaterialize.apply(x + 1)


def test_ctx_attribute_the_real_ctx_cannot_read_raises_the_same_error():
    check(reads_materialize, lambda i: (torch.randn(3),))



class SquareOwnApply(Square):
    @classmethod
    def apply(cls, *args):
        return super().apply(*args)


def square_own_apply(x):
    return SquareOwnApply.apply(x + 1) + 1


@pytest.mark.parametrize("fn", [square, square_own_apply], ids=["apply", "apply_override_calling_super"])
def test_input_that_requires_grad_runs_the_functions_own_backward(fn):
    x = torch.randn(2, 4, requires_grad=True)
    fn(x).sum().backward()
    want, x.grad = x.grad.clone(), None
    f = jit(fn, device="cpu")
    for _ in range(2):
        f(x).sum().backward()
        assert torch.allclose(x.grad, want), (x.grad, want)
        x.grad = None
    assert counters()["breaks"] >= 1
