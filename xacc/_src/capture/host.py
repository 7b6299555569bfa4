"""The Python side of the C++ bytecode translator (xacc._C.capture.translate,
csrc/lib/capture/translate): what it needs observed in Python, and the state of
one translation attempt.

`State` holds what the compiled entry is made of: the graph under
construction (a C++ GraphBuilder), the guard tree, graph inputs (a guard-tree
node each, in parameter order) and entry constants. `Host` is the object the
C++ translator calls back: tensor inputs become meta twins bound to graph
inputs (with tensor guards, dynamic dims per dynamic.py), torch calls run on
metas under the recorder's dispatch mode (recorder.py), symbolic numbers are
probed with sentinels (scalars.py), and grad-mode regions switch the
recorder. Decoding, symbolic execution, trackers, guards on other values,
inlining and break/resume bytecode are C++.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from xacc._C import capture as C
from xacc._src.capture import dynamic, scalars
from xacc._src.capture.breaks import GraphBreak
from xacc._src.capture.recorder import Recorder, meta_like, tensor_type

# Values a torch call may return that Python code can read as constants.
CONST_TYPES = (bool, int, float, str, type(None), type(Ellipsis), torch.dtype, torch.device,
               torch.memory_format, torch.layout, complex, bytes)


class State:
    """One translation attempt of one frame."""

    def __init__(self, name: str, device: str, dynamic_opt: bool | None, plan: Any,
                 shadow_run: bool = False, shadow: Any = None) -> None:
        self.device = device
        # Dynamic shapes (dynamic.py): `plan` knows the dynamic dims; the shadow
        # run traces with them doubled; the real run compares with `shadow`.
        self.plan = plan
        self.shadow_run = shadow_run
        self.dyn_active = shadow_run or shadow is not None
        self.reads: list = []  # values Python read from tensor metadata
        self.builder = C.GraphBuilder(name)
        self.tree = C.GuardTree()
        # Grad mode is guarded at entry; `with torch.no_grad():` inside the frame
        # is a region of the same graph (see set_grad).
        self.entry_grad = torch.is_grad_enabled()
        self.tree.set_grad_mode(self.entry_grad)
        self.consts: list[Any] = []
        self.inputs: list[int] = []  # guard-tree node per graph input, in parameter order
        self.input_vids: set[int] = set()  # their value ids (kept across ctrl.if arms)
        self.rec = Recorder(self.builder, device, self.const_tensor)
        if shadow is not None:
            self.rec.shadow = shadow.ops
            self.rec.pairs = plan.pairs()

    def const_index(self, obj: Any) -> int:
        for i, c in enumerate(self.consts):
            if c is obj:
                return i
        self.consts.append(obj)
        return len(self.consts) - 1

    def const_node(self, obj: Any) -> int:
        return self.tree.node(-1, "K", self.const_index(obj), None)

    def const_tensor(self, t: torch.Tensor) -> int:
        """A real tensor met while tracing (a literal, a closure's tensor): an
        entry constant read as a graph input, unguarded."""
        return self.add_tensor_input(t, self.const_node(t), guard=False)

    def add_tensor_input(self, t: torch.Tensor, node: int, guard: bool = True, dims: list[int] = ()) -> int:
        if guard:
            self.tree.leaf_tensor(node, t, list(dims))
        dyn = {d: self.plan.symbol(int(t.shape[d])) for d in dims}
        vid = self.builder.add_input(tensor_type(t, self.device, dyn), f"in{len(self.inputs)}")
        self.inputs.append(node)
        self.input_vids.add(vid)
        return vid

    def set_grad(self, enabled: bool) -> None:
        """Enters or leaves a grad-mode region. Inside a `no_grad` region of a
        frame entered with grad enabled, ops run on metas under no_grad and read
        tensors that require grad through `aten.detach` (recorder.py), so they
        record no autograd history, exactly like eager. Enabling grad inside a
        frame entered without it cannot be expressed that way: a break."""
        if enabled and not self.entry_grad:
            raise GraphBreak("GB014", "torch.enable_grad() in a frame running without grad")
        self.rec.set_no_grad(not enabled and self.entry_grad)


class Host:
    """The callbacks of the C++ translator (see PyHost in translate_bindings.cpp)."""

    def __init__(self, state: State, finish_graph: Callable[[list[int]], Any] | None = None) -> None:
        self.ctx = state
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
            node = ctx.const_node(t)
        dims: list[int] = []
        if guard and ctx.plan is not None:
            path = ctx.tree.path(node)  # stable across compiles: the key of past sizes
            if path.startswith("L["):
                dims = ctx.plan.dims_for(t, path)  # also records the sizes seen
            if not ctx.dyn_active:
                dims = []
        vid = ctx.add_tensor_input(t, node, guard, dims)
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

    def const_index(self, obj: Any) -> int:
        return self.ctx.const_index(obj)

    def set_grad(self, enabled: bool) -> None:
        self.ctx.set_grad(bool(enabled))

    # -- captured control flow (TranslateControl.cpp) ---------------------------
    def condition(self, meta: torch.Tensor, file: str, line: int) -> int | str:
        """The bool a tensor branch tests: `aten.is_nonzero` (what bool(t)
        dispatches), or a reason why it cannot be one."""
        if meta.numel() != 1:
            return f"the condition has {meta.numel()} elements"
        rec = self.ctx.rec
        rec.loc = (file, line)
        vid = rec.operand(meta)
        self.ctx.builder.set_loc(file, line)
        (c,) = self.ctx.builder.add_op("aten.is_nonzero.default", [vid], {}, ["bool"])
        return c

    def begin_region(self, label: str, inputs: list = ()) -> list[int]:
        """Opens a region; `inputs`: type specs or value ids (their types) of
        its leading parameters (a loop's carried values)."""
        return self.ctx.builder.begin_region(label, list(inputs))

    def end_region(self) -> int:
        return self.ctx.builder.end_region()

    def save_binds(self) -> tuple:
        rec = self.ctx.rec
        return (dict(rec.vids), dict(rec._detached))

    def restore_binds(self, snap: tuple) -> None:
        rec = self.ctx.rec
        vids = dict(snap[0])
        # Graph inputs made inside an arm stay bound (they live outside regions).
        for k, v in rec.vids.items():
            if k not in vids and v in self.ctx.input_vids:
                vids[k] = v
        rec.vids = vids
        rec._detached = dict(snap[1])

    def merge_metas(self, a: torch.Tensor, b: torch.Tensor, s1: tuple, s2: tuple) -> tuple | str:
        """Value ids of one tensor the two arms leave (from their bindings), or
        why they cannot be one value."""
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"a tensor is {_meta_str(a)} in one arm and {_meta_str(b)} in the other"
        if a.stride() != b.stride():
            return f"a tensor has strides {a.stride()} in one arm and {b.stride()} in the other"
        if a.requires_grad != b.requires_grad:
            return "a tensor requires grad in one arm only"
        va, vb = s1[0].get(id(a)), s2[0].get(id(b))
        if va is None or vb is None:
            return "a tensor that is not a traced value"
        return (va, vb)

    def rebound(self, pre: tuple, s1: tuple, s2: tuple) -> list:
        """(meta, id1, id2) for metas an arm rebound (in-place ops)."""
        rec = self.ctx.rec
        alive = {id(m): m for m in rec._alive}
        out = []
        for k, v in pre[0].items():
            v1, v2 = s1[0].get(k, v), s2[0].get(k, v)
            if (v1 != v or v2 != v) and k in alive:
                out.append((alive[k], v1, v2))
        return out

    def add_if(self, cond: int, a: int, b: int, ids_a: list[int], ids_b: list[int], file: str,
               line: int) -> list[int] | str:
        self.ctx.builder.set_loc(file, line)
        try:
            return self.ctx.builder.add_if(cond, a, b, ids_a, ids_b)
        except ValueError as e:
            return str(e)

    def add_loop(self, init: list[int], hc: int, hb: int, cond: int, body: list[int], file: str,
                 line: int) -> list[int] | str:
        self.ctx.builder.set_loc(file, line)
        try:
            return self.ctx.builder.add_loop(init, hc, hb, cond, body)
        except ValueError as e:
            return str(e)

    def carried(self, a: torch.Tensor, b: torch.Tensor) -> int | str:
        """Value id of `b`, the value a loop body leaves for a carried tensor
        that entered as `a`, or why it cannot be carried."""
        if a.dtype != b.dtype or a.shape != b.shape or a.stride() != b.stride():
            return f"a loop-carried tensor changes from {_meta_str(a)} to {_meta_str(b)}"
        if a.requires_grad != b.requires_grad:
            return "a loop-carried tensor changes requires_grad"
        return self.ctx.rec.vid_of(b)

    def bind_fresh(self, like: torch.Tensor, vid: int) -> torch.Tensor:
        m = meta_like(like)
        self.ctx.rec.bind(m, vid)
        return m

    def bind(self, meta: torch.Tensor, vid: int) -> None:
        self.ctx.rec.bind(meta, vid)

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
        return scalars.probe(fn, lambda s: (_subst(args, s), _subst(kwargs, s)), values)

    def record_sym(self, fn: Any, args: tuple, kwargs: dict, sentinels: list, vids: list[int],
                   file: str | None, line: int) -> Any:
        rec = self.ctx.rec
        rec.loc = (file or "<unknown>", line)
        rec.sym = {(type(s), s): v for s, v in zip(sentinels, vids)}
        try:
            return self._note(rec.call(fn, _subst(args, sentinels), _subst(kwargs, sentinels)))
        finally:
            rec.sym = {}


def _meta_str(t: torch.Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}"


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
