"""The reference of `torch.autograd.Function.apply` where autograd records
nothing: grad mode off, or no tensor argument that requires grad.

# Note [autograd.Function without autograd]
`Fn.apply` (Function.apply, a classmethod in a torch module) used to be
recorded as one call of a torch function: with an argument that is not a
tensor, number, tuple or list (a ModuleList of layers) that broke (GB018) and
its `forward`, run by Python, broke again at `ctx.save_for_backward` (a C
descriptor on the ctx, GB007); a list argument forward appended to was a
copy (the caller's list stayed empty); and with an input requiring grad the
recorded call lost the Function's own backward. The translator now inlines
the reference below for every call of a method whose function is
Function.apply (TranslateCalls.cpp, callObject). When autograd records nothing, `_FunctionBase.apply` (the C function behind
`super().apply` in Function.apply, torch/csrc/autograd/python_function.cpp)
is, for what a program can see:

  * a fresh ctx, and `cls.forward(ctx, *args)` called with grad mode off;
  * each tensor output that is one of the input tensors (by identity) and not
    marked dirty comes back as `t.view_as(t)` made with grad mode off (a new
    tensor object sharing the input's storage); every other output, and a
    non-tuple result, as forward returned it;
  * the ctx is then dropped: what forward saved on it is never read, since
    no backward can run.

The reference below runs exactly that, inlined, so forward's tensor ops,
module calls and list appends are traced like any other code. Its ctx is a
fresh `FunctionCtx` subclass (plain Python: save_for_backward,
mark_non_differentiable, set_materialize_grads store attributes as the real
ctx's do) whose `needs_input_grad`, `to_save`, `dirty_tensors`, `non_differentiable`,
`saved_for_forward`, `saved_tensors` and `materialize_grads` read as the real
ctx's do in forward here (all False; None until set; what
save_for_forward stored, else (); not readable). What it does not model is a graph
break (query "unmodelled_call", GB002), after which Python runs the original:
an input that requires grad with grad mode on (autograd would record a
node), a Function with its own setup_context, keyword arguments, functorch
transforms active, `ctx.mark_dirty` (the real apply bumps the dirty inputs'
version counters), and an output that requires grad (the real apply
detaches it). The ctx's class is the stand-in's, not `cls._backward_cls`,
and its attributes are only those above: the translator answers no
`type(ctx)`, `isinstance(ctx, ...)` or `hasattr(ctx, ...)` of a polyfill's
class (Note [Modelled library objects]) and a read of an attribute only the
C ctx has (`metadata`, `next_functions`) is not found on it: a break, and
Python runs the real apply (test_autograd_ctx_fidelity.py).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.autograd.function import Function, FunctionCtx, _SingleLevelFunction

from xacc._src.capture.polyfill_registry import _reference
from xacc._src.capture.polyfills_hops import _unmodelled_call


class FunctionApplyCtx(FunctionCtx):
    """The ctx forward gets from the reference below (see the Note)."""

    def __init__(self, n_args: int) -> None:
        self.needs_input_grad = (False,) * n_args
        # the real ctx's unset slots read None
        self.to_save = self.dirty_tensors = self.non_differentiable = self.saved_for_forward = None

    @property
    def saved_tensors(self) -> tuple:
        # The real ctx's getter answers what save_for_forward stored, else the
        # saved variables: none before forward returns (save_for_backward
        # only sets to_save).
        if self.saved_for_forward is not None:
            return self.saved_for_forward
        return ()

    @property
    def materialize_grads(self) -> bool:
        raise AttributeError("attribute 'materialize_grads' of 'torch._C._FunctionBase' objects is not readable")

    @materialize_grads.setter
    def materialize_grads(self, value: bool) -> None:
        self._materialize_grads = value


@_reference(Function.apply.__func__)
def function_apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
    if kwargs:
        _unmodelled_call("autograd.Function.apply with keyword arguments")
    if cls.setup_context != _SingleLevelFunction.setup_context:  # as _is_setup_context_defined
        _unmodelled_call("autograd.Function.apply of a Function with its own setup_context")
    if torch._C._are_functorch_transforms_active():
        _unmodelled_call("autograd.Function.apply under functorch transforms")
    if torch.is_grad_enabled():
        for a in args:
            if isinstance(a, torch.Tensor) and a.requires_grad:
                _unmodelled_call("autograd.Function.apply on a tensor that requires grad")
    ctx = FunctionApplyCtx(len(args))
    with torch.no_grad():
        out = cls.forward(ctx, *args)
    if ctx.dirty_tensors is not None:
        _unmodelled_call("autograd.Function.apply whose forward marks inputs dirty")
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    result = []
    for o in outs:
        if isinstance(o, torch.Tensor):
            if o.requires_grad:
                _unmodelled_call("autograd.Function.apply returning a tensor that requires grad")
            for a in args:
                if o is a:
                    with torch.no_grad():
                        o = o.view_as(o)
                    break
        result.append(o)
    return result[0] if single else tuple(result)
