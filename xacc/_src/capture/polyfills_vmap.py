"""The reference of `torch.vmap` over a function the translator traces.

Note [Batched metas]
~~~~~~~~~~~~~~~~~~~~
`torch.vmap(func, in_dims, out_dims)(*args)` runs `func` once on logical
per-example tensors; functorch makes them BatchedTensors (a physical tensor
with one more dim, its batch dim, at a vmap level), and every op on one runs
its batching rule, which calls the ATen op on the physical tensors. The
reference below does what torch/_functorch/vmap.py does for the forms it
models, on the meta twins, through the same functorch primitives:
`_vmap_increment_nesting` opens a level, `_add_batch_dim` wraps each batched
argument's meta, `func` is traced by the translator on those BatchedTensor
metas, and `_remove_batch_dim` unwraps its results, moving the batch dim to
`out_dims`. The batching rules run here, at capture time, so the ATen ops that
reach the recorder's dispatch mode are the physical ops eager runs, on
physical metas, and they are recorded like any other (recorder.py). A
BatchedTensor meta itself is never bound to a graph value: used as an
argument it is unwrapped by functorch, and anything else that needs its value
(a graph output, a value live at a break, a replayed write) finds it unbound
and breaks (Host.value_of), where eager would have let a BatchedTensor escape.

The levels this opens stay open while the translator traces `func`; a break
inside it stops the translation with them open, so every translation runs in
`functorch_levels_restored` (convert.py), which undoes the dynamic layer
stack to its depth at the start. Size reads of a BatchedTensor are not
matched against the shadow run (Note [Size expressions] names physical dims),
so a frame that vmaps compiles with static shapes (Recorder.call).

Not modelled, a GB002 break (then eager runs, with its own errors): in_dims
other than an int, None or a flat tuple of them; batched arguments that are not
tensors; kwargs given to vmap's chunk_size; randomness other than 'error'
(random ops under vmap would draw per the randomness flag, which the graph does
not replay); out_dims other than an int; results other than a tensor or a flat
tuple or list of tensors.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from .polyfill_registry import _reference
from .polyfills_hops import _unmodelled_call

_F = torch._C._functorch
# The functorch calls the reference makes; Recorder.call gives them static shapes.
VMAP_PRIMITIVES = (_F._vmap_increment_nesting, _F._add_batch_dim)


def functorch_depth() -> int:
    return _F.get_dynamic_layer_stack_depth()


def restore_functorch_depth(depth: int) -> None:
    """Closes the vmap levels a translation left open (Note [Batched metas])."""
    if _F.get_dynamic_layer_stack_depth() > depth:
        _F.pop_dynamic_layer_stack_and_undo_to_depth(depth)


class _Vmapped:
    """What `torch.vmap(func, ...)` returns, called as eager's wrapper is."""

    def __init__(self, func: Callable, in_dims: Any, out_dims: Any) -> None:
        self._xacc_func = func
        self._xacc_in_dims = in_dims
        self._xacc_out_dims = out_dims

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        in_dims = self._xacc_in_dims
        out_dims = self._xacc_out_dims
        if type(in_dims) is tuple:
            if len(in_dims) != len(args):
                _unmodelled_call("torch.vmap with in_dims not matching the arguments (eager raises)")
            dims = list(in_dims)
        else:
            dims = [in_dims for _ in args]
        # The checks and reads of torch/_functorch/vmap.py's _process_batched_inputs
        # and _validate_and_get_batch_size, in its order: a TorchFunctionMode the
        # frame entered sees the same Tensor.dim/Tensor.size calls as in eager.
        for i in range(len(dims)):
            a, d = args[i], dims[i]
            if d is not None and type(d) is not int:
                _unmodelled_call("torch.vmap with an in_dim that is not an int or None")
            if d is not None and not isinstance(a, torch.Tensor):
                _unmodelled_call("torch.vmap of an argument that is not a tensor with an int in_dim")
            if d is not None and (d < -a.dim() or d >= a.dim()):
                _unmodelled_call("torch.vmap with an in_dim out of range (eager raises)")
            if d is not None and d < 0:
                dims[i] = d % a.dim()
        sizes = [a.size(d) for d, a in zip(dims, args) if d is not None]
        if len(sizes) == 0:
            _unmodelled_call("torch.vmap with no batched tensor argument (eager raises)")
        if any(n != sizes[0] for n in sizes):
            _unmodelled_call("torch.vmap over batch dims of different sizes (eager raises)")
        batch_size = sizes[0]
        level = _F._vmap_increment_nesting(batch_size, "error")
        batched = []
        for a, d in zip(args, dims):
            batched.append(a if d is None else _F._add_batch_dim(a, d, level))
        out = self._xacc_func(*batched, **kwargs)
        if isinstance(out, torch.Tensor):
            r = _F._remove_batch_dim(out, level, batch_size, out_dims)
        elif type(out) is tuple or type(out) is list:
            items = []
            for o in out:
                if not isinstance(o, torch.Tensor):
                    _unmodelled_call("torch.vmap of a function returning other than tensors")
                items.append(_F._remove_batch_dim(o, level, batch_size, out_dims))
            r = tuple(items) if type(out) is tuple else items
        else:
            _unmodelled_call("torch.vmap of a function returning other than tensors")
        _F._vmap_decrement_nesting()
        return r


@_reference(torch.vmap)
def vmap(func: Callable, in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: Any = None) -> _Vmapped:
    if randomness != "error" or chunk_size is not None:
        _unmodelled_call("torch.vmap with randomness other than 'error', or a chunk_size")
    if type(out_dims) is not int:
        _unmodelled_call("torch.vmap with out_dims other than an int")
    if not (in_dims is None or type(in_dims) is int or (
            type(in_dims) is tuple and all(d is None or type(d) is int for d in in_dims))):
        _unmodelled_call("torch.vmap with in_dims other than an int, None or a flat tuple of them")
    return _Vmapped(func, in_dims, out_dims)
