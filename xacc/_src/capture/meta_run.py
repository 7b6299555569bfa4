"""Running ATen ops on meta tensors at capture time without what plain Python
never pays for (Note [Native meta kernels], csrc/lib/backend/aten/
AtenNativeMeta.cpp): torch registers Python meta kernels over most C++ ones,
and their helpers import sympy and torch.fx.experimental.symbolic_shapes on
first use (~490 modules, tens of MiB, seconds). The recorder (recorder.py) and
the scalar probe (scalars.py) run ops through `run`: the common ops get their
results from libtorch's C++ meta functions (same sizes, strides and dtypes as
the CPU kernel's output); the others run torch's kernel as before. While they
run torch code, `plain_checks_on` makes torch._check(True) return at once.
"""

from __future__ import annotations

from typing import Any

import torch

from xacc import _C

# "aten::name.overload" of the ops with a C++ rule.
_NATIVE_OPS = frozenset(getattr(_C, "native_meta_ops", lambda: [])())
_native_key: dict = {}  # OpOverload -> (schema name, overload) or None


def native(func: Any, args: tuple, kwargs: dict) -> Any:
    """`func` run on meta tensors by its C++ rule, or None (no rule, or a case
    the rule does not claim)."""
    key = _native_key.get(func, False)
    if key is False:
        key = (func._schema.name, func._overloadname or "default")
        key = key if f"{key[0]}.{key[1]}" in _NATIVE_OPS else None
        _native_key[func] = key
    if key is None:
        return None
    return _C.native_meta(key[0], key[1], args, kwargs)


def run(func: Any, args: tuple, kwargs: dict) -> Any:
    """`func(*args, **kwargs)` on meta tensors (inside a dispatch mode)."""
    out = native(func, args, kwargs)
    return func(*args, **kwargs) if out is None else out


_TORCH_CHECK_WITH = torch._check_with


def _check_with_true_fast(error_type: Any, cond: Any, message: Any = None) -> None:
    """torch._check_with while capture runs torch code: a condition that is the
    bool True returns at once, as the original does (it returns when
    symbolic_shapes.expect_true(True), which is True), without first importing
    torch.fx.experimental.symbolic_shapes and sympy; anything else (False, a
    SymBool, a wrong type) goes to the original, unchanged."""
    if cond is True:
        return None
    return _TORCH_CHECK_WITH(error_type, cond, message)


def plain_checks_on() -> Any:
    """Installs _check_with_true_fast; returns what plain_checks_off restores.
    Only capture code runs in between (the frame hook is off), so user code
    never sees the replacement."""
    prev = torch._check_with
    torch._check_with = _check_with_true_fast
    return prev


def plain_checks_off(prev: Any) -> None:
    torch._check_with = prev
