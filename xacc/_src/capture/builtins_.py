"""Handlers for Python builtins, Tensor methods and container methods called on
trackers. Each handler takes (ctx, args, kwargs) and returns a tracker or raises
GraphBreak. Device-moving methods are erased here: every captured tensor lives
on the capture target, so `.cuda()`, `.cpu()` and device-only `.to()` are
identities and a dtype-changing `.to()` keeps only its dtype."""

from __future__ import annotations

import builtins
from typing import Any, Callable

import torch

from xacc._src.capture import trackers as T
from xacc._src.capture.breaks import GraphBreak

_METHOD_CALLERS: dict[str, Callable] = {}
T_CONST = (bool, int, float, str, bytes, tuple, type(None))


def _caller(name: str) -> Callable:
    f = _METHOD_CALLERS.get(name)
    if f is None:
        def f(self, *args, **kwargs):
            return getattr(self, name)(*args, **kwargs)
        f.__name__ = f"Tensor.{name}"
        _METHOD_CALLERS[name] = f
    return f


def _is_device_like(ctx, v: T.Var) -> bool:
    if isinstance(v, T.ConstVar):
        if isinstance(v.value, torch.device):
            return True
        if isinstance(v.value, str):
            try:
                torch.device(v.value)
                return True
            except (RuntimeError, ValueError):
                return False
        if isinstance(v.value, int) and not isinstance(v.value, bool):
            return True  # .cuda(0) / .to(0)
    return False


def tensor_method(ctx, tm: T.TensorMethodVar, args: list[T.Var], kwargs: dict[str, T.Var]) -> T.Var:
    name, t = tm.name, tm.tensor
    if name in ("cuda", "cpu", "xpu"):
        return t
    if name in ("to", "type"):
        kw = dict(kwargs)
        kw.pop("device", None)
        kw.pop("non_blocking", None)
        kw.pop("copy", None) if False else None
        rest = [a for a in args if not _is_device_like(ctx, a)]
        if name == "to" and rest and isinstance(rest[0], T.TensorVar):
            rest = [T.ConstVar(rest[0].meta.dtype)] + rest[1:]
        if not rest and not kw:
            return t
        return ctx.record(_caller(name), [t] + rest, kw)
    if name in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__"):
        raise GraphBreak("GB005", f"Tensor.{name}()")
    if name in ("backward", "register_hook", "retain_grad", "data_ptr", "storage", "untyped_storage"):
        raise GraphBreak("GB002", f"Tensor.{name}()")
    return ctx.record(_caller(name), [t] + args, kwargs)


def container_method(ctx, obj: T.Var, name: str, args: list[T.Var], kwargs: dict[str, T.Var]) -> T.Var:
    if isinstance(obj, T.ListVar):
        if name in ("append", "extend", "insert", "pop", "clear", "remove", "reverse", "sort"):
            lst = ctx.mutate_list(obj)
            if name == "append":
                lst.items.append(args[0])
            elif name == "extend":
                lst.items.extend(ctx.unpack(args[0]))
            elif name == "insert":
                lst.items.insert(ctx.const_of(args[0]), args[1])
            elif name == "pop":
                return lst.items.pop(ctx.const_of(args[0]) if args else -1)
            elif name == "clear":
                lst.items.clear()
            elif name == "reverse":
                lst.items.reverse()
            else:
                raise GraphBreak("GB009", f"list.{name}")
            return T.ConstVar(None)
        if name == "copy":
            return T.ListVar(list(obj.items))
        if name in ("index", "count"):
            vals = [ctx.const_of(i) for i in obj.items]
            return T.ConstVar(getattr(vals, name)(*[ctx.const_of(a) for a in args]))
    if isinstance(obj, T.SetVar):
        return _set_method(ctx, obj, name, args, kwargs)
    if isinstance(obj, T.TupleVar) and name in ("index", "count"):
        vals = [ctx.const_of(i) for i in obj.items]
        return T.ConstVar(getattr(vals, name)(*[ctx.const_of(a) for a in args]))
    if isinstance(obj, T.DictVar):
        if name == "get":
            k = ctx.const_of(args[0])
            return obj.items.get(k, args[1] if len(args) > 1 else T.ConstVar(None))
        if name == "keys":
            return T.ListVar([T.ConstVar(k) for k in obj.items])
        if name == "values":
            return T.ListVar(list(obj.items.values()))
        if name == "items":
            return T.ListVar([T.TupleVar([T.ConstVar(k), v]) for k, v in obj.items.items()])
        if name in ("update", "pop", "setdefault", "clear") and obj.source is None:
            if name == "update":
                obj.items.update(args[0].items if isinstance(args[0], T.DictVar) else {})
                obj.items.update(kwargs)
                return T.ConstVar(None)
            if name == "pop":
                return obj.items.pop(ctx.const_of(args[0]), *(args[1:2]))
            if name == "setdefault":
                return obj.items.setdefault(ctx.const_of(args[0]), args[1] if len(args) > 1 else T.ConstVar(None))
            obj.items.clear()
            return T.ConstVar(None)
        if name == "copy":
            return T.DictVar(dict(obj.items))
    raise GraphBreak("GB009" if name in ("append", "update", "pop") else "GB011",
                     f"{type(obj).__name__}.{name}")


