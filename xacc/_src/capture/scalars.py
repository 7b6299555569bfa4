"""Python ints and floats as graph values: the sentinel probe of torch calls
(the number trackers themselves are C++: SymScalar in translate/Value.h and
translate/TranslateScalars.cpp).

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
import types
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from xacc._src.capture import meta_run


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

def transparent(fn: Any) -> bool:
    """Whether `fn` hands its number arguments to C++ unchanged."""
    if isinstance(fn, (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType,
                       torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    name = getattr(fn, "__qualname__", "") or ""
    if name.startswith("Tensor."):  # Python-level Tensor methods (torch/_tensor.py)
        attr = inspect.getattr_static(torch.Tensor, name[7:], None)
        return name[7:] in _PASS_THROUGH or isinstance(
            attr, (types.MethodDescriptorType, types.WrapperDescriptorType, types.BuiltinFunctionType))
    return False


def sentinel_values(values: list, table: dict) -> list:
    """One distinctive value of the same type per symbolic number."""
    out: list = []
    counts = {int: 0, float: 0}
    for v in values:
        t = type(v)
        base, step = table[t]
        out.append(t(base + step * counts[t]))
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

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # As recorder._Mode: runs only inside the compile callback with the frame
        # hook off; otherwise its first call imports torch._dynamo.
        return False

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
        out = meta_run.run(func, margs, mkw)
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


def probe(fn: Any, make_args: Any, values: list) -> list | None:
    """Sentinels (set A), one per symbolic number with capture-time `values`,
    when the numbers can stay symbolic in `fn`'s call, else None.
    `make_args(sentinels)` builds the call's (args, kwargs)."""
    if not transparent(fn):
        return None
    sigs = []
    result = None
    for table in (_SENTINELS, _SENTINELS_B):
        sent = sentinel_values(values, table)
        seen_values = {(type(v), v): k for k, v in enumerate(sent)}
        mode = _Probe(seen_values)
        prev = meta_run.plain_checks_on()
        try:
            args, kwargs = make_args(sent)
            with mode:
                fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - any failure: the numbers specialize
            return None
        finally:
            meta_run.plain_checks_off(prev)
        if mode.bad or len(mode.seen) != len(seen_values):
            return None
        sigs.append(mode.signature)
        if result is None:
            result = sent
    if sigs[0] != sigs[1]:
        return None
    return result
