"""Recording torch calls as ATen nodes.

Every tensor the translator tracks has a *meta* twin (same sizes, strides,
dtype, requires_grad, no storage). A torch call is made for real on those meta
tensors under a TorchDispatchMode; each ATen operator that reaches the mode is
executed on meta (giving output shapes for free) and emitted as one GIR node
`aten.<name>.<overload>` through the C++ GraphBuilder. This covers every torch
function, Tensor method and operator with no per-op code, and what is recorded
is exactly what eager PyTorch would dispatch (after CompositeImplicit
decompositions), so replaying the nodes through the c10 dispatcher reproduces
eager semantics, autograd included.

Operand convention (Note [ATen operands and attributes] in AtenOps.h): tensor
arguments (and tensor lists, with `null` constants for None entries) become
operands in schema order; every other argument present in the call becomes an
attribute named after the schema argument. Device arguments are recorded as
the capture target device and executed on meta.
"""

from __future__ import annotations

import contextlib
import os
import sys
import types
from typing import Any, Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from xacc._src.capture import dynamic, meta_run, polyfills_vmap, sdpa
from xacc._src.capture.known import Known
from xacc._src.capture.symexpr import SAME_SHAPE_RESULTS
from xacc._src.capture.breaks import GraphBreak

DTYPE_NAMES: dict[torch.dtype, str] = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
    torch.uint8: "u8", torch.bool: "bool", torch.complex64: "c64", torch.complex128: "c128",
}
MEMORY_FORMATS = {
    torch.contiguous_format: "contiguous_format", torch.preserve_format: "preserve_format",
    torch.channels_last: "channels_last", torch.channels_last_3d: "channels_last_3d",
}
# Ops that read tensor data back to Python cannot be recorded on meta tensors.
# ATen ops whose size argument may say -1 for one dim (inferred from numel).
_INFER_ONE = {"view", "_unsafe_view", "reshape"}
_DATA_DEPENDENT = {"_local_scalar_dense", "item", "is_nonzero", "equal", "nonzero", "unique",
                   "masked_select", "_unique2", "allclose"}


def _dim0(t: torch.Tensor, n: int) -> torch.Tensor:
    return t.new_empty((n,) + tuple(t.shape[1:]))


