"""Python references of `copy.copy` and `copy.deepcopy` (see polyfills.py for
how the translator finds and inlines them; polyfills.py imports this module),
for the builtin containers and for instances of Python classes (Note [Copies
of instances] below)."""

from __future__ import annotations

import copy
import copyreg
import types
import weakref
from typing import Any

from .polyfill_registry import _reference

# Note [Copies of instances]: besides the builtin containers and atoms, an instance of a class written in
# Python is copied as copy.py does it through the reduce protocol, for the
# protocol methods the translator can follow:
#
#  * the class is not in copyreg.dispatch_table and has no `__deepcopy__`
#    (deepcopy) / `__copy__` (copy): those take the memo dict, keyed by id(),
#    which the translator does not model, so they are left to Python;
#  * nor in copy's own `_deepcopy_dispatch` / `_copy_dispatch` (a program
#    may register a class there; copy.py consults them first);
#  * `__reduce_ex__` is object's. With object's `__reduce__` too, it is
#    object.__reduce_ex__(4) of CPython (reduce_newobj): the new object is
#    `cls.__new__(cls)` (copyreg.__newobj__), the state object.__getstate__'s
#    (the instance dict, None when empty, paired with the slot values when the
#    class's `__slotnames__` names any), or a `__getstate__` written in Python;
#    a `__reduce__` written in Python is called and its tuple reconstructed as
#    copy._reconstruct does. `__getnewargs__`/`__getnewargs_ex__` are left to Python.
#    copy.py reads `__deepcopy__` and `__reduce_ex__` off the instance, and
#    object.__reduce_ex__ reads `__reduce__` and `__getstate__` off it
#    (getattr, so a class's `__getattr__` answers absent names) but looks
#    `__getnewargs_ex__`/`__getnewargs__` up on the type only (an
#    instance-dict or `__getattr__` answer is ignored; 3.11 to 3.13 alike):
#    the reference looks them up the same way, an instance-dict
#    `__reduce_ex__` is left to Python and an instance-dict `__getstate__` is
#    called. A protocol name bound to None is present (a later call of None
#    raises as in eager), told from absent by a sentinel default;
#  * a class with its own `__getattribute__` answers each of those reads
#    itself, so the reference makes exactly Python's reads off x, in order
#    (`__deepcopy__`, `__reduce_ex__`, `__reduce__`, `__getstate__`, the slot
#    names), and goes on only where the answers are object's own methods
#    bound to x (else left to Python). The one extra read is `x.__dict__`
#    for the state, which Python reads past the protocol: it is followed
#    only where the answer is the instance dict itself (the translator checks
#    that of an outside object, TranslateValues.cpp; on an object made in
#    the frame the `__reduce_ex__` read already breaks);
#  * the state is set by a `__setstate__` written in Python (`hasattr`, then
#    the read for the call: two reads of the new object, as copy.py), else the dict
#    entries go into the new instance dict (`y.__dict__.update(state)`, a
#    write through the view of Note [Instance dicts]) and the slot values by
#    setattr. The dict state is a copy of the instance dict (the view of a
#    user object cannot be iterated); what it holds is copied alike, and an
#    instance dict met again inside the state is copied on its own, as the
#    dict Python's deepcopy makes of it is never the new object's dict either.
#
# A value met twice is copied once (an identity memo of (original, copy)
# pairs, which also ends cycles: the new object is recorded before its state
# is copied); the copy of an instance is a new object. The memo never leaves
# this module, so a caller's own memo (`deepcopy(x, memo)`) is left to
# Python. Builtin (C) classes other than the containers are left to Python:
# what their reduce methods do is not modelled here. `copyreg._slotnames` caches its
# answer on the class as `__slotnames__`; a class without it yet is left to
# Python once (the eager call stores it), which a guard on the class sees.
# Tensors are left to Python (Tensor.__deepcopy__), never aliased.

# copy.copy returns these themselves (copy._copy_immutable).
_COPY_ATOMIC = (type(None), int, float, bool, complex, str, tuple, bytes, frozenset, range, slice, property,
                types.BuiltinFunctionType, type(Ellipsis), type(NotImplemented), types.FunctionType,
                types.CodeType, weakref.ref)
# copy.deepcopy returns these themselves (copy._deepcopy_atomic); a slice is
# rebuilt from copies of its bounds (its __reduce__).
_DEEP_ATOMIC = (type(None), int, float, bool, complex, bytes, str, types.CodeType, range,
                types.BuiltinFunctionType, type(Ellipsis), type(NotImplemented), types.FunctionType,
                weakref.ref, property)

_OBJECT_REDUCE_EX = object.__reduce_ex__
_OBJECT_REDUCE = object.__reduce__
_OBJECT_GETSTATE = getattr(object, "__getstate__", None)  # 3.11+
_MISSING = object()  # getattr's default where copy.py or object.__reduce_ex__ tells absent from None


