"""Iterators as eager Python holds them, rebuilt at a graph break.

The translator keeps iterators over lists as live views (an index into the list,
as CPython's list_iterator is); when a frame breaks mid-iteration, the break
function rebuilds the very same kind of iterator at the same index with these.
"""

from __future__ import annotations

from typing import Any, Iterator


def list_iter_at(lst: list, index: int) -> Iterator[Any]:
    """iter(lst) advanced to `index` (a list_iterator, as eager has)."""
    it = iter(lst)
    it.__setstate__(index)
    return it


def reversed_at(lst: list, index: int | None) -> Iterator[Any]:
    """reversed(lst) whose next item is lst[index]; exhausted when index is None."""
    it = reversed(lst)
    it.__setstate__(-1 if index is None else index)
    return it


def dict_iter_at(view: Any, index: int) -> Iterator[Any]:
    """iter(view) of a dict view with `index` items taken (a live dict iterator)."""
    it = iter(view)
    for _ in range(index):
        next(it)
    return it
