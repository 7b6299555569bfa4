"""The table of Python reference implementations the translator inlines
(polyfills.py explains it). It lives apart from the references so that the
modules holding them (polyfills.py and polyfills_*.py) all register into it
without importing one another in a cycle."""

from __future__ import annotations

from typing import Any, Callable

# original -> (reference, native_on_constants); see polyfills.py.
REFERENCE: dict[Any, tuple[Callable[..., Any], bool]] = {}

# A default no caller can pass (getattr/next/dict.get-style optional arguments).
_MISSING = object()


def _reference(original: Any, native_on_constants: bool = False) -> Callable[[Callable], Callable]:
    """Registers the decorated function as the reference of `original`."""
    def register(fn: Callable) -> Callable:
        REFERENCE[original] = (fn, native_on_constants)
        return fn
    return register