_SET_READ = ("union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset",
             "isdisjoint", "copy")
_SET_WRITE = ("add", "discard", "remove", "update", "intersection_update", "difference_update",
              "symmetric_difference_update", "clear", "pop")


def _set_method(ctx, obj: T.SetVar, name: str, args: list[T.Var], kwargs: dict[str, T.Var]) -> T.Var:
    """Set methods run on the tracked set of constants itself (or a copy)."""
    if kwargs or not (name in _SET_READ or name in _SET_WRITE):
        raise GraphBreak("GB011", f"set.{name}")
    if name in ("add", "discard", "remove"):
        vals = [ctx.set_key(args[0])]
    else:
        vals = [_set_values(ctx, a) for a in args]
    if name == "remove" and vals[0] not in obj.values:
        raise GraphBreak("GB011", "set.remove of a missing element (raises KeyError)")
    if name == "pop" and not obj.values:
        raise GraphBreak("GB011", "pop from an empty set (raises KeyError)")
    target = ctx.mutate_set(obj).values if name in _SET_WRITE else obj.values
    r = getattr(target, name)(*vals)
    if name == "pop":
        return ctx.from_const(r) if isinstance(r, T_CONST) else T.ObjVar(r)
    if isinstance(r, (set, frozenset)):
        return T.SetVar(r)
    return T.ConstVar(r)


def _set_values(ctx, v: T.Var) -> "set | frozenset":
    if isinstance(v, T.SetVar):
        return v.values
    return {ctx.set_key(i) for i in ctx.unpack(ctx.iterate(v))}


def _set(frozen: bool):
    def h(ctx, args, kwargs):
        if kwargs or len(args) > 1:
            raise GraphBreak("GB011", "set() with keyword arguments")
        items = ctx.unpack(ctx.iterate(args[0])) if args else []
        return ctx.make_set(items, frozen)
    return h


def _len(ctx, args, kwargs):
    (v,) = args
    if isinstance(v, T.TensorVar):
        if v.meta.dim() == 0:
            raise GraphBreak("GB011", "len() of a 0-d tensor")
        ctx.reads.append(v.meta.shape[0])
        return T.ConstVar(v.meta.shape[0])
    if isinstance(v, (T.TupleVar, T.ListVar)):
        return T.ConstVar(len(v.items))
    if isinstance(v, T.DictVar):
        return T.ConstVar(len(v.items))
    if isinstance(v, T.SetVar):
        return T.ConstVar(len(v.values))
    if isinstance(v, T.ConstVar):
        return T.ConstVar(len(v.value))
    if isinstance(v, T.ObjVar) and isinstance(v.obj, torch.nn.Module) and hasattr(v.obj, "__len__"):
        return T.ConstVar(len(v.obj))
    raise GraphBreak("GB011", f"len() of {type(v).__name__}")


def _range(ctx, args, kwargs):
    return T.ConstVar(range(*[ctx.const_of(a) for a in args]))


def _enumerate(ctx, args, kwargs):
    items = ctx.unpack(ctx.iterate(args[0]))
    start = ctx.const_of(args[1]) if len(args) > 1 else ctx.const_of(kwargs.get("start", T.ConstVar(0)))
    return T.IterVar([T.TupleVar([T.ConstVar(start + i), v]) for i, v in enumerate(items)])


def _zip(ctx, args, kwargs):
    lists = [ctx.unpack(ctx.iterate(a)) for a in args]
    return T.IterVar([T.TupleVar(list(t)) for t in zip(*lists)])


def _reversed(ctx, args, kwargs):
    return T.IterVar(list(reversed(ctx.unpack(args[0]))))


def _iter(ctx, args, kwargs):
    return ctx.iterate(args[0])


def _next(ctx, args, kwargs):
    it = args[0]
    if isinstance(it, T.IterVar) and it.pos < len(it.items):
        it.pos += 1
        return it.items[it.pos - 1]
    raise GraphBreak("GB011", "next() on an unknown or exhausted iterator")