# Functional collectives recorded as nodes (Note [Collectives as nodes] in
# AtenOps.cpp): namespace -> operator -> the meta result, computed here because
# running the operator, even on meta tensors, would issue the collective.
COLLECTIVES: dict[str, dict[str, Callable[..., torch.Tensor]]] = {"_c10d_functional": {
    "all_reduce": lambda t, op, group: torch.empty_like(t),
    "all_gather_into_tensor": lambda t, n, group: _dim0(t, t.shape[0] * n),
    "reduce_scatter_tensor": lambda t, op, n, group: _dim0(t, t.shape[0] // n),
    "wait_tensor": lambda t: t,  # the tensor itself, as eager returns it
}}


def _dist_object_types() -> tuple:
    try:
        import torch._C._distributed_c10d as c10d
    except ImportError:  # pragma: no cover - torch without distributed
        return ()
    return tuple(getattr(c10d, n) for n in ("Work", "ProcessGroup", "Store", "Backend") if hasattr(c10d, n))


_DIST_OBJECTS = _dist_object_types()


def _on_dist_object(fn: Any, args: tuple, kwargs: dict) -> bool:
    """Whether a call acts on a torch.distributed object (a bound method of one,
    or one among its arguments)."""
    if not _DIST_OBJECTS:
        return False
    vals = (getattr(fn, "__self__", None), *args, *kwargs.values())
    return any(isinstance(v, _DIST_OBJECTS) for v in vals)


def meta_like(t: torch.Tensor) -> torch.Tensor:
    """A storage-less twin of `t` (sizes, strides, dtype, requires_grad)."""
    m = torch.empty_strided(tuple(t.size()), tuple(t.stride()), dtype=t.dtype, device="meta")
    if t.requires_grad:
        m.requires_grad_(True)
    return m


def tensor_type(t: torch.Tensor, device: str, dynamic: Any = (), dims: list | None = None) -> tuple:
    """GIR type spec of `t`. `dynamic`: dims that are `?`, or a dict dim -> symbol
    name; `dims`: the dims themselves (ints, symbol names, -1 for `?`)."""
    name = DTYPE_NAMES.get(t.dtype)
    if name is None:
        raise GraphBreak("GB018", f"dtype {t.dtype} has no GIR name")
    if dims is not None:
        return ("tensor", name, list(dims), device)
    if isinstance(dynamic, dict):
        sizes = [dynamic.get(i, int(s)) for i, s in enumerate(t.shape)]
    else:
        sizes = [-1 if i in dynamic else int(s) for i, s in enumerate(t.shape)]
    return ("tensor", name, sizes, device)


def _lazy_disable(fn: Callable, recursive: bool) -> Callable:
    """What torch._disable_dynamo's wrapper calls for `fn`: `fn` itself while
    torch._dynamo is not imported (then no Dynamo frame hook exists that could
    trace it), else what the wrapper would have made: torch._dynamo.disable(fn)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is None:
            return fn(*args, **kwargs)
        disabled = dynamo.disable(fn, recursive, wrapping=False)
        fn.__dynamo_disable = disabled  # the attribute torch/_compile.py caches it in
        return disabled(*args, **kwargs)
    return call


_META_WRAPPERS = os.path.join("torch", "_prims_common", "wrappers.py")
_meta_kernels_ready = False


def meta_kernels_without_dynamo() -> None:
    """Note [Meta kernels and torch._dynamo]: the Python meta kernels of
    elementwise ops (torch/_prims_common/wrappers.py) are wrapped in
    torch._disable_dynamo, whose first call imports torch._dynamo to build the
    disabled function: seconds and ~70 MiB on the first capture of a process,
    which plain Python never pays (it never runs meta kernels). Once per
    process, each such wrapper gets the function it caches made for it by
    _lazy_disable, which imports nothing. Other torch._disable_dynamo users
    (optimizers, ...) are left as they are."""
    global _meta_kernels_ready
    if _meta_kernels_ready:
        return
    _meta_kernels_ready = True
    import gc

    import torch._compile
    probe = torch._compile._disable_dynamo(lambda: None)
    code = getattr(probe, "__code__", None)
    if code is None or code.co_freevars != ("fn", "recursive"):
        return  # another torch: leave it alone
    # The functions holding `code` are among its referrers (a function's
    # traversal visits its code): found in C, half the time of a Python loop
    # over gc.get_objects() (13 against 30 ms of CPU after import torch).
    for f in gc.get_referrers(code):
        if type(f) is not types.FunctionType or f.__code__ is not code:
            continue
        fn, recursive = (c.cell_contents for c in f.__closure__)
        fc = getattr(fn, "__code__", None)
        if fc is not None and fc.co_filename.endswith(_META_WRAPPERS) and \
                getattr(fn, "__dynamo_disable", None) is None:
            fn.__dynamo_disable = _lazy_disable(fn, recursive)


class _Mode(TorchDispatchMode):
    def __init__(self, rec: "Recorder") -> None:
        super().__init__()
        self.rec = rec

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Otherwise TorchDispatchMode wraps __torch_dispatch__ in torch._disable_dynamo,
        # whose first call imports torch._dynamo: seconds and ~70 MiB on the first
        # capture of every process. This mode only runs inside the compile callback,
        # with the frame hook off, so no frame hook (ours or Dynamo's) traces it.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: D105
        return self.rec.dispatch(func, args, kwargs or {})


class Recorder:
    """Turns ATen calls on meta tensors into GraphBuilder nodes."""

    def __init__(self, builder: Any, device: str, const_tensor: Callable[[torch.Tensor], int],
                 guard_value: Callable[[int, torch.Tensor], None] = lambda node, value: None) -> None:
        meta_kernels_without_dynamo()
        self.b = builder
        self.device = device
        self.vids: dict[int, int] = {}  # id(meta) -> value id
        self._alive: list[torch.Tensor] = []
        self._const_tensor = const_tensor
        self._null: int | None = None
        self.loc: tuple[str, int] = ("<unknown>", 0)
        self.op_counts: dict[str, int] = {}
        self.sym: dict[tuple, int] = {}  # (type, sentinel) -> value id (see scalars.py)
        # Dynamic shapes (dynamic.py): this run's ops, the shadow run's, symbol pairs.
        self.trace: list = []
        self.shadow: list | None = None
        self.pairs: dict = {}
        self.resolver: Callable[[int, int], int | None] | None = None
        self.dims: Any = None  # host.State: expressions of result dims (Note [Size expressions])
        self.mismatch = ""  # the op where this run diverged from the shadow run
        # Inside a no_grad region (Ctx.set_grad): metas run under no_grad and
        # operands that require grad are read through one `aten.detach` each.
        self.no_grad = False
        self._detached: dict[int, int] = {}
        # Inside a torch.inference_mode() region (Host.set_inference): metas run
        # under inference mode, so they are inference tensors where eager's are.
        self.inference = False
        # Small integer tensors whose value the capture knows (Note [Known tensor values] in known.py).
        self.known = Known(guard_value)

    def set_no_grad(self, on: bool) -> None:
        self.no_grad = on
        self._detached = {}

    # -- values -------------------------------------------------------------
    def bind(self, meta: torch.Tensor, vid: int) -> None:
        self.vids[id(meta)] = vid
        self._alive.append(meta)

    def vid_of(self, t: torch.Tensor) -> int:
        v = self.vids.get(id(t))
        if v is not None:
            return v
        if t.device.type != "meta":
            # A real tensor made while tracing (torch.tensor(...) literal, a tensor
            # stored in a closure): it enters the graph as an entry constant.
            return self._const_tensor(t)
        raise GraphBreak("GB018", "a tensor that did not come from a traced value")

    def operand(self, t: torch.Tensor) -> int:
        vid = self.vid_of(t)
        if not (self.no_grad and t.requires_grad):
            return vid
        d = self._detached.get(vid)
        if d is None:
            self.b.set_loc(*self.loc)
            (d,) = self.b.add_op("aten.detach.default", [vid], {}, [])
            self._detached[vid] = d
        return d

    def null(self) -> int:
        if self._null is None:
            self._null = self.b.add_const(None, "null")
        return self._null

    # -- calls ---------------------------------------------------------------
    def call(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        """Calls `fn` on meta tensors, recording the ATen ops it dispatches."""
        if _on_dist_object(fn, args, kwargs):
            # Work.wait(), a ProcessGroup's or Store's methods act on the other
            # ranks and dispatch no ATen op: run at capture time, they would be
            # missing from every later run of the graph.
            owner = getattr(fn, "__self__", None)
            what = f"{type(owner).__name__}.{getattr(fn, '__name__', '?')}" if owner is not None else \
                getattr(fn, "__name__", str(fn))
            raise GraphBreak("GB026", f"{what} on a torch.distributed object")
        if self.shadow is not None and any(fn is p for p in polyfills_vmap.VMAP_PRIMITIVES):
            # A BatchedTensor's sizes are not matched against the shadow run
            # (Note [Batched metas] in polyfills_vmap.py): the frame compiles static.
            self._mismatch("torch.vmap")
        prev = meta_run.plain_checks_on()
        try:
            # `fn` is called from this frame itself: function_modes.probe finds it here.
            grad = torch.inference_mode() if self.inference else torch.no_grad() if self.no_grad \
                else contextlib.nullcontext()
            with grad:
                flash = sdpa.flash_call(args, kwargs) if fn is sdpa.SDPA else None
                with _Mode(self):
                    return fn(*args, **kwargs) if flash is None else flash()
        except (GraphBreak, dynamic.Mismatch):
            raise
        except Exception as e:  # the op cannot run on meta tensors
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            if "data-dependent" in msg or "Cannot copy out of meta" in msg or "meta tensor" in msg.lower():
                raise GraphBreak("GB005", f"{getattr(fn, '__name__', fn)}: {msg}") from None
            raise GraphBreak("GB006", f"{getattr(fn, '__name__', fn)}: {msg}") from None
        finally:
            meta_run.plain_checks_off(prev)

    def _exec_value(self, v: Any) -> Any:
        if isinstance(v, torch.Tensor) and v.device.type != "meta":
            vid = self._const_tensor(v)
            m = meta_like(v)
            self.bind(m, vid)
            return m
        if isinstance(v, (list, tuple)):
            return type(v)(self._exec_value(e) for e in v)
        if isinstance(v, torch.device):
            return torch.device("meta")
        return v

    def dispatch(self, func, args: tuple, kwargs: dict) -> Any:
        ns, _, name = func._schema.name.rpartition("::")
        if ns in COLLECTIVES and name in COLLECTIVES[ns]:
            return self._record(func, ns, name, args, kwargs, COLLECTIVES[ns][name])
        if ns == "c10d":  # a collective on a process-group object (async_op, Work): polyfills_dist.py
            raise GraphBreak("GB026", f"{func._schema.name}.{func._overloadname or 'default'} "
                                      "(a torch.distributed call with no functional form)")
        if ns != "aten":
            return self._custom_op(func, ns, name, args, kwargs)
        if name in _DATA_DEPENDENT:
            r = self._known_read(func, name, args, kwargs)
            if r is not None:
                return r
            raise GraphBreak("GB005", f"aten.{name} reads tensor data")
        return self._record(func, ns, name, args, kwargs, None)

    def _custom_op(self, func, ns: str, name: str, args: tuple, kwargs: dict) -> Any:
        """An operator of another namespace (a library's custom op): one node
        `aten.<ns>.<name>.<overload>`, its meta result from its fake (meta)
        kernel, run by the executors through the dispatcher by its qualified
        name (Note [Custom operators as nodes] in AtenOps.cpp). A schema that
        writes or aliases an argument, or a meta kernel that is missing or
        reads data, is a graph break: the call runs in Python."""
        schema = func._schema
        qual = f"{schema.name}.{func._overloadname or 'default'}"
        if any(a.alias_info is not None for a in (*schema.arguments, *schema.returns)):
            raise GraphBreak("GB006", f"{qual} writes or aliases an argument (its effect is not modelled)")
        try:
            return self._record(func, ns, name, args, kwargs, None)
        except (GraphBreak, dynamic.Mismatch):
            raise
        except Exception as e:  # noqa: BLE001 - its meta kernel is missing or failed
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            code = "GB005" if "data-dependent" in msg else "GB006"
            raise GraphBreak(code, f"{qual}: {msg}") from None

    def known_scalar(self, meta: Any, conv: str) -> Any:
        """Python's `conv` (bool, int, float, index, item) of a tensor whose value
        is known (Note [Known tensor values] in known.py), None otherwise."""
        r = self.known.scalar(meta, conv)
        if self.known.tainted_read and not self.mismatch:
            self.mismatch = self.known.tainted_read
        return r

    def _known_read(self, func, name: str, args: tuple, kwargs: dict) -> Any:
        """A data read (`aten._local_scalar_dense`, `is_nonzero`, `item`, `equal`)
        of known tensors: eager's answer, computed on their values."""
        if name not in ("_local_scalar_dense", "is_nonzero", "item", "equal") or kwargs:
            return None
        vals = [self.known.value(a) for a in args]
        if self.known.tainted_read and not self.mismatch:
            self.mismatch = self.known.tainted_read
        if not args or any(v is None for v in vals):
            return None
        try:
            return func(*vals)
        except Exception:  # noqa: BLE001 - eager raises here: the break runs it in Python
            return None

    def _record(self, func, ns: str, name: str, args: tuple, kwargs: dict, meta_rule: Callable | None) -> Any:
        """Emits the node of one dispatcher call; its meta result comes from
        running it on meta tensors, or from `meta_rule` for a collective
        (Note [Collectives as nodes] in AtenOps.cpp: running it would talk to
        the other ranks)."""
        overload = func._overloadname or "default"
        gname = f"aten.{name}.{overload}" if ns == "aten" else f"aten.{ns}.{name}.{overload}"
        # The per-op rules below (size expressions, inferred sizes) are aten's:
        # another namespace's `mm` is not aten.mm (Note [Custom operators as nodes]).
        key = name if ns == "aten" else f"{ns}::{name}"
        schema = func._schema
        exec_args = tuple(self._exec_value(a) for a in args)
        exec_kwargs = {k: self._exec_value(v) for k, v in kwargs.items()}
        if "device" in exec_kwargs and exec_kwargs["device"] is not None:
            exec_kwargs["device"] = torch.device("meta")
        for i, a in enumerate(schema.arguments):
            if i < len(exec_args) and isinstance(exec_args[i], torch.device):
                exec_args = exec_args[:i] + (torch.device("meta"),) + exec_args[i + 1:]
        if meta_rule is None:
            run_kwargs = exec_kwargs
            if "device" not in exec_kwargs and any(x.name == "device" and x.kwarg_only for x in schema.arguments):
                # A factory without a device (torch.randint(1, 4, ())) would run on the
                # CPU here, drawing from the user's random stream at capture time.
                run_kwargs = dict(exec_kwargs, device=torch.device("meta"))
            out = _as_meta(meta_run.run(func, exec_args, run_kwargs))
        else:
            if torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in exec_args):
                raise GraphBreak("GB026", f"{gname} on a tensor that requires grad (its backward is not modelled)")
            out = meta_rule(*exec_args, **exec_kwargs)

        # Per schema argument, in order: operand ids, an attribute, or absent.
        parts: list[Any] = []
        attrs: dict[str, Any] = {}
        symbolic = False  # a symbolic number's sentinel is an argument
        for i, a in enumerate(schema.arguments):
            if not a.kwarg_only and i < len(exec_args):
                v = exec_args[i]
            elif a.name in exec_kwargs:
                v = exec_kwargs[a.name]
            else:
                if _is_tensor_type(a.type) and a.type.kind() == "OptionalType":
                    attrs[a.name] = None
                    parts.append(None)
                else:
                    parts.append(a)  # absent: its default
                continue
            if self.sym and type(v) in (int, float) and (type(v), v) in self.sym:
                parts.append([self.sym[(type(v), v)]])
                symbolic = True
            elif isinstance(v, torch.Tensor):
                parts.append([self.operand(v)])
            elif isinstance(v, (list, tuple)) and _is_tensor_list_type(a.type):
                if len(v) == 0:
                    raise GraphBreak("GB018", f"empty tensor list for {gname}")
                parts.append([self.operand(e) if isinstance(e, torch.Tensor) else self.null() for e in v])
            else:
                attrs[a.name] = self.encode(v, key)
                parts.append(a.name)
        nops = sum(len(p) for p in parts if isinstance(p, list))

        outs = tuple(out) if len(schema.returns) > 1 else (out,)
        sig = (gname, repr(attrs), nops)
        sizes = [[int(d) for d in r.shape] if isinstance(r, torch.Tensor) else
                 [[int(d) for d in e.shape] for e in r] if isinstance(r, (list, tuple)) and r and
                 all(isinstance(e, torch.Tensor) for e in r) else None for r in outs]
        k = len(self.trace)
        self.trace.append((sig, sizes, dict(attrs)))
        shadow_sizes = None
        given, resolved = dict(attrs), {}
        sizes_differ = False
        if self.shadow is not None:
            if k >= len(self.shadow):
                raise self._mismatch(sig[0])
            ssig, shadow_sizes, sattrs = self.shadow[k]
            if ssig != sig:
                sizes_differ = True
                if ssig[0] != sig[0] or ssig[2] != sig[2] or set(sattrs) != set(attrs):
                    raise self._mismatch(sig[0])
                resolved = self._resolve_sizes(key, schema, parts, attrs, sattrs)
        operands = [o for p in parts if isinstance(p, list) for o in p]
        types: list[Any] = []
        for j, r in enumerate(outs):
            if isinstance(r, torch.Tensor):
                if shadow_sizes is not None and shadow_sizes[j] is not None:
                    types.append(tensor_type(r, self.device, dims=dynamic.result_dims(
                        sizes[j], shadow_sizes[j], self.pairs)))
                else:
                    types.append(tensor_type(r, self.device))
            elif isinstance(r, (list, tuple)) and r and all(isinstance(e, torch.Tensor) for e in r):
                types.append(("list", ("tensor", DTYPE_NAMES.get(r[0].dtype, "f32"), [-1] * r[0].dim(), self.device)))
            elif r is None and len(schema.returns) == 0:
                continue
            else:
                raise GraphBreak("GB006", f"{gname} returns a {type(r).__name__}")
        self.b.set_loc(*self.loc)
        try:
            ids = self.b.add_op(gname, operands, attrs, types)
        except ValueError as e:
            raise GraphBreak("GB006", f"{gname}: {e}") from None
        if self.dims is not None and shadow_sizes is not None and ids and isinstance(outs[0], torch.Tensor):
            self.dims.note_result(key, given, resolved, operands, ids[0], sizes[0], shadow_sizes[0],
                                  same_args=not sizes_differ and not symbolic)
            if key in SAME_SHAPE_RESULTS:  # values and indices have one shape: the same dims
                for rid, r, sz, ssz in zip(ids[1:], outs[1:], sizes[1:], shadow_sizes[1:]):
                    if isinstance(r, torch.Tensor) and sz == sizes[0] and ssz == shadow_sizes[0]:
                        self.dims.dim_exprs[rid] = self.dims.dim_exprs.get(ids[0])
        self.op_counts[gname] = self.op_counts.get(gname, 0) + 1
        for rid, r in zip(ids, outs):
            if isinstance(r, torch.Tensor):
                if self.no_grad and id(r) in self.vids and self.vids[id(r)] in self._detached:
                    # In-place on a detached alias: the tensor itself (which may
                    # require grad) stays bound to its value; the effect node
                    # orders the write before later reads.
                    continue
                self.bind(r, rid)
            elif isinstance(r, (list, tuple)):
                idx_types = [tensor_type(e, self.device) for e in r]
                j = next((q for q, o in enumerate(outs) if o is r), -1)
                for i, e in enumerate(r):
                    kc = self.b.add_const(i, "i64")
                    (eid,) = self.b.add_op("list.get", [rid, kc], {}, [idx_types[i]])
                    self.bind(e, eid)
                    # The dims of each element (split, unbind, chunk: Note [Size expressions]).
                    if self.dims is not None and shadow_sizes is not None and j >= 0 and \
                            isinstance(shadow_sizes[j], list) and len(shadow_sizes[j]) == len(r) and \
                            isinstance(sizes[j][i], list) and len(shadow_sizes[j][i]) == len(sizes[j][i]):
                        self.dims.note_result(key, given, resolved, operands, eid, sizes[j][i],
                                              shadow_sizes[j][i], same_args=not sizes_differ and not symbolic)
        if key in ("lift_fresh", "lift_fresh_copy") and args and isinstance(args[0], torch.Tensor) \
                and args[0].device.type != "meta" and isinstance(out, torch.Tensor):
            self.known.fresh(k, out, args[0])
        else:
            self.known.record(k, func, exec_args, exec_kwargs, out, sizes_differ, symbolic)
        return out

    def _mismatch(self, what: str) -> "dynamic.Mismatch":
        if not self.mismatch:
            file, line = self.loc
            self.mismatch = f"{what} (at {os.path.basename(file)}:{line})" if line else what
        return dynamic.Mismatch(what)

    def _resolve_sizes(self, name: str, schema: Any, parts: list, attrs: dict, sattrs: dict) -> dict:
        """Turns the int arguments that differ from the shadow run's into graph
        values (symbolic sizes, Note [Symbolic sizes] in TranslateScalars.cpp):
        an int becomes an `i64` operand, an int list a `list.make` of constants
        and sizes. One element of a view's size nobody computed (`reshape(-1,
        n)` of a non-viewable tensor hands ATen the product) becomes -1.
        Returns per argument made a graph value its value id, or its elements
        (("c", constant) or ("v", value id))."""
        last = -1
        resolved: dict[str, Any] = {}
        for i, p in enumerate(parts):
            if not isinstance(p, str) or attrs[p] == sattrs[p]:
                continue
            real, shadow = attrs[p], sattrs[p]
            vid = None
            if type(real) is int and type(shadow) is int and self.resolver is not None:
                vid = self.resolver(real, shadow)
                resolved[p] = vid
            elif (isinstance(real, list) and isinstance(shadow, list) and len(real) == len(shadow)
                  and all(type(e) is int for e in real + shadow) and self.resolver is not None):
                # ("c", constant) or ("v", graph value) per element
                elems: list[Any] = []
                for a, b in zip(real, shadow):
                    r = self.resolver(a, b) if a != b else None
                    elems.append(("c", a) if a == b else (None if r is None else ("v", r)))
                missing = [j for j, e in enumerate(elems) if e is None]
                if len(missing) == 1 and name in _INFER_ONE and -1 not in real:
                    elems[missing[0]] = ("c", -1)
                if None not in elems:
                    resolved[p] = elems
                    self.b.set_loc(*self.loc)
                    ids = [self.b.add_const(e, "i64") if kind == "c" else e for kind, e in elems]
                    (vid,) = self.b.add_op("list.make", ids, {}, [("list", "i64")])
            if vid is None:
                raise self._mismatch(f"aten.{name}: argument '{p}' depends on a dynamic size")
            parts[i] = [vid]
            del attrs[p]
            last = i
        # Operands bind in schema order to the arguments without an attribute:
        # earlier absent arguments get their defaults as attributes.
        for i in range(last):
            p = parts[i]
            if p is not None and not isinstance(p, (list, str)):  # an absent schema argument
                if p.default_value is None and p.type.kind() != "OptionalType":
                    raise self._mismatch(f"aten.{name}: argument '{p.name}' has no default")
                attrs[p.name] = self.encode(p.default_value, name)
        return resolved

    def encode(self, v: Any, op: str) -> Any:
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if isinstance(v, torch.dtype):
            if v not in DTYPE_NAMES:
                raise GraphBreak("GB018", f"dtype {v}")
            return DTYPE_NAMES[v]
        if isinstance(v, torch.device):
            return self.device
        if isinstance(v, torch.layout):
            if v != torch.strided:
                raise GraphBreak("GB018", f"layout {v}")
            return "strided"
        if isinstance(v, torch.memory_format):
            return MEMORY_FORMATS[v]
        if isinstance(v, (list, tuple)) and all(isinstance(e, (bool, int, float)) for e in v):
            return [e for e in v]
        raise GraphBreak("GB018", f"argument of type {type(v).__name__} to aten.{op}")


def _as_meta(out: Any) -> Any:
    """The result of an op run here, with metas for real tensors: an op on Python
    numbers alone (`torch.div(8, 4)`, `torch.arange(n)` without a device) runs
    for real on the CPU, and its tracked value must be a meta like every other
    (an in-place op on it then acts on the bound value, not on a constant copy)."""
    if isinstance(out, torch.Tensor):
        return out if out.device.type == "meta" else meta_like(out)
    if isinstance(out, (list, tuple)) and any(isinstance(e, torch.Tensor) for e in out):
        return type(out)(_as_meta(e) for e in out)
    return out


def _is_tensor_type(t: Any) -> bool:
    s = str(t)
    return s.startswith("Tensor") or s.startswith("Optional[Tensor]")


def _is_tensor_list_type(t: Any) -> bool:
    s = str(t)
    return "Tensor" in s and ("[]" in s or "List" in s)
