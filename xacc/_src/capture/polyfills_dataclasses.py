"""Python references for `dataclasses.replace` and `dataclasses.asdict`
(registered in polyfills.REFERENCE; see that module's docstring). The C
originals' Python code calls private helpers of the dataclasses module, which
the translator does not inline; these follow the documented behaviour of
CPython 3.11's versions, reading the class's `__dataclass_fields__` (guarded
through the class like any class attribute). A value asdict would deep-copy
that is not an immutable builtin is left to Python: the raise breaks the frame.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from xacc._src.capture.polyfill_registry import _reference

_FIELDS = "__dataclass_fields__"


def _is_instance(obj: Any) -> bool:
    return hasattr(type(obj), _FIELDS)


def _fields(obj: Any) -> list:
    # dataclasses.fields: the fields that are neither ClassVar nor InitVar pseudo-fields.
    return [f for f in getattr(obj, _FIELDS).values() if f._field_type is dataclasses._FIELD]


@_reference(dataclasses.replace)
def replace(obj: Any, /, **changes: Any) -> Any:
    if not _is_instance(obj):
        raise TypeError("replace() should be called on dataclass instances")
    for f in getattr(obj, _FIELDS).values():
        if f._field_type is dataclasses._FIELD_CLASSVAR:
            continue
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be specified with replace()")
            continue
        if f.name not in changes:
            if f._field_type is dataclasses._FIELD_INITVAR and f.default is dataclasses.MISSING:
                raise ValueError(f"InitVar {f.name!r} must be specified with replace()")
            changes[f.name] = getattr(obj, f.name)
    return obj.__class__(**changes)


def _immutable(x: Any) -> bool:
    t = type(x)
    return (t is int or t is float or t is bool or t is complex or t is str or t is bytes or
            t is type(None) or t is range or t is slice)


def _asdict_inner(obj: Any, dict_factory: Callable) -> Any:
    if _is_instance(obj):
        result = []
        for f in _fields(obj):
            value = _asdict_inner(getattr(obj, f.name), dict_factory)
            result.append((f.name, value))
        return dict_factory(result)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_asdict_inner(v, dict_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_asdict_inner(v, dict_factory) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((_asdict_inner(k, dict_factory), _asdict_inner(v, dict_factory)) for k, v in obj.items())
    if _immutable(obj):
        return obj  # copy.deepcopy returns an immutable builtin itself
    raise TypeError(f"dataclasses.asdict deep-copies a {type(obj).__name__}: left to Python")


@_reference(dataclasses.asdict)
def asdict(obj: Any, *, dict_factory: Callable = dict) -> Any:
    if not _is_instance(obj):
        raise TypeError("asdict() should be called on dataclass instances")
    return _asdict_inner(obj, dict_factory)
