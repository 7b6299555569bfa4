"""scaled_dot_product_attention recorded as the kernel eager runs.

Note [Attention as one node]: `F.scaled_dot_product_attention` is a
CompositeImplicitAutograd operator: it picks a backend from the tensors'
metadata and torch's global SDP flags, then calls that backend's operator.
The recorder's dispatch mode sits below that choice, and on meta tensors the
choice is always the math backend, so the call used to be recorded as its math
decomposition (a mask built from ones/tril/where, two bmm, `_safe_softmax`):
about 3x eager's time for a small causal attention, whose CPU kernel is one
fused flash-attention pass, and an output whose strides differ from eager's
when the query is not contiguous (the flash kernel lays its output out like
the query).

Here the choice is made as eager makes it: `torch._fused_sdp_choice` is asked
on CPU stand-ins with the sizes, strides and dtypes of the operands (its
answer depends on metadata and the global flags only). When it says flash
attention and nothing needs a gradient, the call is recorded as eager's path
through that backend: a bool mask converted to an additive float mask of the
query's dtype (0 where kept, -inf where masked: what the composite does before
calling the kernel), then one `aten._scaled_dot_product_flash_attention_for_cpu`
node, whose meta kernel gives eager's output strides. Executed, the node is
the kernel eager calls with the arguments eager gives it: the same bits
(tests/python/capture/test_sdpa_node.py checks a grid of masks, GQA, scales,
layouts and dtypes against eager with torch.equal).

Under grad mode with an operand that requires grad the node is recorded
too: the GIR autodiff (Note [Training graphs]) differentiates it with eager
autograd's own backward kernel,
`_scaled_dot_product_flash_attention_for_cpu_backward`, of the node's output
and logsumexp, so a training step's gradients are eager's bits (before, the
decomposition ran: other bits and about 3x the time). A mask that requires
grad and grouped-query heads keep the decomposition there.

Left to the previous path (the composite traced on meta: its math
decomposition): a choice other than flash (math: dropout, 3-d inputs, head
dims that differ), and the training cases above.
The choice is fixed at capture: disabling flash attention globally
(`torch.backends.cuda.enable_flash_sdp(False)`) after a graph was captured
does not reach that graph (the math path gives values within float rounding
of the flash kernel's).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

SDPA = torch.nn.functional.scaled_dot_product_attention
_FLASH = 1  # sdp::SDPBackend::flash_attention, what _fused_sdp_choice returns for it


def _params(query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
            is_causal: bool = False, scale: Any = None, enable_gqa: bool = False) -> tuple:
    return query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa


def _stand_in(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor with `t`'s sizes, strides, dtype and requires_grad (its
    values unused): the backend choice may depend on each."""
    return torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="cpu",
                               requires_grad=t.requires_grad and (t.is_floating_point() or t.is_complex()))


def _modes_pass_it_on() -> bool:
    """Whether every TorchFunctionMode on the stack hands the call on unchanged
    (xjit's device erasure does, for a call without device arguments). Any
    other mode, the function-mode probe included (Note [Function modes in the
    frame]), must see the call itself, as eager's would: the generic path."""
    if torch._C._len_torch_function_stack() == 0:
        return True
    from torch.overrides import _get_current_function_mode_stack

    from xacc._src.capture.device import EraseDevice
    return all(type(m) is EraseDevice for m in _get_current_function_mode_stack())


def flash_call(args: tuple, kwargs: dict) -> Callable[[], torch.Tensor] | None:
    """For a call `SDPA(*args, **kwargs)` on meta tensors: a function making
    eager's flash-attention path (to be run under the recording mode), or None
    when the call keeps the decomposition (Note [Attention as one node])."""
    if not _modes_pass_it_on():
        return None
    try:
        q, k, v, mask, dropout_p, is_causal, scale, gqa = _params(*args, **kwargs)
    except TypeError:
        return None  # eager raises the same TypeError on the generic path
    tensors = [t for t in (q, k, v, mask) if t is not None]
    if not all(isinstance(t, torch.Tensor) and t.device.type == "meta" and t.layout == torch.strided
               for t in tensors):
        return None
    if type(dropout_p) not in (int, float) or dropout_p != 0 or type(is_causal) is not bool \
            or type(gqa) is not bool or not (scale is None or type(scale) in (int, float)):
        return None
    if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
        # Training: the node's backward is eager's flash backward kernel (the
        # GIR autodiff's rule). A mask that requires grad, or grouped heads
        # (whose key/value gradients the kernel would have to sum over the
        # group), keep the decomposition.
        if (mask is not None and mask.requires_grad) or q.dim() != 4 or k.dim() != 4 \
                or not (q.shape[-3] == k.shape[-3] == v.shape[-3]):
            return None
    try:
        SDPA(*args, **kwargs)  # eager's argument checks, on meta (nothing is recorded here)
        stand = [_stand_in(t) for t in (q, k, v)]
        m = _stand_in(mask) if mask is not None else None
        choice = torch._fused_sdp_choice(*stand, m, dropout_p, is_causal, scale=scale, enable_gqa=gqa)
    except Exception:  # noqa: BLE001 - the generic path reports what eager raises
        return None
    if choice != _FLASH:
        return None

    def run() -> torch.Tensor:
        add_mask = mask
        if mask is not None and mask.dtype == torch.bool:
            add_mask = torch.zeros_like(mask, dtype=q.dtype).masked_fill(mask.logical_not(), float("-inf"))
        out, _lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, is_causal, attn_mask=add_mask, scale=scale)
        return out
    return run
