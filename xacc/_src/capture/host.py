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

`State` lives in host_state.py (re-exported here); this module holds `Host`
and the values it hands the translator (SymSize, SymShape, markers).
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from xacc._src.capture import dynamic, function_modes, scalars
from xacc._src.capture.symexpr import Expr
from xacc._src.capture.breaks import GraphBreak
from xacc._src.capture.recorder import meta_like
from xacc._src.capture.host_state import CONST_TYPES, State, _argument_rooted

__all__ = ["CONST_TYPES", "Host", "State", "SymShape", "SymSize"]


def _inference_made(meta: torch.Tensor) -> bool:
    """Whether eager's tensor is an inference tensor or a view made in
    inference mode (whose in-place update in normal mode eager refuses)."""
    if meta.is_inference():
        return True
    return meta._is_view() and \
        torch._C._autograd._get_creation_meta(meta) == torch._C._autograd.CreationMeta.INFERENCE_MODE


def _reaches(meta: torch.Tensor, leaves: dict[int, torch.Tensor]) -> bool:
    """Whether `meta` is one of `leaves` or its autograd graph accumulates into one."""
    if id(meta) in leaves:
        return True
    todo = [meta.grad_fn] if meta.grad_fn is not None else []
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)  # AccumulateGrad: the leaf it feeds
        if var is not None and id(var) in leaves:
            return True
        todo.extend(n for n, _ in node.next_functions)
    return False


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
            if _argument_rooted(path):
                dims = ctx.plan.dims_for(t, path)  # also records the sizes seen
            if not ctx.dyn_active:
                dims = []
        vid = ctx.add_tensor_input(t, node, guard, dims)
        meta = dynamic.shadow_meta(t, dims, ctx.plan) if ctx.shadow_run else meta_like(t)
        ctx.rec.bind(meta, vid)
        if guard:
            ctx.rec.known.input(meta, t, node, ctx.tree.path(node))
        return meta

    def tensor_inputs(self, items: list) -> list:
        """`tensor_input` for each (tensor, node, guard) of `items`, in order,
        in one call from C++ (Note [Tensor arguments in one call] in
        translate/TranslateDriver.cpp): their metas, ending at the first that
        raised a GraphBreak, with that exception in its place."""
        out: list = []
        for t, node, guard in items:
            try:
                out.append(self.tensor_input(t, node, guard))
            except GraphBreak as e:
                out.append(e)
                break
        return out

    # -- TorchFunctionModes the frame entered (function_modes.py) -----------------
    def set_function_modes(self, n: int) -> None:
        self.ctx.function_modes = int(n)

    def mode_probe(self, fn: Any, args: tuple, kwargs: dict | None) -> tuple:
        _no_torch_function(args, kwargs)
        r = function_modes.probe(self.ctx.rec, fn, args, kwargs or {})
        if r[0] == "ran":
            return ("ran", self._note(_no_torch_function(r[1]), fn, args, kwargs))
        return r

    def _no_function_mode(self, what: str) -> None:
        if self.ctx.function_modes:
            raise GraphBreak("GB023", f"{what} while a TorchFunctionMode entered in the frame is on the stack "
                                      "(eager would call the mode)")

    def known_value(self, meta: Any, conv: str) -> Any:
        self._no_function_mode("a tensor's value read")
        """Python's `conv` (bool, int, float, index, item) of tensor `meta` when
        its value is known (Note [Known tensor values] in known.py), else None."""
        return self.ctx.rec.known_scalar(meta, conv)

    def record(self, fn: Any, args: tuple, kwargs: dict | None, file: str | None, line: int) -> Any:
        self._no_function_mode(getattr(fn, "__name__", "a torch call"))
        rec = self.ctx.rec
        rec.loc = (file or "<unknown>", line)
        _no_torch_function(args, kwargs)
        return self._note(_no_torch_function(rec.call(fn, args, kwargs or {})), fn, args, kwargs)

    def _note(self, r: Any, fn: Any = None, args: tuple = (), kwargs: dict | None = None) -> Any:
        """Notes values Python reads from tensor metadata (sizes, ...) for the
        dynamic-shape comparison with the shadow run (dynamic.py). In the real
        run, a size read that differs from the shadow run's becomes a symbolic
        size (SymSize) when it is a dim of a traced tensor."""
        ctx = self.ctx
        if isinstance(r, torch.device):
            ctx.reads.append(torch.device(ctx.device))
            return r
        if isinstance(r, CONST_TYPES) or type(r) is torch.Size or (
                type(r) is tuple and all(isinstance(e, CONST_TYPES) for e in r)):
            ctx.reads.append(r)
            i = len(ctx.reads) - 1
            if ctx.shadow_reads is not None and i < len(ctx.shadow_reads) and fn is not None:
                s = ctx.shadow_reads[i]
                if s != r:
                    sym = self._size_read(r, s, fn, args, kwargs or {})
                    if sym is not None:
                        ctx.reads[i] = s
                        return sym
                elif self._size_unsure(fn, args, kwargs or {}):
                    # The same value at both sizes, yet no constant is known for it:
                    # `x[:16].size(0)` is 16 at batch 20 and at its shadow, 5 at
                    # batch 5. Taken as the number it is here, it would be a
                    # constant of the graph that no guard checks (a silently wrong
                    # size): the frame compiles with static shapes.
                    ctx.rec._mismatch("a size read with the same value at both sizes but no constant expression")
        return r

    def _size_unsure(self, fn: Any, args: tuple, kwargs: dict) -> bool:
        """Whether a size read of a traced tensor (`t.shape`, `t.size()`,
        `t.size(d)`, `len(t)`, `t.numel()`) reads a dim whose expression (Note
        [Size expressions]) is not a constant."""
        ctx = self.ctx
        t = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if t is None or id(t) not in ctx.rec.vids or t.dim() == 0:
            return False
        if (fn is getattr and args[1:] == ("shape",)) or (fn is torch.Tensor.size and len(args) == 1 and not kwargs) \
                or fn in (torch.Tensor.numel, torch.Tensor.nelement):
            read = range(t.dim())
        elif fn is len:
            read = range(1)
        elif fn is torch.Tensor.size:
            d = args[1] if len(args) > 1 else kwargs.get("dim")
            if type(d) is not int or not -t.dim() <= d < t.dim():
                return False
            read = range(d % t.dim(), d % t.dim() + 1)
        else:
            return False
        dims = ctx.dim_exprs.get(ctx.rec.vids[id(t)])
        return any(dims is None or d >= len(dims) or dims[d] is None or dims[d].constant() is None for d in read)

    def _size_read(self, r: Any, s: Any, fn: Any, args: tuple, kwargs: dict) -> Any:
        ctx = self.ctx
        t = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if t is None or id(t) not in ctx.rec.vids:
            return None
        vid = ctx.rec.vids[id(t)]
        shape = tuple(int(d) for d in t.shape)
        if type(r) is torch.Size and type(s) is torch.Size and len(r) == len(s) and tuple(r) == shape and (
                (fn is getattr and args[1:] == ("shape",)) or (fn is torch.Tensor.size and len(args) == 1)):
            return SymShape(SymSize(a, ctx.size_node(vid, d, a, b)) if a != b else a
                            for d, (a, b) in enumerate(zip(r, s)))
        if fn is torch.Tensor.stride and not kwargs and tuple(t.stride()) == (r if len(args) == 1 else ()) \
                and type(r) is tuple and type(s) is tuple and len(r) == len(s):
            # Note [Symbolic strides]: a stride of a tensor with a dynamic dim
            # (`as_strided` strides computed in Python from `t.stride()`, Longformer's
            # `_chunk`) is an `aten.sym_stride.int` of the graph value, with the
            # expression its pair identifies (State.stride_node); a stride equal in
            # both runs does not depend on the dynamic dims (a product of sizes,
            # increasing in each).
            return tuple(SymSize(a, ctx.stride_node(vid, d, a, b)) if a != b else a
                         for d, (a, b) in enumerate(zip(r, s)))
        if type(r) is not int or type(s) is not int:
            return None
        if fn is torch.Tensor.stride and (len(args) > 1 or "dim" in kwargs):
            d = args[1] if len(args) > 1 else kwargs.get("dim")
            if type(d) is not int or not -len(shape) <= d < len(shape) or t.stride(d) != r:
                return None
            return SymSize(r, ctx.stride_node(vid, d % len(shape), r, s))
        if fn is len:
            d = 0
        elif fn is torch.Tensor.size:
            d = args[1] if len(args) > 1 else kwargs.get("dim")
            if type(d) is not int or not -len(shape) <= d < len(shape):
                return None
            d %= len(shape)
        elif fn in (torch.Tensor.numel, torch.Tensor.nelement) and len(args) == 1:
            (n,) = ctx.builder.add_op("aten.sym_numel.default", [vid], {}, ["i64"])
            ctx.symvals[n] = (r, s)
            dims = ctx.dim_exprs.get(vid)
            if dims is not None and all(e is not None for e in dims):
                prod = Expr.const(1)
                for e in dims:
                    prod = prod * e
                ctx.exprs[n] = prod
            return SymSize(r, n)
        else:
            return None
        if shape[d] != r:
            return None
        return SymSize(r, ctx.size_node(vid, d, r, s))

    def size_argument(self, node: int, value: int) -> Any:
        """An int argument of a translation with dynamic dims.

        Note [Size arguments]
        ~~~~~~~~~~~~~~~~~~~~~
        A size carried across a graph break (`s = x.shape; print(s); x.view(s[0], -1)`)
        reaches the resume function as int arguments, not as a dim of a tensor.
        Such an int keeps a size history like a dim's (dynamic.Plan.int_dynamic):
        once its value changed (or, in a fragment's first compile, when it has the
        size of the group's dynamic-dim decision) it is a size of its own: the
        shadow run sees its value times its symbol's prime, the real run a
        symbolic size whose graph value is an `i64` input with the symbol's
        expression (Note [Size expressions] in symexpr.py), guarded >= 2 and equal
        to the dims sharing its symbol. Everything else is as for a dim: using it
        as a plain number falls back to static shapes.
        Only fragments (Note [Fragment groups] in dynamic.py) do this: an int
        argument of the user's own function stays a symbolic number (scalars.py).
        Returns None (an ordinary int argument), the shadow run's value, or a SymSize."""
        ctx = self.ctx
        if ctx.plan is None:
            return None
        path = ctx.tree.path(node)
        if not _argument_rooted(path) or not ctx.plan.int_dynamic(value, path) or not ctx.dyn_active:
            return None
        if ctx.shadow_run:
            ctx.plan.symbol(value)
            return ctx.plan.perturb(value)
        return SymSize(value, ctx.add_size_input(node, value))

    def dynamic_shapes(self) -> bool:
        """Whether this translation has dynamic dims (the shadow run, or the
        real run compared with it): only then can a size Python reads depend
        on one (Note [Symbolic sizes] in translate/TranslateScalars.cpp)."""
        return self.ctx.dyn_active

    def size_concrete(self, vid: int) -> int:
        """Whether symbolic size `vid` is a constant: its expression has no
        dynamic dim (Note [Size expressions] in symexpr.py; having the same
        value in the shadow run is not enough: `(b - 4) * (b - 8)` at b = 4)."""
        e = self.ctx.exprs.get(vid)
        return int(e is not None and e.constant() is not None)

    def size_compare(self, op: str, va: int, ca: int, vb: int, cb: int) -> bool | None:
        """`a op b` on symbolic sizes (value id, capture-time value; id -1 for an
        int constant). Sides whose expressions differ by a constant (`attn.size(0)`
        and `bsz * heads`: equal; Note [Size expressions] in symexpr.py), or
        whose difference has one sign at every size >= 2 (`k.numel() == 0`:
        Expr.compare_zero), are decided for every size, without a guard. Otherwise, when the outcome is
        the same in the shadow run and both sides can be named for a guard (a
        dynamic input dim, by its symbol, or a number), returns it with a guard
        on the relation that held (Note [Size relations] in
        TranslateScalars.cpp). None otherwise (the size then specializes: GB022)."""
        ctx = self.ctx
        fn = _COMPARE[op]
        ea = Expr.const(ca) if va < 0 else ctx.exprs.get(va)
        eb = Expr.const(cb) if vb < 0 else ctx.exprs.get(vb)
        if va >= 0 and va == vb:
            return bool(fn(ca, cb))  # one graph value on both sides
        if ea is not None and eb is not None:
            d = (ea - eb).constant()
            if d is not None:
                return bool(fn(d, 0))  # a op b exactly when a - b op 0: for every size
            held = (ea - eb).compare_zero(op)
            if held is not None and held == bool(fn(ca, cb)):
                return held  # the same for every size the guards admit (`keys.numel() == 0`)
        sides = []
        for vid, c, e in ((va, ca, ea), (vb, cb, eb)):
            if vid < 0:
                sides.append(((c, c), None))
                continue
            pair = ctx.symvals.get(vid)
            if pair is None or e is None:
                return None
            if e.constant() is not None:  # no dynamic dim in it: fixed by the tensor guards
                sides.append((pair, None))
                continue
            named = [s for s in ctx.sym_dims if e == Expr.symbol(s)]
            if not named:
                return None  # a size computed from dynamic dims: no guard can name it
            sym = named[0]
            sides.append((pair, sym))
        (pa, sa), (pb, sb) = sides
        if sa is None and sb is None:
            return None
        real, shadow = fn(pa[0], pb[0]), fn(pa[1], pb[1])
        if real != shadow:
            return None
        held = op if real else _NEGATE[op]
        if sa is None:  # constant op size: guard it as size (flipped op) constant
            (pa, sa), (pb, sb) = (pb, sb), (pa, sa)
            held = _FLIP[held]
        if sa == sb or (sb is None and _IMPLIED_BY_GUARD.get(held, lambda c: False)(pb[0])):
            return bool(real)  # already checked: dims of one symbol are guarded equal, dynamic dims >= 2
        _, da, na = ctx.sym_dims[sa]
        if sb is not None:
            _, db, nb = ctx.sym_dims[sb]
            key = (na, da, held, nb, db, 0)
            what = f"{sa} {held} {sb}"
        else:
            key = (na, da, held, -1, 0, int(pb[0]))
            what = f"{sa} {held} {pb[0]}"
        if key not in ctx.size_relations:
            ctx.size_relations.add(key)
            ctx.tree.dim_relation(*key, what)
        return bool(real)

    def value_of(self, meta: torch.Tensor) -> int:
        """Called by C++ only for a meta `rec.vids` does not bind (PyHost reads
        bound ones in place: Note [Bindings read in place] in translate_bindings.cpp)."""
        return self.ctx.rec.vid_of(meta)

    def check_escape(self, meta: torch.Tensor) -> None:
        """Raises when the graph value `meta` may not leave the graph (an
        output, a value live at a break): what eager's tensor is, the
        executor's would not be. Asked only once `set_inference` or
        `set_requires_grad` was called (Note [Escape checks] in translate/Translator.h)."""
        if self.ctx.inference_used and _inference_made(meta):
            # The executor makes ordinary tensors (Note [Entry-guarded modes]).
            raise GraphBreak("GB023", "a tensor made under torch.inference_mode() would leave the graph "
                                      "(an inference tensor, or a view made in inference mode, in eager)")
        if self.ctx.made_leaves and meta.requires_grad and _reaches(meta, self.ctx.made_leaves):
            raise GraphBreak("GB002", "a tensor made to require grad in the graph (requires_grad_) "
                                      "would leave it: Note [Tensors made leaves]")

    def set_requires_grad(self, meta: torch.Tensor, flag: bool) -> None:
        """`t.requires_grad_(flag)` on a tensor the graph made.

        Note [Tensors made leaves]
        ~~~~~~~~~~~~~~~~~~~~~~~~~~
        The flag is set on the tensor's meta twin (which raises eager's error
        where eager would: a non-leaf, an integer dtype). Ops after it run on
        the metas with autograd, so is_leaf, requires_grad and `grad_fn is
        None` of every tensor made later are eager's facts, answered from the
        metas. The graph's executor does not replay the flag, so no tensor
        whose autograd history reaches such a leaf may leave the graph (an
        output, a value live at a break): that is a break (value_of), and the
        frame runs in Python. What stays inside (`w.is_leaf`, `(w * 2).detach()`)
        is captured."""
        try:
            meta.requires_grad_(bool(flag))
        except RuntimeError as e:
            raise GraphBreak("GB024", f"Tensor.requires_grad_: {e}") from None
        if flag:
            self.ctx.made_leaves[id(meta)] = meta

    def const_index(self, obj: Any) -> int:
        return self.ctx.const_index(obj)

    def set_grad(self, enabled: bool) -> None:
        self.ctx.set_grad(bool(enabled))

    def set_inference(self, enabled: bool) -> None:
        self.ctx.set_inference(bool(enabled))

    # -- captured control flow (TranslateControl.cpp) ---------------------------
    def condition(self, meta: torch.Tensor, file: str, line: int) -> int | str:
        """The bool a tensor branch tests: `aten.is_nonzero` (what bool(t)
        dispatches), or a reason why it cannot be one."""
        self._no_function_mode("a branch on a tensor")
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

    def abandon_region(self) -> None:
        self.ctx.builder.abandon_region()

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
        return self.ctx.arith(op, operands, rtype)

    def scalar_const(self, value: Any, rtype: str) -> int:
        vid = self.ctx.builder.add_const(value, rtype)
        self.ctx.constvals[vid] = value
        if type(value) is int:
            self.ctx.exprs[vid] = Expr.const(value)
        return vid

    def marker(self, i: int) -> "_Marker":
        while len(_MARKERS) <= i:
            _MARKERS.append(_Marker(len(_MARKERS)))
        return _MARKERS[i]

    def probe(self, fn: Any, args: tuple, kwargs: dict, values: list) -> list | None:
        self._no_function_mode("a call with symbolic numbers")
        _no_torch_function(args, kwargs)
        return scalars.probe(fn, lambda s: (_subst(args, s), _subst(kwargs, s)), values)

    def record_sym(self, fn: Any, args: tuple, kwargs: dict, sentinels: list, vids: list[int],
                   file: str | None, line: int) -> Any:
        self._no_function_mode("a call with symbolic numbers")
        rec = self.ctx.rec
        rec.loc = (file or "<unknown>", line)
        _no_torch_function(args, kwargs)
        if type(sentinels) is tuple:
            # Symbolic sizes: called with their values; the recorder matches
            # ATen arguments against the shadow run (resolve_size). A size with
            # the same value in both runs would be taken for a constant there:
            # exact only when its expression is one.
            for v in vids:
                pair, e = self.ctx.symvals.get(v), self.ctx.exprs.get(v)
                if pair is not None and pair[0] == pair[1] and (e is None or e.constant() is None):
                    rec._mismatch("a size with the same value at both sizes passed to a torch call")
                    raise GraphBreak("GB022", "a size that depends on a dynamic dim used as a constant")
            a, k = _subst(args, list(sentinels)), _subst(kwargs, list(sentinels))
            return self._note(rec.call(fn, a, k), fn, a, k)
        rec.sym = {(type(s), s): v for s, v in zip(sentinels, vids)}
        try:
            return self._note(rec.call(fn, _subst(args, sentinels), _subst(kwargs, sentinels)))
        finally:
            rec.sym = {}