@_reference(copy.copy)
def copy_copy(x: Any) -> Any:
    cls = type(x)
    for atom in _COPY_ATOMIC:
        if cls is atom:
            return x  # immutable: copy.copy returns the object itself
    if cls is list:
        return list(x)
    if cls is dict:
        return dict(x)
    if cls is set:
        return set(x)
    if isinstance(x, type):
        return x
    _check_followable(cls, "copy")
    if getattr(cls, "__copy__", None) is not None:
        raise TypeError(f"copy.copy of a {cls.__name__} with __copy__ is left to Python")
    return _reduce_and_rebuild(x, cls, None)


@_reference(copy.deepcopy)
def copy_deepcopy(x: Any, memo: Any = None, _nil: Any = None) -> Any:
    if memo is not None:
        raise TypeError("copy.deepcopy with a memo is left to Python")
    return _deepcopy(x, [])


def _memo_get(x: Any, pairs: list) -> Any:
    for original, made in pairs:
        if original is x:
            return made
    return pairs  # not found (the memo itself is never a copy)


def _deepcopy(x: Any, pairs: list) -> Any:
    cls = type(x)
    for atom in _DEEP_ATOMIC:
        if cls is atom:
            return x
    made = _memo_get(x, pairs)
    if made is not pairs:
        return made
    if cls is list:
        y = []
        pairs.append((x, y))
        for v in x:
            y.append(_deepcopy(v, pairs))
        return y
    if cls is dict:
        d = {}
        pairs.append((x, d))
        for k, v in x.items():
            d[_deepcopy(k, pairs)] = _deepcopy(v, pairs)
        return d
    if cls is tuple:
        items = [_deepcopy(v, pairs) for v in x]
        made = _memo_get(x, pairs)  # a cycle through the tuple copied it already
        if made is not pairs:
            return made
        same = True
        for a, b in zip(items, x):
            same = same and a is b
        if same:
            return x  # its own copy: not memoized
        t = tuple(items)
        pairs.append((x, t))
        return t
    if cls is slice:
        s = slice(_deepcopy(x.start, pairs), _deepcopy(x.stop, pairs), _deepcopy(x.step, pairs))
        pairs.append((x, s))
        return s
    if isinstance(x, type):
        return x
    _check_followable(cls, "deepcopy")
    if getattr(x, "__deepcopy__", None) is not None:
        raise TypeError(f"copy.deepcopy of a {cls.__name__} with __deepcopy__ is left to Python")
    return _reduce_and_rebuild(x, cls, pairs)


def _check_followable(cls: type, what: str) -> None:
    # Only classes written in Python over object, whose reduce methods are
    # followed here (Note [Copies of instances]).
    for k in cls.__mro__:
        if k is not object and not _is_python_class(k):
            raise TypeError(f"copy.{what} of a {cls.__name__} is left to Python")
    if cls in copyreg.dispatch_table:
        raise TypeError(f"copy.{what} of a {cls.__name__} in copyreg.dispatch_table is left to Python")
    if cls in (copy._deepcopy_dispatch if what == "deepcopy" else copy._copy_dispatch):
        raise TypeError(f"copy.{what} of a {cls.__name__} in copy's dispatch table is left to Python")


def _is_python_class(k: type) -> bool:
    return k.__flags__ & (1 << 9) != 0  # Py_TPFLAGS_HEAPTYPE


def _on_mro(cls: type, name: str) -> bool:
    # _PyType_Lookup: the class dicts along the MRO, no instance, no __getattr__.
    for k in cls.__mro__:
        if name in k.__dict__:
            return True
    return False


def _objects_method(m: Any, x: Any, name: str) -> bool:
    # Whether a value a class's own __getattribute__ answered is object's
    # method `name` bound to x, as CPython tells object.__getstate__ (a C
    # function whose self is x): on an MRO of Python classes over object
    # (_check_followable) and with the class's own attribute object's, only
    # object's method descriptor binds to x under that name.
    return type(m) is types.BuiltinMethodType and m.__self__ is x and m.__name__ == name


def _has_instance_dict(cls: type) -> bool:
    # A class statement gives its instances a __dict__ unless every class on
    # the MRO below object declares __slots__ without "__dict__".
    for k in cls.__mro__:
        if k is object:
            continue
        if "__slots__" not in k.__dict__:
            return True
        slots = k.__slots__  # its own (just checked)
        if isinstance(slots, str):
            slots = (slots,)
        if "__dict__" in slots:
            return True
    return False


def _reduce_and_rebuild(x: Any, cls: type, pairs: list | None) -> Any:
    # x.__reduce_ex__(4), then copy._reconstruct (deep when pairs is a memo).
    # copy.py reads __reduce_ex__ off the instance, and object.__reduce_ex__
    # reads __reduce__ and __getstate__ off it too, __getnewargs_ex__ and
    # __getnewargs__ off its type (Note [Copies of instances]).
    if cls.__reduce_ex__ is not _OBJECT_REDUCE_EX:
        raise TypeError(f"{cls.__name__}.__reduce_ex__ is left to Python")
    for k in cls.__mro__:
        if k is not object and "__getattribute__" in k.__dict__:
            return _reduce_through_getattribute(x, cls, pairs)
    own = _has_instance_dict(cls)
    if own and "__reduce_ex__" in x.__dict__:
        raise TypeError(f"{cls.__name__}.__reduce_ex__ is left to Python")
    if cls.__reduce__ is not _OBJECT_REDUCE:
        rv = x.__reduce__()
        if isinstance(rv, str):
            return x
        return _reconstruct(x, pairs, *rv)
    if _on_mro(cls, "__getnewargs_ex__") or _on_mro(cls, "__getnewargs__"):
        raise TypeError(f"copy of a {cls.__name__} with __getnewargs__ is left to Python")
    if getattr(cls, "__getstate__", None) is not _OBJECT_GETSTATE or (own and "__getstate__" in x.__dict__):
        state = x.__getstate__()
    else:
        state = _default_state(x, cls)
    return _rebuild(x, cls, state, pairs)


