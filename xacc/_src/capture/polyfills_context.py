"""Python reference classes for context managers the translator cannot run
itself: `contextlib.nullcontext`, `contextlib.suppress`,
`@contextlib.contextmanager` and `torch.set_grad_enabled`. They join
polyfills.REFERENCE when polyfills.py imports this module.

Calling the original makes an object of a class below, and `with` on it
inlines its `__enter__`/`__exit__` (Note [Context managers] in
csrc/lib/capture/translate/TranslateContext.cpp). Only the path without an
exception is traced, so `__exit__` is only ever called with three Nones here
and returns False (the exception is not suppressed: there is none). The
objects stand in for the library's own: the translator never answers their
type and never rebuilds them, and their attributes are named `_xacc_*` so
that reading one of the library's attribute names breaks.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable

import torch

from .polyfill_registry import REFERENCE, _reference


def _exception_path() -> None:
    # Never traced: an exception inside the block is a break (see the module docstring).
    raise TypeError("a context manager's exception path is left to Python")


class _NullContext:
    def __init__(self, enter_result: Any = None) -> None:
        self._xacc_result = enter_result

    def __enter__(self) -> Any:
        return self._xacc_result

    def __exit__(self, typ: Any, value: Any, tb: Any) -> bool:
        if typ is not None:
            _exception_path()
        return False


@_reference(contextlib.nullcontext)
def nullcontext(enter_result: Any = None) -> _NullContext:
    return _NullContext(enter_result)


class _Suppress:
    def __init__(self, exceptions: tuple) -> None:
        self._xacc_exceptions = exceptions

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ: Any, value: Any, tb: Any) -> bool:
        if typ is not None:
            _exception_path()
        return False


@_reference(contextlib.suppress)
def suppress(*exceptions: Any) -> _Suppress:
    return _Suppress(exceptions)


class _GeneratorContextManager:
    """contextlib._GeneratorContextManager on the path without an exception:
    __enter__ runs the generator to its first yield, __exit__ runs it on and
    expects it to stop."""

    def __init__(self, gen: Any) -> None:
        self._xacc_gen = gen

    def __enter__(self) -> Any:
        for value in self._xacc_gen:
            return value
        raise RuntimeError("generator didn't yield")

    def __exit__(self, typ: Any, value: Any, tb: Any) -> bool:
        if typ is not None:
            _exception_path()
        for _ in self._xacc_gen:
            raise RuntimeError("generator didn't stop")
        return False


@_reference(contextlib.contextmanager)
def contextmanager(func: Callable) -> Callable:
    # The helper contextmanager returns: each call makes the generator (not
    # started yet) and the manager around it.
    def helper(*args: Any, **kwds: Any) -> _GeneratorContextManager:
        return _GeneratorContextManager(func(*args, **kwds))
    return helper


def _grad_enabled() -> bool:
    """Answered by the translator (query "grad_enabled"). Never called for real."""
    raise TypeError("answered by the translator only")


def _set_grad(mode: bool) -> None:
    """Done by the translator (query "set_grad"): the grad mode of what follows."""
    raise TypeError("answered by the translator only")


REFERENCE[_grad_enabled] = ("grad_enabled", False)  # type: ignore[assignment]
REFERENCE[_set_grad] = ("set_grad", False)  # type: ignore[assignment]


class _SetGradEnabled:
    """torch.set_grad_enabled: the mode changes when it is made (a plain call
    too); __exit__ restores the mode it found."""

    def __init__(self, mode: bool) -> None:
        self._xacc_prev = _grad_enabled()
        _set_grad(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ: Any, value: Any, tb: Any) -> bool:
        if typ is not None:
            _exception_path()
        _set_grad(self._xacc_prev)
        return False


@_reference(torch.set_grad_enabled)
def set_grad_enabled(mode: Any) -> _SetGradEnabled:
    return _SetGradEnabled(mode)


def _grad_mode_decorator(mode: bool, func: Callable) -> Callable:
    # `@torch.no_grad()` / `@torch.enable_grad()` on a plain function
    # (torch.utils._contextlib.context_decorator): each call runs in the mode
    # and restores the one it found. The translator inlines this for plain
    # (not generator) functions only; the wrapper is a closure it never shows.
    def decorate_context(*args: Any, **kwargs: Any) -> Any:
        prev = _grad_enabled()
        _set_grad(mode)
        result = func(*args, **kwargs)
        _set_grad(prev)
        return result
    return decorate_context


REFERENCE["grad_mode_decorator"] = (_grad_mode_decorator, False)  # type: ignore[index]
