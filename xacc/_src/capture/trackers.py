"""Sources and value trackers of the translator.

A *source* says how to fetch a value again from a frame (`L['x'].fc1.weight`);
sources drive guards (each becomes a node of the C++ guard tree) and
reconstruction (bytecode that loads the value in generated code). A *tracker*
(`Var`) is the translator's symbolic stand-in for one Python value: a tensor
(its meta twin, bound to a GIR value), a constant, a container of trackers, an
arbitrary Python object (module, function, user object), a bound method, an
iterator over known items, or the NULL that CPython 3.11 pushes for calls.
"""

from __future__ import annotations

from typing import Any

import torch


class Source:
    """A path from a frame root to a value."""

    __slots__ = ("kind", "index", "key", "parent")

    def __init__(self, kind: str, index: int = 0, key: Any = None, parent: "Source | None" = None) -> None:
        self.kind = kind  # L G C K A I
        self.index = index
        self.key = key
        self.parent = parent

    def attr(self, name: str) -> "Source":
        return Source("A", 0, name, self)

    def item(self, key: Any) -> "Source":
        if isinstance(key, int) and not isinstance(key, bool):
            return Source("I", key, None, self)
        return Source("I", 0, key, self)

    def node(self, tree: Any, memo: dict) -> int:
        k = self.ident()
        n = memo.get(k)
        if n is None:
            parent = self.parent.node(tree, memo) if self.parent is not None else -1
            n = tree.node(parent, self.kind, self.index, self.key)
            memo[k] = n
        return n

    def ident(self) -> tuple:
        return (self.kind, self.index, self.key if not isinstance(self.key, (list, dict)) else id(self.key),
                self.parent.ident() if self.parent is not None else None)

    def name(self, varnames: tuple[str, ...] = ()) -> str:
        if self.kind == "L":
            return f"L[{varnames[self.index]!r}]" if self.index < len(varnames) else f"L[{self.index}]"
        if self.kind == "G":
            return f"G[{self.key!r}]"
        if self.kind == "C":
            return f"C[{self.index}]"
        if self.kind == "K":
            return f"K[{self.index}]"
        base = self.parent.name(varnames) if self.parent is not None else "?"
        if self.kind == "A":
            return f"{base}.{self.key}"
        return f"{base}[{self.key if self.key is not None else self.index!r}]"


class Var:
    source: Source | None = None

    def python_type(self) -> type:
        raise NotImplementedError


class NullVar(Var):
    def __repr__(self) -> str:
        return "NULL"


class TensorVar(Var):
    """A tensor: its meta twin is bound to a GIR value in the Recorder."""

    def __init__(self, meta: torch.Tensor, source: Source | None = None) -> None:
        self.meta = meta
        self.source = source

    def python_type(self) -> type:
        return torch.Tensor

    def __repr__(self) -> str:
        return f"TensorVar({tuple(self.meta.shape)}, {self.meta.dtype})"


class ConstVar(Var):
    def __init__(self, value: Any, source: Source | None = None) -> None:
        self.value = value
        self.source = source

    def python_type(self) -> type:
        return type(self.value)

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


class TupleVar(Var):
    def __init__(self, items: list[Var], source: Source | None = None) -> None:
        self.items = list(items)
        self.source = source

    def python_type(self) -> type:
        return tuple


class ListVar(Var):
    """A list; `source` is set for lists that came from outside (never mutated here)."""

    def __init__(self, items: list[Var], source: Source | None = None) -> None:
        self.items = list(items)
        self.source = source

    def python_type(self) -> type:
        return list


class DictVar(Var):
    def __init__(self, items: dict[Any, Var], source: Source | None = None) -> None:
        self.items = dict(items)
        self.source = source

    def python_type(self) -> type:
        return dict