def _reduce_through_getattribute(x: Any, cls: type, pairs: list | None) -> Any:
    # A class with its own __getattribute__ answers every read off x itself,
    # so x is read exactly where copy.py and object.__reduce_ex__ read it, in
    # their order (Note [Copies of instances]): `__reduce_ex__` (copy.py,
    # getattr with a None default), `__reduce__` (absent on AttributeError),
    # `__getstate__`, then the slot names; `__getnewargs_ex__` and
    # `__getnewargs__` are looked up on the type, and the instance dict is
    # read past the protocol (object.__getstate__), which `x.__dict__` is
    # only where the translator finds the class's answer to be that dict.
    if not _objects_method(getattr(x, "__reduce_ex__", None), x, "__reduce_ex__"):
        raise TypeError(f"{cls.__name__}.__reduce_ex__ is left to Python")
    reduce = getattr(x, "__reduce__", _MISSING)
    if reduce is not _MISSING and cls.__reduce__ is not _OBJECT_REDUCE:
        rv = reduce()
        if isinstance(rv, str):
            return x
        return _reconstruct(x, pairs, *rv)
    if _on_mro(cls, "__getnewargs_ex__") or _on_mro(cls, "__getnewargs__"):
        raise TypeError(f"copy of a {cls.__name__} with __getnewargs__ is left to Python")
    getstate = x.__getstate__
    if not _objects_method(getstate, x, "__getstate__"):
        return _rebuild(x, cls, getstate(), pairs)
    if "__slotnames__" not in cls.__dict__:
        raise TypeError(f"copyreg._slotnames of {cls.__name__} is left to Python (it caches on the class)")
    state = None
    if _has_instance_dict(cls):
        d = x.__dict__
        if len(d) > 0:
            state = d.copy()  # a copy, as in _default_state
    slots = {}
    for name in cls.__slotnames__:
        value = getattr(x, name, _MISSING)  # PyObject_GetAttr, an AttributeError skips the name
        if value is not _MISSING:
            slots[name] = value
    if len(slots) > 0:
        state = (state, slots)
    return _rebuild(x, cls, state, pairs)


def _rebuild(x: Any, cls: type, state: Any, pairs: list | None) -> Any:
    y = cls.__new__(cls)  # copyreg.__newobj__(cls)
    if pairs is not None:
        pairs.append((x, y))
    _set_state(y, state, pairs)
    return y


def _default_state(x: Any, cls: type) -> Any:
    # object.__getstate__: the instance dict (None when empty), with the
    # values of the named slots that are set.
    if "__slotnames__" not in cls.__dict__:
        raise TypeError(f"copyreg._slotnames of {cls.__name__} is left to Python (it caches on the class)")
    names = cls.__slotnames__  # the class's own (just checked): a list, no descriptor
    state = None
    if _has_instance_dict(cls) and len(x.__dict__) > 0:
        # The dict itself in CPython; a copy of it here, which the copy reads
        # alike (the view of Note [Instance dicts] cannot be iterated).
        state = x.__dict__.copy()
    if len(names) > 0:
        slots = {}
        for name in names:
            if hasattr(x, name):
                slots[name] = getattr(x, name)
        if len(slots) > 0:
            state = (state, slots)
    return state


def _reconstruct(x: Any, pairs: list | None, func: Any, args: Any, state: Any = None, listiter: Any = None,
                 dictiter: Any = None) -> Any:
    deep = pairs is not None
    if deep and args:
        args = _deepcopy(args, pairs)
    y = func(*args)
    if deep:
        pairs.append((x, y))
    _set_state(y, state, pairs)
    if listiter is not None:
        if deep:
            for item in listiter:
                y.append(_deepcopy(item, pairs))
        else:
            for item in listiter:
                y.append(item)
    if dictiter is not None:
        if deep:
            for key, value in dictiter:
                y[_deepcopy(key, pairs)] = _deepcopy(value, pairs)
        else:
            for key, value in dictiter:
                y[key] = value
    return y


def _set_state(y: Any, state: Any, pairs: list | None) -> None:
    if state is None:
        return
    if pairs is not None:
        state = _deepcopy(state, pairs)
    if hasattr(y, "__setstate__"):  # copy._reconstruct reads it twice where present
        y.__setstate__(state)
        return
    slotstate = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slotstate = state
    if state is not None:
        y.__dict__.update(state)
    if slotstate is not None:
        for key, value in slotstate.items():
            setattr(y, key, value)
