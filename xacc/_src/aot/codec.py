"""Portable forms of the pieces of a cache entry (see docs/aot.md).

A cache entry made by the capture callback holds live Python objects: the
guard tree names types, functions and modules it checks by identity, the
entry's constants may be tensors, the return template holds constants. Here
they become bytes that another process of the same Python/torch/xacc versions
turns back into equal objects:

  * objects that have a name to import by (classes, functions, Python modules,
    `torch.ops` overloads) are stored by that name and resolved at load time,
    so an identity guard (`G['F'] is torch.nn.functional`) checks the object of
    the loading process;
  * a weak proxy of a function (how an entry reads an inlined function's
    globals: Note [Inlined globals] in translate/TranslateInline.cpp) is stored
    by the function's name and made again, a proxy of the loading process's
    function;
  * everything else (numbers, strings, tuples, tensors, dtypes) is pickled by
    value.

An object that has neither form (a lambda, a closure, an instance without a
pickle form) makes the entry unportable: `encode` raises `Unportable` and the
caller keeps the entry in this process only.

`code_key` names a code object across processes: file name (without its
directory, so a moved checkout still matches), qualified name, first line and
a hash of the bytecode, constants and names (nested code objects included).
"""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import pickle
import types
import weakref
from typing import Any

import torch


class Unportable(Exception):
    """An object of a cache entry cannot be written to an artifact."""


class Unresolvable(Exception):
    """An object named in an artifact does not exist in this process."""


def code_key(code: types.CodeType) -> str:
    """`file.py:Qual.name:line:hash`, stable across processes and checkouts."""
    h = hashlib.sha256()
    _digest(code, h)
    return f"{os.path.basename(code.co_filename)}:{code.co_qualname}:{code.co_firstlineno}:{h.hexdigest()[:20]}"


def _digest(code: types.CodeType, h: Any) -> None:
    h.update(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
                   code.co_argcount, code.co_kwonlyargcount, code.co_flags)).encode())
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            h.update(b"<code>")
            _digest(c, h)
        else:
            h.update(repr(c).encode())
            h.update(b"\0")


# -- objects by name ---------------------------------------------------------------


def _op_name(obj: Any) -> str | None:
    """`aten::add.Tensor` -> "aten.add.Tensor": the path of a torch.ops object under torch.ops."""
    if isinstance(obj, torch._ops.OpOverload):
        ns, name = obj._schema.name.split("::", 1)
        return f"{ns}.{name}.{obj._overloadname}"
    if isinstance(obj, torch._ops.OpOverloadPacket):
        ns, name = obj._qualified_op_name.split("::", 1)
        return f"{ns}.{name}"
    if isinstance(obj, torch._ops._OpNamespace) and getattr(torch.ops, obj.name, None) is obj:
        # `torch.ops.<ns>` (a module object, not importable by its name): found
        # again as torch.ops' attribute, whether or not <ns> registered its ops yet
        return obj.name
    return None


# Process-wide objects that guards read state from (by identity, never copied).
SINGLETONS: tuple[tuple[str, str], ...] = (("xacc._src.amp", "MODE"),)


def _singleton(obj: Any) -> str | None:
    import sys

    for mod, name in SINGLETONS:
        m = sys.modules.get(mod)
        if m is not None and getattr(m, name, None) is obj:
            return f"{mod}:{name}"
    return None


_PROXIES = (weakref.ProxyType, weakref.CallableProxyType)


