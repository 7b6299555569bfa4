"""Returned views (Note [Returned views] in csrc/lib/capture/translate/Translator.h):
rebuilding a graph output as the view of its base that eager Python returns.
The translator calls `view_of` through xacc._src.capture.convert, which
re-exports it."""

from __future__ import annotations

import torch


def view_of(base: torch.Tensor, out: torch.Tensor, geometry: tuple | None) -> torch.Tensor:
    """Note [Returned views] (Translator.h): graph output `out`, which eager
    Python returns as a view of `base` (a frame input or another returned
    tensor), as that view: same values, same `_base`, same storage. When the
    backend computed `out` as a copy, the view is rebuilt from `geometry` (the
    sizes, strides and offset seen at capture), which holds while the sizes do."""
    root = base if base._base is None else base._base
    if out._base is root:
        return out
    if base.requires_grad and not out.requires_grad and torch.is_grad_enabled():
        # The graph made it without autograd history: eager's view was made
        # under no_grad (a leaf that requires grad, created in no_grad mode),
        # and so is this one.
        with torch.no_grad():
            return _rebuild(base, out, geometry)
    return _rebuild(base, out, geometry)


def _rebuild(base: torch.Tensor, out: torch.Tensor, geometry: tuple | None) -> torch.Tensor:
    if out.untyped_storage().data_ptr() == base.untyped_storage().data_ptr():
        return base.as_strided(out.size(), out.stride(), out.storage_offset())
    if geometry is not None and tuple(out.shape) == geometry[0]:
        size, stride, offset = geometry
        return base.as_strided(size, stride, base.storage_offset() + offset)
    raise RuntimeError("xacc: a view returned by a captured graph cannot be rebuilt as a view of its base")
