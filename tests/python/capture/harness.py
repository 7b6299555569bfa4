"""Shared checks for the capture tests: run a function eagerly and under
xacc.jit over several calls with fresh inputs and compare everything the
caller can observe, then the capture counters.

What "observe" means (`check` and `same`):
  * values, dtypes, shapes, `requires_grad`, `is_leaf` and `is_inference()` of
    tensors; the Python type of
    every value (a Parameter stays a Parameter, 1 stays an int, not 1.0);
    container structure (list vs tuple, dict keys in order, named-tuple types);
  * object identity and aliasing: the objects of the eager run and of the
    jitted run are paired as they are met (inputs first); an object met twice in
    eager must be the same object both times under xacc, and two distinct eager
    objects must stay distinct (two new tensors equal in value included); an
    output that is an input in eager must be that input under xacc. Tensors,
    lists, dicts, sets and other mutable objects are paired; tuples, numbers,
    strings and other immutable values are compared by value only (CPython
    itself shares or copies those freely);
  * tensor aliasing: a tensor whose eager `_base` is a paired object has the
    paired object as its `_base` under xacc, and two paired tensors share
    storage under xacc exactly when they share it in eager;
  * what the call printed, the exception it raised (type and message), and the
    inputs after the call (mutated in place the same way).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import gc
import io
import math
import sys
from typing import Any, Callable

import torch

from xacc.jit import counters, jit


def clone(v: Any, memo: dict | None = None) -> Any:
    """A copy of `v` (tensors, lists, tuples, dicts) in which objects shared in
    `v` stay shared (`f(x, x)` gets one tensor twice) and views stay views of
    (a copy of) their base, strides included; other objects are kept."""
    memo = {} if memo is None else memo
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, torch.Tensor) and v._base is not None and v._base.requires_grad == v.requires_grad:
        # A view (an expanded buffer, a slice): the same view of a copy of its base.
        c = clone(v._base, memo).as_strided(v.size(), v.stride(), v.storage_offset())
    elif isinstance(v, torch.Tensor):
        c = v.detach().clone()
        if type(v) is not torch.Tensor and isinstance(v, torch.nn.Parameter):
            c = torch.nn.Parameter(c, requires_grad=v.requires_grad)
        else:
            c.requires_grad_(v.requires_grad)
    elif isinstance(v, tuple) and hasattr(v, "_fields"):
        c = type(v)(*(clone(e, memo) for e in v))
    elif isinstance(v, (list, tuple)):
        c = type(v)(clone(e, memo) for e in v)
    elif type(v) is collections.OrderedDict:
        c = collections.OrderedDict((k, clone(e, memo)) for k, e in v.items())
    elif type(v) is collections.deque:
        c = collections.deque((clone(e, memo) for e in v), v.maxlen)
    elif isinstance(v, dict) and dataclasses.is_dataclass(v):
        # A dataclass dict (transformers' ModelOutput): made again from its fields.
        c = type(v)(**{f.name: clone(getattr(v, f.name), memo) for f in dataclasses.fields(v)})
    elif isinstance(v, dict):
        c = {k: clone(e, memo) for k, e in v.items()}
    else:
        return v
    memo[id(v)] = c
    return c


_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))

# Compared by value only: CPython interns, folds and copies these freely.
_VALUE_TYPES = (int, float, complex, str, bytes, bool, type(None), tuple, frozenset, range, slice, type,
                torch.dtype, torch.device, torch.Size, torch.memory_format, torch.layout)


def _viewed(view: Any) -> dict:
    """The dict a dict view shows (`view.mapping` is a read-only proxy of it)."""
    (d,) = gc.get_referents(view.mapping)
    return d


def _slot_names(cls: type) -> list:
    """The __slots__ members of `cls` and its bases (no __dict__/__weakref__)."""
    names = []
    for k in cls.__mro__:
        slots = k.__dict__.get("__slots__", ())
        for n in ([slots] if isinstance(slots, str) else slots):
            if n not in ("__dict__", "__weakref__") and n not in names:
                names.append(n)
    return names


def _slot_values(o: Any) -> dict:
    """The set slots of `o` by name (an unset one is absent, as from vars())."""
    return {n: getattr(o, n) for n in _slot_names(type(o)) if hasattr(o, n)}


class Compare:
    """Compares eager values (left) with jitted ones (right), pairing objects
    by identity across every `walk` (see the module docstring)."""

    def __init__(self, atol: float = 1e-5, rtol: float = 1e-4) -> None:
        self.atol, self.rtol = atol, rtol
        self.left: dict[int, Any] = {}   # id(eager object) -> jitted object
        self.right: dict[int, Any] = {}  # id(jitted object) -> eager object
        self.keep: list = []             # keeps paired objects alive (ids stay unique)
        self.tensors: list[tuple[torch.Tensor, torch.Tensor, str]] = []
        self._pass: set[int] = set()

    def pair(self, a: Any, b: Any, path: str) -> None:
        """Pairs `a` with `b`, checking that neither was paired with another object."""
        if id(a) in self.left:
            assert self.left[id(a)] is b, (
                f"{path}: eager has here the same object as before; xacc returns a different one "
                f"(identity lost: {type(a).__name__})")
            return
        assert id(b) not in self.right, (
            f"{path}: xacc returns here an object seen before, where eager has a distinct one "
            f"(two eager objects merged into one: {type(b).__name__})")
        self.left[id(a)] = b
        self.right[id(b)] = a
        self.keep += [a, b]

    def walk(self, a: Any, b: Any, path: str = "value") -> None:
        """One comparison pass over `a` and `b` (call `new_pass` between passes)."""
        assert type(a) is type(b), f"{path}: type {type(a).__name__} vs {type(b).__name__}"
        if isinstance(a, _VALUE_TYPES) and not isinstance(a, tuple):
            if isinstance(a, float) and math.isnan(a):
                assert math.isnan(b), f"{path}: {a!r} != {b!r}"
            else:
                assert a == b, f"{path}: {a!r} != {b!r}"
            return
        if isinstance(a, tuple):
            assert len(a) == len(b), f"{path}: {a!r} vs {b!r}"
            for i, (x, y) in enumerate(zip(a, b)):
                self.walk(x, y, f"{path}[{i}]")
            return
        self.pair(a, b, path)
        if id(a) in self._pass:
            return
        self._pass.add(id(a))
        if isinstance(a, torch.Tensor):
            self._tensor(a, b, path)
        elif isinstance(a, list):
            assert len(a) == len(b), f"{path}: {a!r} vs {b!r}"
            for i, (x, y) in enumerate(zip(a, b)):
                self.walk(x, y, f"{path}[{i}]")
        elif isinstance(a, dict):
            assert list(a.keys()) == list(b.keys()), f"{path}: keys {list(a)} vs {list(b)}"
            if isinstance(a, collections.defaultdict) and isinstance(a.default_factory, type):
                assert a.default_factory is b.default_factory, f"{path}: default_factory"
            for k in a:
                self.walk(a[k], b[k], f"{path}[{k!r}]")
        elif isinstance(a, (set, frozenset)):
            assert a == b, f"{path}: {a!r} != {b!r}"
        elif isinstance(a, collections.deque):
            assert a.maxlen == b.maxlen, f"{path}: maxlen {a.maxlen} vs {b.maxlen}"
            self.walk(list(a), list(b), f"{path}.items")
        elif isinstance(a, _DICT_VIEWS):  # a live view: of the paired dict
            self.walk(_viewed(a), _viewed(b), f"{path}.mapping")
        elif a is not b:
            if hasattr(a, "__dict__") and type(a).__eq__ is object.__eq__:
                self.walk(vars(a), vars(b), f"{path}.__dict__")
            elif _slot_names(type(a)) and type(a).__eq__ is object.__eq__:
                self.walk(_slot_values(a), _slot_values(b), f"{path}.__slots__")
            else:
                assert a == b, f"{path}: {a!r} != {b!r}"

    def _tensor(self, a: torch.Tensor, b: torch.Tensor, path: str) -> None:
        assert a.shape == b.shape and a.dtype == b.dtype, f"{path}: {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
        assert a.device == b.device, f"{path}: device {a.device} vs {b.device}"
        assert a.requires_grad == b.requires_grad, f"{path}: requires_grad {a.requires_grad} vs {b.requires_grad}"
        assert a.is_leaf == b.is_leaf, f"{path}: is_leaf {a.is_leaf} vs {b.is_leaf}"
        assert a.is_inference() == b.is_inference(), f"{path}: is_inference {a.is_inference()} vs {b.is_inference()}"
        with torch.no_grad():
            if a.dtype == torch.bool or not (a.is_floating_point() or a.is_complex()):
                ok = torch.equal(a, b)
            else:
                ok = torch.allclose(a, b, atol=self.atol, rtol=self.rtol, equal_nan=True)
        assert ok, f"{path}: values differ:\n{a}\n{b}"
        if not any(t is a for t, _, _ in self.tensors):
            self.tensors.append((a, b, path))

    def new_pass(self) -> None:
        self._pass = set()

    def aliasing(self) -> None:
        """`_base` and storage sharing of every paired tensor, as in eager."""
        for a, b, path in self.tensors:
            ab, bb = a._base, b._base
            if ab is not None and id(ab) in self.left:
                assert bb is self.left[id(ab)], (
                    f"{path}: in eager a view of {self._where(ab)}; under xacc "
                    f"{'not a view' if bb is None else 'a view of another tensor'}")
            elif bb is not None and id(bb) in self.right:
                assert False, f"{path}: under xacc a view of {self._where(self.right[id(bb)])}; not in eager"
        groups: dict[tuple, list] = {}
        for a, b, path in self.tensors:
            if a.layout != torch.strided or a.device.type == "meta" or a.numel() == 0:
                continue
            groups.setdefault(("eager", a.untyped_storage().data_ptr()), []).append(path)
            if b.layout == torch.strided and b.numel() > 0:
                groups.setdefault(("xacc", b.untyped_storage().data_ptr()), []).append(path)
        shared = {side: sorted(sorted(g) for k, g in groups.items() if k[0] == side and len(set(g)) > 1)
                  for side in ("eager", "xacc")}
        assert shared["eager"] == shared["xacc"], (
            f"tensors sharing storage: eager {shared['eager']}, xacc {shared['xacc']}")

    def _where(self, obj: Any) -> str:
        for a, _b, path in self.tensors:
            if a is obj:
                return path
        return f"a {type(obj).__name__}"


def same(a: Any, b: Any, atol: float = 1e-5, rtol: float = 1e-4) -> None:
    """`a` (eager) and `b` (jitted) compare equal in value, type, structure and
    identity among their parts (see the module docstring); atol=rtol=0: exactly."""
    c = Compare(atol, rtol)
    c.walk(a, b)
    c.aliasing()


def _run(fn: Callable, args: tuple) -> tuple[Any, BaseException | None, str]:
    """fn(*args): (result, exception, printed text); the text is printed again
    (tests that read capsys still see it)."""
    buf = io.StringIO()
    out, exc = None, None
    try:
        with contextlib.redirect_stdout(buf):
            out = fn(*args)
    except Exception as e:  # noqa: BLE001 - compared with eager's
        exc = e
    sys.stdout.write(buf.getvalue())
    return out, exc, buf.getvalue()


def compare_call(fn: Callable, jfn: Callable, args: tuple, atol: float = 1e-5) -> Any:
    """Calls fn and jfn on two clones of `args` and compares everything the
    caller can observe (module docstring). Returns the jitted result."""
    eargs, jargs = clone(args), clone(args)
    c = Compare(atol)
    c.walk(eargs, jargs, "args")  # pairs the inputs
    expected, eexc, eout = _run(fn, eargs)
    got, jexc, jout = _run(jfn, jargs)
    if eexc is not None or jexc is not None:
        assert type(eexc) is type(jexc) and str(eexc) == str(jexc), (
            f"exception: eager {eexc!r}, xacc {jexc!r}")
    assert eout == jout, f"printed output differs:\neager: {eout!r}\nxacc:  {jout!r}"
    c.new_pass()
    c.walk(expected, got, "result")
    c.new_pass()
    c.walk(eargs, jargs, "args after the call")  # inputs mutated the same way
    c.aliasing()
    return got


def check(fn: Callable, make_args: Callable[[int], tuple], *, calls: int = 3, graphs: int | None = None,
          breaks: int | None = None, max_recompiles: int = 0, min_graphs: int | None = None,
          atol: float = 1e-5, **jit_kwargs: Any) -> dict:
    jfn = jit(fn, **jit_kwargs)
    for i in range(calls):
        torch.manual_seed(i)
        compare_call(fn, jfn, make_args(i), atol)
    c = counters()
    assert c["internal_errors"] == 0, c
    if graphs is not None:
        assert c["graphs"] == graphs, c
    if min_graphs is not None:
        assert c["graphs"] >= min_graphs, c
    if breaks is not None:
        assert c["breaks"] == breaks, c
    assert c["recompiles"] <= max_recompiles, c
    return c


def r(*shape: int) -> Callable[[int], tuple]:
    return lambda i: (torch.randn(*shape),)


def r2(*shape: int) -> Callable[[int], tuple]:
    return lambda i: (torch.randn(*shape), torch.randn(*shape))
