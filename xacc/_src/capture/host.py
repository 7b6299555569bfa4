"""The Python side of the C++ translator (xacc._C.capture.translate): what it
needs observed in Python. Tensor inputs become meta twins bound to graph
inputs (with tensor guards on their guard-tree node), torch calls run on metas
under the recorder's dispatch mode (recorder.py), and the recorder answers
which graph value a meta is bound to. Everything else — decoding, symbolic
execution, trackers, guards on non-tensor values, inlining — is C++."""

from __future__ import annotations

from typing import Any

import torch

from xacc._src.capture import dynamic, scalars
from xacc._src.capture import trackers as T
from xacc._src.capture.breaks import GraphBreak
from xacc._src.capture.recorder import meta_like, tensor_type
from xacc._src.capture.translator import CONST_TYPES


class Host:
    def __init__(self, ctx: Any, finish_graph: Any = None) -> None:
        self.ctx = ctx
        # Called by the break emitter with the prefix graph's outputs; returns
        # the GraphFunction the break function calls, or None (convert.py).
        self.finish_graph = finish_graph

    def tensor_input(self, t: torch.Tensor, node: int, guard: bool) -> torch.Tensor:
        ctx = self.ctx
        if type(t) not in (torch.Tensor, torch.nn.Parameter):
            raise GraphBreak("GB011", f"tensor subclass {type(t).__name__}")
        if t.is_sparse or t.layout != torch.strided:
            raise GraphBreak("GB011", "non-strided tensor")
        if node < 0:
            node = ctx.node(T.Source("K", ctx.const_index(t)))
        dims: list[int] = []
        if guard and ctx.plan is not None:
            path = ctx.tree.path(node)  # stable across compiles: the key of past sizes
            if path.startswith("L["):
                dims = ctx.plan.dims_for(t, path)  # also records the sizes seen
            if not ctx.dyn_active:
                dims = []
        if guard:
            ctx.tree.leaf_tensor(node, t, dims)
        dyn = {d: ctx.plan.symbol(int(t.shape[d])) for d in dims}
        vid = ctx.builder.add_input(tensor_type(t, ctx.device, dyn), f"in{len(ctx.inputs)}")
        ctx.inputs.append(node)
        ctx.input_vids.add(vid)
        meta = dynamic.shadow_meta(t, dims) if ctx.shadow_run else meta_like(t)
        ctx.rec.bind(meta, vid)
        return meta

    def record(self, fn: Any, args: tuple, kwargs: dict | None, file: str | None, line: int) -> Any:
        rec = self.ctx.rec
        rec.loc = (file or "<unknown>", line)
        return self._note(rec.call(fn, args, kwargs or {}))

    def _note(self, r: Any) -> Any:
        """Notes values Python reads from tensor metadata (sizes, ...) for the
        dynamic-shape comparison with the shadow run (dynamic.py)."""
        if isinstance(r, torch.device):
            self.ctx.reads.append(torch.device(self.ctx.device))
        elif isinstance(r, CONST_TYPES) or type(r) is torch.Size:
            self.ctx.reads.append(r)
        elif type(r) is tuple and all(isinstance(e, CONST_TYPES) for e in r):
            self.ctx.reads.append(r)
        return r

    def value_of(self, meta: torch.Tensor) -> int:
        return self.ctx.rec.vid_of(meta)

    # -- symbolic numbers (see scalars.py) --------------------------------------
    def scalar_input(self, node: int, is_int: bool) -> int:
        ctx = self.ctx
        vid = ctx.builder.add_input("i64" if is_int else "f64", f"in{len(ctx.inputs)}")
        ctx.inputs.append(node)
        return vid

    def arith(self, op: str, operands: list[int], rtype: str) -> int:
        (vid,) = self.ctx.builder.add_op(op, operands, {}, [rtype])
        return vid

    def scalar_const(self, value: Any, rtype: str) -> int:
        return self.ctx.builder.add_const(value, rtype)

    def marker(self, i: int) -> "_Marker":
        while len(_MARKERS) <= i:
            _MARKERS.append(_Marker(len(_MARKERS)))
        return _MARKERS[i]

    def probe(self, fn: Any, args: tuple, kwargs: dict, values: list) -> list | None:
        fake = [T.SymScalarVar(v, None) for v in values]

        def make(sent: dict) -> tuple:
            s = [sent[id(f)] for f in fake]
            return _subst(args, s), _subst(kwargs, s)

        sent = scalars.probe(fn, make, fake)
        return None if sent is None else [sent[id(f)] for f in fake]

    def record_sym(self, fn: Any, args: tuple, kwargs: dict, sentinels: list, vids: list[int],
                   file: str | None, line: int) -> Any:
        rec = self.ctx.rec
        rec.loc = (file or "<unknown>", line)
        rec.sym = {(type(s), s): v for s, v in zip(sentinels, vids)}
        try:
            return self._note(rec.call(fn, _subst(args, sentinels), _subst(kwargs, sentinels)))
        finally:
            rec.sym = {}

    def set_grad(self, enabled: bool) -> None:
        self.ctx.set_grad(bool(enabled))

    def const_index(self, obj: Any) -> int:
        return self.ctx.const_index(obj)


class _Marker:
    """Stands for symbolic number `i` in the arguments of a probed torch call."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


_MARKERS: list[_Marker] = []


def _subst(v: Any, values: list) -> Any:
    if type(v) is _Marker:
        return values[v.i]
    if type(v) in (tuple, list):
        return type(v)(_subst(e, values) for e in v)
    if type(v) is dict:
        return {k: _subst(e, values) for k, e in v.items()}
    return v
