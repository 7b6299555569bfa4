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


# -- autocast and inference mode (Note [Entry-guarded modes] in TranslateContext.cpp) --


def _unmodeled_mode(what: str) -> None:
    """Answered by the translator (query "unmodeled_mode"): a GB023 break naming `what`."""
    raise TypeError("answered by the translator only")


def _inference_enabled() -> bool:
    """Answered by the translator (query "inference_enabled")."""
    raise TypeError("answered by the translator only")


def _set_inference(mode: bool) -> None:
    """Done by the translator (query "set_inference"): the inference mode of what follows."""
    raise TypeError("answered by the translator only")


REFERENCE[_unmodeled_mode] = ("unmodeled_mode", False)  # type: ignore[assignment]
REFERENCE[_inference_enabled] = ("inference_enabled", False)  # type: ignore[assignment]
REFERENCE[_set_inference] = ("set_inference", False)  # type: ignore[assignment]


def _autocast_is_noop(device_type: Any, dtype: Any, enabled: Any, cache_enabled: Any) -> bool:
    """Whether `torch.autocast(device_type, dtype, enabled, cache_enabled)`
    changes nothing the block can see, given that autocast is off everywhere
    (every captured entry is guarded on that: convert.callback): it is
    disabled, keeps the device's dtype and the cache flag, and its
    constructor would not raise. Called at capture time on constants."""
    if not isinstance(device_type, str) or enabled is not False or dtype is not None or cache_enabled is not None:
        return False
    try:
        return bool(torch.amp.is_autocast_available(device_type))
    except Exception:  # noqa: BLE001 - the constructor raises there: eager's error, in Python
        return False


REFERENCE[_autocast_is_noop] = (None, True)  # type: ignore[assignment]


class _AutocastOff:
    """`torch.autocast(..., enabled=False)` while autocast is off: the state it
    sets on entry (enabled False, the same dtype and cache flag) and restores
    on exit is the state already there, and the cast cache it may clear on
    exit is empty while autocast is off, so the block runs as if it were not
    there. __enter__ returns the manager, as autocast's does (this stand-in is
    never rebuilt: reading it breaks)."""

    def __enter__(self) -> Any:
        return self

    def __exit__(self, typ: Any, value: Any, tb: Any) -> bool:
        if typ is not None:
            _exception_path()
        return False


@_reference(torch.autocast)
def autocast(device_type: Any, dtype: Any = None, enabled: Any = True, cache_enabled: Any = None) -> _AutocastOff:
    if not _autocast_is_noop(device_type, dtype, enabled, cache_enabled):
        _unmodeled_mode("torch.autocast that casts (enabled, or with a dtype or cache_enabled)")
    return _AutocastOff()


class _InferenceMode:
    """torch.inference_mode(mode) as c10::InferenceMode does it: entering sets
    the grad mode to `not mode` and the inference mode to `mode`; leaving
    restores both. The translator models the inference mode on the meta
    tensors (ops inside run under it, so their results are inference tensors
    exactly when eager's are) and never lets an inference tensor made in the
    graph leave it (Note [Entry-guarded modes])."""

    def __init__(self, mode: bool) -> None:
        self._xacc_mode = mode

    def __enter__(self) -> None:
        self._xacc_prev_grad = _grad_enabled()
        self._xacc_prev_inference = _inference_enabled()
        _set_inference(self._xacc_mode)
        _set_grad(not self._xacc_mode)
        return None

    def __exit__(self, typ: Any, value: Any, tb: Any) -> bool:
        if typ is not None:
            _exception_path()
        _set_inference(self._xacc_prev_inference)
        _set_grad(self._xacc_prev_grad)
        return False


@_reference(torch.inference_mode)
def inference_mode(mode: Any = True) -> _InferenceMode:
    if mode is not True and mode is not False:
        # inference_mode(fn), the decorator form without parentheses
        _unmodeled_mode("torch.inference_mode used as a decorator")
    return _InferenceMode(mode)
