"""The ctx forward gets when `Fn.apply` is inlined without autograd (Note
[autograd.Function without autograd] in polyfills_autograd.py) is a stand-in
of another class than the real one (`Fn._backward_cls`): what forward reads
of it (its type, isinstance, needs_input_grad, saved_tensors after a save,
materialize_grads, the attributes only the C ctx has) gives eager's values,
or breaks so Python runs the real apply. Never another value silently."""

import torch
from torch.autograd.function import BackwardCFunction, FunctionCtx

from harness import check


def run_no_grad(fn_cls):
    def f(x):
        with torch.no_grad():
            return fn_cls.apply(x + 1)

    return f


class TypeName(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, type(ctx).__name__, type(ctx) is TypeName._backward_cls

    @staticmethod
    def backward(ctx, g, *rest):
        return g


class IsInstance(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, isinstance(ctx, BackwardCFunction), isinstance(ctx, FunctionCtx), ctx.__class__.__name__

    @staticmethod
    def backward(ctx, g, *rest):
        return g


class NeedsGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.mark_non_differentiable(x)
        ctx.set_materialize_grads(False)
        return x * k, ctx.needs_input_grad, ctx.non_differentiable is not None, ctx.dirty_tensors

    @staticmethod
    def backward(ctx, g, *rest):
        return g, None


class SavedInForward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        before = ctx.saved_tensors
        ctx.save_for_forward(x * 3)
        after = ctx.saved_tensors
        return x + 1, before, after, ctx.saved_for_forward, len(ctx.to_save)

    @staticmethod
    def backward(ctx, g, *rest):
        return g


class COnly(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.metadata["k"] = 1
        return x + 1, ctx.metadata, ctx.next_functions, ctx._materialize_non_diff_grads

    @staticmethod
    def backward(ctx, g, *rest):
        return g


class HasName(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1, hasattr(ctx, "name"), hasattr(ctx, "register_hook")

    @staticmethod
    def backward(ctx, g, *rest):
        return g


def test_type_of_ctx():
    check(run_no_grad(TypeName), lambda i: (torch.randn(3),))


def test_isinstance_of_ctx():
    check(run_no_grad(IsInstance), lambda i: (torch.randn(3),))


def test_needs_input_grad_and_marks():
    def f(x):
        with torch.no_grad():
            return NeedsGrad.apply(x + 1, 3)

    check(f, lambda i: (torch.randn(3),))


def test_saved_tensors_read_in_forward():
    check(run_no_grad(SavedInForward), lambda i: (torch.randn(3),))


def test_attributes_only_the_c_ctx_has():
    check(run_no_grad(COnly), lambda i: (torch.randn(3),))


def test_hasattr_on_ctx():
    check(run_no_grad(HasName), lambda i: (torch.randn(3),))