# Note [__torch_function__]: a torch call on a value whose type overrides
# __torch_function__ (a tensor subclass other than nn.Parameter, or any object
# defining it) runs the user's override, which a graph of ATen ops would skip on
# every later call. Such calls are graph breaks, checked before the call runs on
# metas (so the override never runs at capture) and on what it returns (a
# subclass made by `as_subclass`, `Tensor._make_subclass`, ...): they run natively.
_PLAIN_TENSOR_TYPES = (torch.Tensor, torch.nn.Parameter)


def _overrides_torch_function(v: Any) -> bool:
    t = type(v)
    if t in _PLAIN_TENSOR_TYPES or t in CONST_TYPES:
        return False
    return isinstance(v, torch.Tensor) or hasattr(t, "__torch_function__")


def _no_torch_function(v: Any, kwargs: dict | None = None, depth: int = 0) -> Any:
    """`v`, after checking it (and `kwargs`) for values that override
    __torch_function__ (GB011 when found; containers searched a few levels)."""
    if kwargs:
        _no_torch_function(tuple(kwargs.values()), None, depth)
    if type(v) in (tuple, list) and depth < 3:
        for e in v:
            _no_torch_function(e, None, depth + 1)
    elif _overrides_torch_function(v):
        raise GraphBreak("GB011", f"{type(v).__name__} overrides __torch_function__ (runs natively)")
    return v


