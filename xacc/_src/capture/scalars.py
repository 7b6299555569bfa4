"""Python ints and floats as graph values (see `SymScalarVar` in trackers.py).

An int or float argument of the captured frame is a graph input guarded by its
type only, so calling with another value reuses the graph. It stays symbolic
through Python arithmetic (`arith.*` nodes) and through torch calls where it
is an ATen `Scalar`/`float` argument or a wrapped-number `Tensor` argument
(`x * scale`). Every other use needs the concrete value and *specializes* it
(`Ctx.concrete`): branches, comparisons, shapes (`x.view(n, -1)`), indices,
Python builtins. Specializing adds an equality guard on every argument the
value was computed from.

How a torch call learns which Python number is which graph value: the call is
made on meta tensors, so numbers cannot carry identity through the dispatcher.
The symbolic numbers are replaced by *sentinels* (distinctive values of the
same Python type) and the call is probed twice, with two different sentinel
sets, under a mode that records each ATen op, where sentinels arrive, and the
output metadata. The numbers stay symbolic only when every sentinel arrives
unchanged, only in `Scalar`/`float`/wrapped-number positions of ops that also
take a tensor, and both probes dispatch the same ops with the same output
metadata (so no shape or control decision depended on the value); otherwise
they are specialized. The recording run then uses the first sentinel set, and
the recorder turns sentinel arguments into operands bound to the graph values.
Only calls that pass numbers straight to C++ are eligible (torch builtins,
`operator.*`, Tensor methods implemented in C++): Python-level torch functions
may compute derived constants from a number, which a sentinel cannot reveal.
"""

from __future__ import annotations

import inspect
import operator
import types
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from xacc._src.capture import trackers as T

# Python dunders of torch.Tensor (torch/_tensor.py) that pass a number through unchanged.
_PASS_THROUGH = {"__rsub__", "__rtruediv__", "__rdiv__", "__rpow__", "__pow__", "__ipow__",
                 "__rfloordiv__", "__floordiv__", "__rmod__", "__rlshift__", "__rrshift__"}
_OK_ARG_TYPES = {"number", "Optional[number]", "float", "Optional[float]", "Tensor"}  # str(schema type)
_SENTINELS = {
    int: ((1 << 20) + 3, 7919),       # set A base, step
    float: (0.3183098861837907, 1e-3),
}
_SENTINELS_B = {
    int: ((1 << 21) + 11, 7927),
    float: (0.7071067811865476, 1e-3),
}

_BINARY = {operator.add: "arith.add", operator.iadd: "arith.add", operator.sub: "arith.sub",
           operator.isub: "arith.sub", operator.mul: "arith.mul", operator.imul: "arith.mul",
           operator.truediv: "arith.div", operator.itruediv: "arith.div",
           operator.floordiv: "arith.floordiv", operator.ifloordiv: "arith.floordiv",
           operator.mod: "arith.mod", operator.imod: "arith.mod"}


