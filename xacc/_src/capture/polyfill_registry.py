"""The table of Python reference implementations the translator inlines
(polyfills.py explains it). It lives apart from the references so that the
modules holding them (polyfills.py and polyfills_*.py) all register into it
without importing one another in a cycle."""

from __future__ import annotations

import sys
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


# Note [References of modules imported later]: a reference keyed by a function
# of a module that xacc does not otherwise need (one that costs a tenth of a
# second to import, as torch.distributed._functional_collectives) is
# registered once the program itself has imported that module, not by
# importing it here. The translator only meets such a function after the
# module is imported (it reads it from the program's objects), and
# register_imported() runs before every translation (convert._translate), so
# the reference is in REFERENCE whenever the translator can look it up. A
# module still being imported (its __spec__._initializing) waits for the next
# translation: its functions may not exist yet.
_PENDING: dict[str, list[Callable[[Any], None]]] = {}


def when_imported(module: str) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """Runs the decorated `register(mod)` once `module` is imported: at once
    when it is already, else at the first translation after it is."""
    def defer(register: Callable[[Any], None]) -> Callable[[Any], None]:
        _PENDING.setdefault(module, []).append(register)
        register_imported()
        return register
    return defer


def register_imported() -> None:
    """Registers the references whose module the program has imported since
    (Note [References of modules imported later])."""
    if not _PENDING:
        return
    for name in [n for n in _PENDING if n in sys.modules]:
        mod = sys.modules[name]
        if getattr(getattr(mod, "__spec__", None), "_initializing", False):
            continue
        for register in _PENDING.pop(name):
            register(mod)