def _meta_str(t: torch.Tensor) -> str:
    return f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}"


class SymShape(tuple):
    """A `torch.Size` read (`t.shape`, `t.size()`) with a dynamic dim among its
    items (SymSize): a torch.Size cannot hold them, so this marks the tuple for
    the C++ translator, which keeps its type torch.Size (Note [Symbolic shapes
    keep their type] in Translator.cpp)."""

    __slots__ = ()


class SymSize:
    """A size read from a dynamic dim, handed to the C++ translator, which makes
    it a symbolic number (Note [Symbolic sizes] in TranslateScalars.cpp)."""

    __slots__ = ("value", "vid")

    def __init__(self, value: int, vid: int) -> None:
        self.value = value
        self.vid = vid


_COMPARE = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, "==": lambda a, b: a == b,
            "!=": lambda a, b: a != b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
_NEGATE = {"<": ">=", "<=": ">", "==": "!=", "!=": "==", ">": "<=", ">=": "<"}
_IMPLIED_BY_GUARD = {"!=": lambda c: c <= 1, ">": lambda c: c <= 1, ">=": lambda c: c <= 2}
_FLIP = {"<": ">", "<=": ">=", "==": "==", "!=": "!=", ">": "<", ">=": "<="}


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
    if type(v) is slice:
        return slice(_subst(v.start, values), _subst(v.stop, values), _subst(v.step, values))
    return v
