"""Operators outside the `aten` namespace, decomposed into ATen ops.

The recorder (recorder.py) records ATen operators only: a graph node names its
operator `aten.<name>.<overload>`, and the executors run it through the c10
dispatcher. An operator of another namespace (a library's custom op, such as
transformers' `transformers::grouped_mm_fallback` for MoE experts) has either
an entry in `DECOMPOSITIONS`, a function of ATen calls with the operator's
exact semantics, which the recorder traces in its place, or it is a graph break
(GB006). Each function states the semantics it reproduces; none reads tensor
data, so each is traced on meta tensors like any torch code.
"""

from __future__ import annotations

from typing import Callable

import torch


def _slice_bound(v: torch.Tensor, n: int) -> torch.Tensor:
    """A Python slice bound `v` (a 0-d integer tensor) of a length-`n` sequence,
    normalised as `seq[a:b]` does: negative bounds count from the end, then
    clamp to [0, n]."""
    return torch.where(v < 0, (v + n).clamp(min=0), v.clamp(max=n))


def grouped_mm_fallback(input: torch.Tensor, weight: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """`transformers::grouped_mm_fallback(input (S, K), weight (E, K, N), offs (E,))`
    (transformers/integrations/moe.py): an (S, N) output of zeros, then for
    each i in order, rows `input[start:end] @ weight[i]` written into
    `output[start:end]`, with `end = offs[i]` and `start` the previous `end`
    (0 first). Here each expert's matmul covers all rows and is kept where the
    row lies in its (normalised) slice; a later expert's rows win, as the
    later write does. Static shapes: E matmuls of S rows."""
    n = input.size(0)
    rows = torch.arange(n, device=input.device)
    out = torch.zeros(n, weight.size(2), device=input.device, dtype=input.dtype)
    start = torch.zeros((), dtype=offs.dtype, device=offs.device)
    for i in range(offs.size(0)):
        end = offs[i]
        keep = (rows >= _slice_bound(start, n)) & (rows < _slice_bound(end, n))
        out = torch.where(keep.unsqueeze(1), torch.mm(input, weight[i]), out)
        start = end
    return out


# Qualified operator name (namespace::name.overload) -> its decomposition.
DECOMPOSITIONS: dict[str, Callable] = {
    "transformers::grouped_mm_fallback.default": grouped_mm_fallback,
}