def transparent(fn: Any) -> bool:
    """Whether `fn` hands its number arguments to C++ unchanged."""
    if isinstance(fn, (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
                       torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    name = getattr(fn, "__name__", "")
    if name.startswith("Tensor."):  # builtins_._caller
        attr = inspect.getattr_static(torch.Tensor, name[7:], None)
        return name[7:] in _PASS_THROUGH or isinstance(
            attr, (types.MethodDescriptorType, types.WrapperDescriptorType, types.BuiltinFunctionType))
    return False


def sentinel_values(syms: list[T.SymScalarVar], table: dict) -> dict[int, Any]:
    out: dict[int, Any] = {}
    counts = {int: 0, float: 0}
    for s in syms:
        t = type(s.value)
        base, step = table[t]
        out[id(s)] = t(base + step * counts[t])
        counts[t] += 1
    return out


def _meta(v: Any) -> Any:
    if isinstance(v, torch.Tensor) and v.device.type != "meta":
        return torch.empty_strided(tuple(v.size()), tuple(v.stride()), dtype=v.dtype, device="meta")
    if isinstance(v, (list, tuple)):
        return type(v)(_meta(e) for e in v)
    if isinstance(v, torch.device):
        return torch.device("meta")
    return v


def _is_sentinel(v: Any, values: dict) -> bool:
    return type(v) in (int, float) and (type(v), v) in values


class _Probe(TorchDispatchMode):
    """Runs ATen ops on meta tensors, noting ops, outputs and sentinel positions."""

    def __init__(self, values: dict) -> None:
        super().__init__()
        self.values = values  # (type, value) -> index
        self.seen: set = set()
        self.bad = False
        self.signature: list = []

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):  # noqa: D105
        kwargs = kwargs or {}
        schema = func._schema
        has_tensor = any(isinstance(a, torch.Tensor) for a in args) or \
            any(isinstance(a, torch.Tensor) for a in kwargs.values())
        for i, a in enumerate(schema.arguments):
            v = args[i] if i < len(args) and not a.kwarg_only else kwargs.get(a.name)
            self._scan(v, str(a.type), has_tensor)
        margs = tuple(_meta(a) for a in args)
        mkw = {k: _meta(v) for k, v in kwargs.items()}
        out = func(*margs, **mkw)
        self.signature.append((str(func), _shape_sig(out)))
        return out

    def _scan(self, v: Any, ty: str, has_tensor: bool) -> None:
        if _is_sentinel(v, self.values):
            self.seen.add((type(v), v))
            if ty not in _OK_ARG_TYPES or not has_tensor:
                self.bad = True
        elif isinstance(v, (list, tuple)):
            for e in v:
                if _is_sentinel(e, self.values):
                    self.seen.add((type(e), e))
                    self.bad = True


def _shape_sig(out: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return (tuple(out.shape), tuple(out.stride()), out.dtype)
    if isinstance(out, (list, tuple)):
        return tuple(_shape_sig(e) for e in out)
    return type(out).__name__


def probe(fn: Any, make_args: Any, syms: list[T.SymScalarVar]) -> dict[int, Any] | None:
    """Sentinels (set A) for `syms` when they can stay symbolic in `fn`'s call,
    else None. `make_args(sentinels)` builds the call's (args, kwargs)."""
    if not transparent(fn):
        return None
    sigs = []
    result = None
    for table in (_SENTINELS, _SENTINELS_B):
        sent = sentinel_values(syms, table)
        values = {(type(v), v): k for k, v in sent.items()}
        mode = _Probe(values)
        try:
            args, kwargs = make_args(sent)
            with mode:
                fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - any failure: the numbers specialize
            return None
        if mode.bad or len(mode.seen) != len(values):
            return None
        sigs.append(mode.signature)
        if result is None:
            result = sent
    if sigs[0] != sigs[1]:
        return None
    return result


def collect(vs: Any, out: list[T.SymScalarVar]) -> None:
    for v in vs:
        if isinstance(v, T.SymScalarVar):
            if all(v is not o for o in out):
                out.append(v)
        elif isinstance(v, (T.TupleVar, T.ListVar)):
            collect(v.items, out)
        elif isinstance(v, T.DictVar):
            collect(v.items.values(), out)


def binary(ctx: Any, op: Any, a: T.Var, b: T.Var) -> T.Var | None:
    """`a op b` on numbers when at least one is symbolic, as an arith node; None
    when the operation needs the concrete values."""
    name = _BINARY.get(op)
    num = (int, float)
    if name is None:
        return None
    if not all(isinstance(v, T.SymScalarVar) or (isinstance(v, T.ConstVar) and type(v.value) in num)
               for v in (a, b)):
        return None
    try:
        r = op(a.value, b.value)
    except Exception:  # noqa: BLE001 - let Python raise it
        return None
    if type(r) not in num:
        return None
    ints = type(a.value) is int and type(b.value) is int
    if name in ("arith.floordiv", "arith.mod") and not ints:
        return None
    if name == "arith.div" and type(b.value) is int and b.value == 0:
        return None
    rt = "i64" if type(r) is int else "f64"
    ia = _as(ctx, a, rt)
    ib = _as(ctx, b, rt)
    (vid,) = ctx.builder.add_op(name, [ia, ib], {}, [rt])
    roots: list[T.SymScalarVar] = []
    for v in (a, b):
        if isinstance(v, T.SymScalarVar):
            for root in v.roots:
                if all(root is not o for o in roots):
                    roots.append(root)
    return T.SymScalarVar(r, vid, None, tuple(roots))


def unary(ctx: Any, op: Any, v: T.SymScalarVar) -> T.Var | None:
    if op is operator.pos:
        return v
    if op is operator.neg:
        rt = "i64" if type(v.value) is int else "f64"
        (vid,) = ctx.builder.add_op("arith.neg", [ctx.scalar_vid(v)], {}, [rt])
        return T.SymScalarVar(-v.value, vid, None, v.roots)
    return None


def _as(ctx: Any, v: T.Var, rt: str) -> int:
    if isinstance(v, T.ConstVar):
        return ctx.builder.add_const(float(v.value) if rt == "f64" else v.value, rt)
    vid = ctx.scalar_vid(v)
    if rt == "f64" and type(v.value) is int:
        (vid,) = ctx.builder.add_op("arith.cast", [vid], {}, ["f64"])
    return vid