def _proxy_name(proxy: Any) -> str:
    """`module:qualname` of the function a weak proxy refers to; raises Unportable."""
    try:
        module, qualname = proxy.__module__, proxy.__qualname__
        is_function = isinstance(proxy.__code__, types.CodeType)
    except (ReferenceError, AttributeError) as e:
        raise Unportable(f"weak proxy: {e}") from e
    if not is_function or not isinstance(module, str) or "<" in qualname:
        raise Unportable(f"weak proxy of {module}.{qualname} has no name to import by")
    return f"{module}:{qualname}"


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        if type(obj) in _PROXIES:
            return ("fnproxy", _proxy_name(obj))
        op = _op_name(obj)  # before modules: torch.ops.<ns> is one
        if op is not None:
            return ("op", op)
        if isinstance(obj, types.ModuleType):
            return ("module", obj.__name__)
        single = _singleton(obj)
        if single is not None:
            return ("singleton", single)
        return None


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        kind, name = pid
        try:
            if kind == "module":
                return importlib.import_module(name)
            if kind == "singleton":
                mod, attr = name.split(":")
                return getattr(importlib.import_module(mod), attr)
            if kind == "fnproxy":
                mod, qualname = name.split(":")
                obj = importlib.import_module(mod)
                for part in qualname.split("."):
                    obj = getattr(obj, part)
                if not isinstance(obj, types.FunctionType):
                    raise Unresolvable(f"{name} is not a function")
                return weakref.proxy(obj)
            if kind == "op":
                obj: Any = torch.ops
                for part in name.split("."):
                    obj = getattr(obj, part)
                return obj
        except (ImportError, AttributeError) as e:
            raise Unresolvable(f"{kind} {name}: {e}") from e
        raise pickle.UnpicklingError(f"unknown persistent object kind {kind!r}")

    def find_class(self, module: str, name: str) -> Any:
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError) as e:
            raise Unresolvable(f"{module}.{name} ({type(e).__name__}: {e})") from e


def encode(obj: Any) -> bytes:
    """Pickle with modules and torch ops by name; raises Unportable."""
    buf = io.BytesIO()
    try:
        _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        raise Unportable(str(e)) from e
    return buf.getvalue()


def decode(data: bytes) -> Any:
    """Inverse of encode; raises Unresolvable when a named object is missing."""
    return _Unpickler(io.BytesIO(data)).load()


# -- guard trees ------------------------------------------------------------------


def rebuild_tree(dump: tuple) -> Any:
    """A C++ GuardTree from `GuardTree.dump()` output (objects already decoded)."""
    from xacc._C import capture as C

    local_names, grad_mode, nodes, dims, autocast = dump[:5]
    inference_mode = dump[5] if len(dump) > 5 else -1  # stores written before the inference-mode guard
    if len(dump) < 7:  # written before mode stacks were guarded: valid under no mode it would not say
        raise Unresolvable("stored without its mode-stack guard (Note [Mode stacks]); captured again")
    modes = dump[6]
    tree = C.GuardTree()
    tree.set_local_names(list(local_names))
    if grad_mode >= 0:
        tree.set_grad_mode(bool(grad_mode))
    tree.set_autocast(autocast)
    if inference_mode >= 0:
        tree.set_inference_mode(bool(inference_mode))
    if modes is not None:
        tree.set_modes(tuple(modes[0]), modes[1])
    for i, (parent, kind, index, key, leaves) in enumerate(nodes):
        n = tree.node(parent, kind, index, key)
        if n != i:
            raise ValueError(f"guard node {i} rebuilt as {n}")
        for leaf in leaves:
            tag = leaf[0]
            if tag == "type":
                tree.leaf_type(n, leaf[1])
            elif tag == "id":
                tree.leaf_id(n, leaf[1])
            elif tag == "eq":
                tree.leaf_equals(n, leaf[1])
            elif tag == "len":
                tree.leaf_len(n, leaf[1])
            elif tag == "not_tensor":
                tree.leaf_not_tensor(n)
            elif tag == "hasattr":
                tree.leaf_hasattr(n, leaf[1], leaf[2])
            elif tag == "haskey":
                tree.leaf_haskey(n, leaf[1], leaf[2])
            elif tag == "keys":
                tree.leaf_keys(n, leaf[1])
            elif tag == "same":
                tree.leaf_same(n, leaf[1], leaf[2])
            elif tag == "distinct":
                tree.leaf_distinct(n)
            elif tag == "tensor":
                tree.leaf_tensor_meta(n, *leaf[1:])
            else:
                raise ValueError(f"unknown guard leaf {tag!r}")
    for a, dim_a, op, b, dim_b, value, what in dims:
        if op:
            tree.dim_relation(a, dim_a, op, b, dim_b, value, what)
        else:
            tree.dims_equal(a, dim_a, b, dim_b, what)
    return tree
