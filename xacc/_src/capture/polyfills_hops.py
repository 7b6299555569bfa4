"""References of torch's higher-order operators (torch._higher_order_ops) that
library code calls while it believes it is being compiled.

The translator answers `torch.compiler.is_compiling()` as a tracer does (True:
the graph only ever runs as the trace; TranslateCalls.cpp's tracerQuery), so
library code takes its compile-friendly path. transformers' Mamba mixers
(mamba, falcon_mamba, jamba) then call
`torch._higher_order_ops.associative_scan.associative_scan` where eager runs a
Python loop over the sequence. Dynamo captures that call as a higher-order
operator; here it is the reference below, inlined, so the scan stays in the
graph as ordinary ATen ops.

`associative_scan(combine_fn, xs, dim, reverse=False, combine_mode=...)`
computes, along `dim`, out[0] = x[0], out[i] = combine_fn(out[i-1], x[i])
(from the end when `reverse`), for a pytree `xs` of tensors. Eagerly torch
runs `generic_associative_scan`: an odd/even recursion that combines
neighbours level by level, calling `torch.vmap(combine_fn)` on all pairs of a
level at once. The reference follows the same recursion on the same pairs in
the same order, so every element is combined from the same operands as in
eager (bitwise the same for an elementwise combine_fn). vmap's semantics --
combine_fn sees one element, without the scan dim, and its results are stacked
-- are modelled by calling combine_fn once per pair on the elements
themselves, which is what vmap means for any function (no per-function
batching rule to trust). torch documents combine_fn as pure, without side
effects: eager calls it once per level (under vmap), the reference once per
pair, a difference only a side effect or a random op (which eager's vmap
rejects) could show. The result has the original's layout: a fresh
contiguous scan along dim 0 moved to `dim` (a view of the input when the scan
dim has one element and `reverse` is false, as there).

What the reference does not model -- pytree nodes other than tuples and lists
(dicts, named tuples, registered classes), leaves that are not strided
tensors, combine_fn results that are not tensors of the element's dtype and
shape, arguments the original rejects -- is a graph break (query
"unmodelled_call", GB002): the original then runs in Python, with its own
errors. The cost is one inlined combine_fn call per pair, about 2n for a scan
of length n, where Dynamo keeps one higher-order node."""

from __future__ import annotations

from typing import Any, Callable

import torch

from xacc._src.capture.polyfill_registry import REFERENCE, _reference

try:
    from torch._higher_order_ops.associative_scan import associative_scan as _associative_scan
except ImportError:  # pragma: no cover - a torch without it (before 2.4)
    _associative_scan = None


def _unmodelled_call(what: str) -> None:
    """Answered by the translator (query "unmodelled_call"): a GB002 break naming `what`."""
    raise TypeError("answered by the translator only")


REFERENCE[_unmodelled_call] = ("unmodelled_call", False)  # type: ignore[assignment]


def _flatten(tree: Any, leaves: list) -> Any:
    """The leaves of `tree` appended to `leaves`, in pytree order; returns its
    spec (a leaf's index, or (container type, child specs)), None when `tree`
    holds something other than tensors in tuples and lists."""
    if isinstance(tree, torch.Tensor):
        leaves.append(tree)
        return len(leaves) - 1
    kind = type(tree)
    if kind is not tuple and kind is not list:
        return None
    children = []
    for child in tree:
        spec = _flatten(child, leaves)
        if spec is None:
            return None
        children.append(spec)
    return (kind, children)


def _unflatten(spec: Any, leaves: list) -> Any:
    if isinstance(spec, int):
        return leaves[spec]
    items = [_unflatten(child, leaves) for child in spec[1]]
    return tuple(items) if spec[0] is tuple else items


def _combine(combine_fn: Callable, spec: Any, count: int, left: list, right: list, like: list) -> list | None:
    """combine_fn on one pair of elements (lists of leaves), as vmap calls it;
    None when its result is not `count` tensors shaped and typed as `like`."""
    out = combine_fn(_unflatten(spec, left), _unflatten(spec, right))
    leaves: list = []
    if _flatten(out, leaves) is None or len(leaves) != count:
        return None
    for got, want in zip(leaves, like):
        if got.dtype != want.dtype or got.shape != want.shape:
            return None
    return leaves


def _scan(combine_fn: Callable, spec: Any, count: int, elems: list) -> list | None:
    """generic_associative_scan's recursion on a list of elements (each a list
    of leaves): the inclusive scan, None when a combine was not modelled."""
    n = len(elems)
    if n < 2:
        return elems
    # Pairs (0, 1), (2, 3), ...: the scan of the reduced sequence gives every odd position.
    reduced = []
    for i in range(n // 2):
        c = _combine(combine_fn, spec, count, elems[2 * i], elems[2 * i + 1], elems[0])
        if c is None:
            return None
        reduced.append(c)
    odd = _scan(combine_fn, spec, count, reduced)
    if odd is None:
        return None
    # Every even position after the first: the odd position before it with this element.
    even = [elems[0]]
    for i in range((n - 1) // 2):
        c = _combine(combine_fn, spec, count, odd[i], elems[2 * i + 2], elems[0])
        if c is None:
            return None
        even.append(c)
    out = []
    for i in range(n):
        out.append(even[i // 2] if i % 2 == 0 else odd[i // 2])
    return out


def associative_scan(combine_fn: Callable, xs: Any, dim: int, reverse: bool = False,
                     combine_mode: str = "pointwise") -> Any:
    leaves: list = []
    spec = _flatten(xs, leaves)
    if spec is None or not leaves or not callable(combine_fn):
        _unmodelled_call("associative_scan on xs other than tensors in tuples and lists")
    if type(dim) is not int or type(reverse) is not bool or combine_mode not in ("pointwise", "generic"):
        _unmodelled_call("associative_scan with arguments the original rejects")
    for x in leaves:
        if x.layout != torch.strided:
            _unmodelled_call("associative_scan on a tensor that is not strided")
        if combine_mode == "pointwise" and x.device.type not in ("cuda", "xpu"):
            _unmodelled_call("associative_scan with combine_mode='pointwise' off CUDA and XPU (the original raises)")
    ndim = leaves[0].dim()
    if not -ndim <= dim < ndim or ndim == 0:
        _unmodelled_call("associative_scan with a dim out of range (the original raises)")
    if dim < 0:
        dim += ndim
    n = leaves[0].shape[dim]
    moved = []
    for x in leaves:
        if x.dim() <= dim or x.shape[dim] != n or n == 0:
            _unmodelled_call("associative_scan on leaves the original rejects or cannot pair")
        x = torch.movedim(x, dim, 0)
        moved.append(torch.flip(x, [0]) if reverse else x)
    if n < 2:
        # The original's recursion returns its input: views, flipped back when reversed.
        outs = [torch.movedim(torch.flip(x, [0]) if reverse else x, 0, dim) for x in moved]
        return _unflatten(spec, outs)
    elems = []
    for i in range(n):
        elems.append([x[i] for x in moved])
    scanned = _scan(combine_fn, spec, len(leaves), elems)
    if scanned is None:
        _unmodelled_call("associative_scan whose combine_fn does not return tensors like its inputs")
    outs = []
    for k in range(len(leaves)):
        s = torch.stack([e[k] for e in scanned], 0)
        outs.append(torch.movedim(torch.flip(s, [0]) if reverse else s, 0, dim))
    return _unflatten(spec, outs)


if _associative_scan is not None:
    _reference(_associative_scan)(associative_scan)