class ObjVar(Var):
    """Any other Python object: modules, functions, classes, user objects."""

    def __init__(self, obj: Any, source: Source | None = None) -> None:
        self.obj = obj
        self.source = source

    def python_type(self) -> type:
        return type(self.obj)

    def __repr__(self) -> str:
        return f"Obj({type(self.obj).__name__})"


class TensorMethodVar(Var):
    def __init__(self, tensor: TensorVar, name: str) -> None:
        self.tensor = tensor
        self.name = name


class BoundMethodVar(Var):
    """A Python function bound to a tracked `self` (module or user object)."""

    def __init__(self, func: Any, self_var: Var, source: Source | None = None) -> None:
        self.func = func
        self.self_var = self_var
        self.source = source


class FunctionVar(Var):
    """A function made by MAKE_FUNCTION while tracing (closures, comprehensions)."""

    def __init__(self, code: Any, globals_: dict, defaults: tuple, kwdefaults: dict | None,
                 cells: list["Cell"], name: str) -> None:
        self.code = code
        self.globals = globals_
        self.defaults = defaults
        self.kwdefaults = kwdefaults or {}
        self.cells = cells
        self.name = name


class SetVar(Var):
    """A set (or frozenset) of constants. `values` is a real Python set built by
    the same operations as the program's, so iteration order matches eager;
    `source` is set for sets that came from outside (never mutated here)."""

    def __init__(self, values: "set | frozenset", source: Source | None = None) -> None:
        self.values = values
        self.source = source

    def python_type(self) -> type:
        return type(self.values)


class GradModeVar(Var):
    """`torch.no_grad()` / `torch.enable_grad()` before `with` enters it."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled


class GradExitVar(Var):
    """The `__exit__` that BEFORE_WITH pushes for a grad-mode region: calling it
    restores the grad mode the region was entered with."""

    def __init__(self, previous: bool) -> None:
        self.previous = previous


class SuperVar(Var):
    """`super()` / `super(cls, obj)`: attribute lookup starts after `cls` in the
    MRO of the tracked object's type."""

    def __init__(self, cls: type, self_var: Var) -> None:
        self.cls = cls
        self.self_var = self_var


class Cell:
    """A closure cell shared between a frame and the functions it creates."""

    __slots__ = ("var",)

    def __init__(self, var: Var | None = None) -> None:
        self.var = var


class CellRefVar(Var):
    def __init__(self, cell: Cell) -> None:
        self.cell = cell


class IterVar(Var):
    """An iterator over known items (range, list, tuple, zip, enumerate, dict keys)."""

    def __init__(self, items: list[Var]) -> None:
        self.items = list(items)
        self.pos = 0

    def python_type(self) -> type:
        return type(iter(()))


def is_const(v: Var) -> bool:
    if isinstance(v, ConstVar):
        return True
    if isinstance(v, TupleVar):
        return all(is_const(i) for i in v.items)
    return False


def const_value(v: Var) -> Any:
    if isinstance(v, ConstVar):
        return v.value
    if isinstance(v, TupleVar):
        return tuple(const_value(i) for i in v.items)
    raise TypeError(v)


class SymScalarVar(Var):
    """A Python int or float that is a graph value rather than a constant: an
    argument of the captured frame (a graph input, guarded by type only) or the
    result of arithmetic on such values (an `arith.*` node). `value` is the value
    seen at capture; `roots` are the argument trackers it was computed from. A
    use that needs the concrete value (a branch, a shape, a Python builtin)
    *specializes* it: every root gets an equality guard and the use sees the
    capture-time value (see `Ctx.concrete`)."""

    def __init__(self, value: Any, vid: "int | None", source: Source | None = None,
                 roots: "tuple[SymScalarVar, ...]" = ()) -> None:
        self.value = value
        self.vid = vid  # graph value; None until first used by the graph
        self.source = source
        self.roots = roots or (self,)

    def python_type(self) -> type:
        return type(self.value)

    def __repr__(self) -> str:
        return f"SymScalar({self.value!r})"