def _python_type(ctx, v: T.Var) -> type:
    if isinstance(v, T.TensorVar):
        return torch.Tensor
    if isinstance(v, (T.ConstVar, T.SymScalarVar)):
        return type(v.value)
    if isinstance(v, T.ObjVar):
        return type(v.obj)
    if isinstance(v, (T.TupleVar, T.ListVar, T.DictVar, T.SetVar)):
        return v.python_type()
    raise GraphBreak("GB011", f"type of {type(v).__name__}")


def _isinstance(ctx, args, kwargs):
    v, cls = args
    c = ctx.const_of(cls)
    if isinstance(v, T.TensorVar):
        return T.ConstVar(isinstance(v.meta, c))
    if isinstance(v, T.ObjVar):
        return T.ConstVar(isinstance(v.obj, c))
    if isinstance(v, (T.ConstVar, T.SymScalarVar)):
        return T.ConstVar(isinstance(v.value, c))
    t = _python_type(ctx, v)
    cs = c if isinstance(c, tuple) else (c,)
    return T.ConstVar(any(issubclass(t, k) for k in cs))


def _type(ctx, args, kwargs):
    if len(args) != 1:
        raise GraphBreak("GB002", "type() with 3 arguments")
    return T.ObjVar(_python_type(ctx, args[0]))


def _getattr(ctx, args, kwargs):
    name = ctx.const_of(args[1])
    try:
        return ctx.getattr(args[0], name)
    except GraphBreak:
        if len(args) > 2 and isinstance(args[0], T.ObjVar) and not hasattr(args[0].obj, name):
            return args[2]
        raise


def _hasattr(ctx, args, kwargs):
    name = ctx.const_of(args[1])
    v = args[0]
    if isinstance(v, T.ObjVar):
        return T.ConstVar(hasattr(v.obj, name))
    if isinstance(v, T.TensorVar):
        return T.ConstVar(hasattr(v.meta, name))
    raise GraphBreak("GB011", "hasattr on a container")


def _tuple(ctx, args, kwargs):
    return T.TupleVar(ctx.unpack(ctx.iterate(args[0])) if args else [])


def _list(ctx, args, kwargs):
    return T.ListVar(ctx.unpack(ctx.iterate(args[0])) if args else [])


def _dict(ctx, args, kwargs):
    d = {}
    if args:
        if isinstance(args[0], T.DictVar):
            d.update(args[0].items)
        else:
            for pair in ctx.unpack(ctx.iterate(args[0])):
                k, v = ctx.unpack(pair)
                d[ctx.const_of(k)] = v
    d.update(kwargs)
    return T.DictVar(d)


def _sum(ctx, args, kwargs):
    items = ctx.unpack(ctx.iterate(args[0]))
    acc = args[1] if len(args) > 1 else kwargs.get("start", T.ConstVar(0))
    import operator
    for i in items:
        acc = ctx.binary(operator.add, acc, i)
    return acc


def _minmax(fn):
    def h(ctx, args, kwargs):
        items = args if len(args) > 1 else ctx.unpack(ctx.iterate(args[0]))
        if all(T.is_const(i) for i in items) and not kwargs:
            return T.ConstVar(fn(ctx.const_of(i) for i in items))
        raise GraphBreak("GB011", f"{fn.__name__}() of non-constants")
    return h


def _abs(ctx, args, kwargs):
    return ctx.unary(abs, args[0])


def _scalar(fn):
    def h(ctx, args, kwargs):
        if args and isinstance(args[0], T.TensorVar):
            raise GraphBreak("GB005", f"{fn.__name__}() of a tensor")
        return T.ConstVar(fn(*[ctx.const_of(a) for a in args]))
    return h


def _callable(ctx, args, kwargs):
    v = args[0]
    if isinstance(v, T.ObjVar):
        return T.ConstVar(callable(v.obj))
    return T.ConstVar(isinstance(v, (T.FunctionVar, T.BoundMethodVar, T.TensorMethodVar)))


def _noop_sync(ctx, args, kwargs):
    return T.ConstVar(None)


BUILTINS: dict[Any, Callable] = {
    builtins.len: _len, builtins.range: _range, builtins.enumerate: _enumerate, builtins.zip: _zip,
    builtins.reversed: _reversed, builtins.iter: _iter, builtins.next: _next,
    builtins.isinstance: _isinstance, builtins.type: _type, builtins.getattr: _getattr,
    builtins.hasattr: _hasattr, builtins.tuple: _tuple, builtins.list: _list, builtins.dict: _dict,
    builtins.sum: _sum, builtins.min: _minmax(min), builtins.max: _minmax(max), builtins.abs: _abs,
    builtins.int: _scalar(int), builtins.float: _scalar(float), builtins.bool: _scalar(bool),
    builtins.callable: _callable, builtins.set: _set(False), builtins.frozenset: _set(True), torch.cuda.synchronize: _noop_sync,
}
