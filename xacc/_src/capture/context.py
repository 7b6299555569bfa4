"""Translation context of one captured frame: the graph under construction,
the guard tree, graph inputs and entry constants, and the value semantics the
opcode handlers share (wrapping frame values with guards, attribute access,
operators, calls and inlining).
"""

from __future__ import annotations

import builtins
import dis
import inspect
import operator
import types
from typing import Any

import torch

from xacc._C import capture as C
from xacc._src.capture import dynamic
from xacc._src.capture import trackers as T
from xacc._src.capture.breaks import GraphBreak
from xacc._src.capture.recorder import Recorder, meta_like, tensor_type
from xacc._src.capture.translator import (CONST_TYPES, MAX_INLINE_DEPTH, PURE, Frame, _is_torch_op,
                                          _is_user_function)

_INSTR_CACHE: dict[types.CodeType, list] = {}
_NN_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


class Ctx:
    def __init__(self, func: types.FunctionType, name: str, device: str, break_at: dict,
                 dynamic: bool | None = None, plan: Any = None, shadow_run: bool = False,
                 shadow: Any = None) -> None:
        self.func = func
        # Dynamic shapes (dynamic.py): `plan` knows the dynamic dims; the shadow
        # run traces with them doubled; the real run compares with `shadow`.
        self.plan = plan
        self.shadow_run = shadow_run
        self.dyn_active = shadow_run or shadow is not None
        self.reads: list = []  # values Python read from tensor metadata
        # Python ints/floats among the frame's arguments become graph inputs
        # unless dynamic=False (see SymScalarVar).
        self.symbolic_scalars = dynamic is not False
        self.code = func.__code__
        self.device = device
        self.break_at = break_at
        self.builder = C.GraphBuilder(name)
        self.tree = C.GuardTree()
        self.tree.set_grad_mode(torch.is_grad_enabled())
        # Grad mode is guarded at entry; `with torch.no_grad():` inside the frame
        # is a region of the same graph (see set_grad).
        self.entry_grad = torch.is_grad_enabled()
        self.grad_enabled = self.entry_grad
        self.memo: dict = {}
        self.consts: list[Any] = []
        self.inputs: list[int] = []       # guard-tree node per graph input, in parameter order
        self.input_vids: set[int] = set()
        self.rec = Recorder(self.builder, device, self.const_tensor)
        if shadow is not None:
            self.rec.shadow = shadow.ops
            self.rec.pairs = plan.pairs()
        self.steps = 0
        self.guarded: set = set()
        self.inline_stack: list[types.CodeType] = []
        self.top: Frame | None = None

    def set_grad(self, enabled: bool) -> None:
        """Enters or leaves a grad-mode region. Inside a `no_grad` region of a
        frame entered with grad enabled, ops run on metas under no_grad and read
        tensors that require grad through `aten.detach` (recorder.py), so they
        record no autograd history, exactly like eager. Enabling grad inside a
        frame entered without it cannot be expressed that way: a break."""
        if enabled and not self.entry_grad:
            raise GraphBreak("GB014", "torch.enable_grad() in a frame running without grad")
        self.grad_enabled = enabled
        self.rec.set_no_grad(not enabled and self.entry_grad)

    # -- instructions ------------------------------------------------------------
    def instructions(self, code: types.CodeType) -> list:
        ins = _INSTR_CACHE.get(code)
        if ins is None:
            ins = [i for i in dis.get_instructions(code) if i.opname != "CACHE"]
            _INSTR_CACHE[code] = ins
        return ins

    def before_instruction(self, frame: Frame, ins: Any) -> None:
        gb = self.break_at.get(ins.offset)
        if gb is not None:
            gb.replayed = True
            raise gb

    def check_break_at(self, frame: Frame, ins: Any) -> None:
        pass

    # -- sources, guards and inputs ------------------------------------------------
    def node(self, source: T.Source) -> int:
        return source.node(self.tree, self.memo)

    def const_index(self, obj: Any) -> int:
        for i, c in enumerate(self.consts):
            if c is obj:
                return i
        self.consts.append(obj)
        return len(self.consts) - 1

    def const_tensor(self, t: torch.Tensor) -> int:
        src = T.Source("K", self.const_index(t))
        return self._add_tensor_input(t, src, guard=False)

    def _add_tensor_input(self, t: torch.Tensor, source: T.Source, guard: bool = True,
                          dims: list[int] = ()) -> int:
        n = self.node(source)
        if guard:
            self.tree.leaf_tensor(n, t, list(dims))
        dyn = {d: self.plan.symbol(int(t.shape[d])) for d in dims}
        vid = self.builder.add_input(tensor_type(t, self.device, dyn), f"in{len(self.inputs)}")
        self.inputs.append(n)
        self.input_vids.add(vid)
        return vid

    def guard(self, source: T.Source | None, kind: str, value: Any = None) -> None:
        if source is None:
            return
        key = (source.ident(), kind)
        if key in self.guarded:
            return
        self.guarded.add(key)
        n = self.node(source)
        if kind == "id":
            self.tree.leaf_id(n, value)
        elif kind == "type":
            self.tree.leaf_type(n, type(value))
        elif kind == "eq":
            self.tree.leaf_equals(n, value)
        elif kind == "len":
            self.tree.leaf_len(n, value)

    def wrap(self, value: Any, source: T.Source | None) -> T.Var:
        """The tracker of a value read from the frame, with guards on its source."""
        if isinstance(value, torch.Tensor):
            if type(value) not in (torch.Tensor, torch.nn.Parameter):
                raise GraphBreak("GB011", f"tensor subclass {type(value).__name__}")
            if value.is_sparse or value.layout != torch.strided:
                raise GraphBreak("GB011", "non-strided tensor")
            dims: list[int] = []
            if self.plan is not None:
                dims = self.plan.dims_of(value, source)
                if not self.dyn_active:
                    dims = []
            if source is None:
                source = T.Source("K", self.const_index(value))
                vid = self._add_tensor_input(value, source, guard=False)
            else:
                vid = self._add_tensor_input(value, source, dims=dims)
            meta = dynamic.shadow_meta(value, dims) if self.shadow_run else meta_like(value)
            self.rec.bind(meta, vid)
            return T.TensorVar(meta, source)
        if type(value) in (int, float) and self.symbolic_scalars and source is not None and \
                source.kind == "L":
            self.guard(source, "type", value)
            return T.SymScalarVar(value, None, source)
        if isinstance(value, CONST_TYPES):
            if value is None or value is Ellipsis:
                self.guard(source, "id", value)
            else:
                self.guard(source, "eq", value)
            return T.ConstVar(value, source)
        if type(value) in (tuple, list, torch.Size):
            self.guard(source, "type", value)
            self.guard(source, "len", len(value))
            items = [self.wrap(v, source.item(i) if source else None) for i, v in enumerate(value)]
            if type(value) is torch.Size:
                return T.ConstVar(value, source)
            return T.TupleVar(items, source) if type(value) is tuple else T.ListVar(items, source)
        if type(value) in (set, frozenset) and all(isinstance(e, CONST_TYPES) for e in value):
            self.guard(source, "type", value)
            self.guard(source, "eq", type(value)(value))  # a copy: the set itself may change later
            return T.SetVar(set(value) if type(value) is set else value, source)
        if type(value) is dict:
            if not all(isinstance(k, (str, int)) for k in value):
                raise GraphBreak("GB011", "dict with non-constant keys")
            self.guard(source, "type", value)
            self.guard(source, "len", len(value))
            return T.DictVar({k: self.wrap(v, source.item(k) if source else None) for k, v in value.items()},
                             source)
        if isinstance(value, torch.nn.Module):
            # Instances of one class share entries: attributes the graph reads are
            # guarded through their own sources (hooks are not guarded).
            self.guard(source, "type", value)
            return T.ObjVar(value, source)
        if isinstance(value, types.MethodType) and source is not None:
            # A bound method: the function is fixed, the bound object may vary.
            self.guard(source, "type", value)
            self.guard(source.attr("__func__"), "id", value.__func__)
            return T.ObjVar(value, source)
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                              types.MethodType, torch._ops.OpOverloadPacket,
                              torch._ops.OpOverload, types.BuiltinMethodType)):
            self.guard(source, "id", value)
            return T.ObjVar(value, source)
        self.guard(source, "type", value)
        return T.ObjVar(value, source)

    def concrete(self, v: T.Var) -> T.Var:
        """`v` itself, or for a symbolic number its capture-time value as a
        constant, guarding every argument it came from by value."""
        if not isinstance(v, T.SymScalarVar):
            return v
        for r in v.roots:
            self.guard(r.source, "eq", r.value)
        return T.ConstVar(v.value)

    def scalar_vid(self, v: T.SymScalarVar) -> int:
        """The graph value of a symbolic number (an argument becomes a graph input on first use)."""
        if v.vid is None:
            v.vid = self.builder.add_input("i64" if type(v.value) is int else "f64", f"in{len(self.inputs)}")
            self.inputs.append(self.node(v.source))
        return v.vid

    def python_value(self, v: T.Var, sentinels: dict | None = None) -> Any:
        """The value to pass to a torch call: metas, constants, containers."""
        if isinstance(v, T.SymScalarVar):
            if sentinels is not None and id(v) in sentinels:
                return sentinels[id(v)]
            return self.concrete(v).value
        if sentinels is not None and isinstance(v, (T.TupleVar, T.ListVar, T.DictVar)):
            if isinstance(v, T.DictVar):
                return {k: self.python_value(i, sentinels) for k, i in v.items.items()}
            seq = [self.python_value(i, sentinels) for i in v.items]
            return tuple(seq) if isinstance(v, T.TupleVar) else seq
        if isinstance(v, T.TensorVar):
            return v.meta
        if isinstance(v, T.ConstVar):
            return v.value
        if isinstance(v, T.TupleVar):
            return tuple(self.python_value(i) for i in v.items)
        if isinstance(v, T.ListVar):
            return [self.python_value(i) for i in v.items]
        if isinstance(v, T.DictVar):
            return {k: self.python_value(i) for k, i in v.items.items()}
        if isinstance(v, T.ObjVar) and isinstance(v.obj, (torch.dtype, torch.device)):
            return v.obj
        raise GraphBreak("GB018", f"{type(v).__name__} passed to a torch function")

    def from_python(self, value: Any) -> T.Var:
        """Tracker for the result of a torch call made on metas."""
        if isinstance(value, torch.Tensor):
            if id(value) not in self.rec.vids:
                raise GraphBreak("GB006", "torch call returned an untracked tensor")
            return T.TensorVar(value)
        if isinstance(value, torch.device):
            return T.ConstVar(torch.device(self.device))
        if isinstance(value, CONST_TYPES) or type(value) is torch.Size:
            return T.ConstVar(value)
        if isinstance(value, tuple):
            tv = T.TupleVar([self.from_python(v) for v in value])
            if type(value) is not tuple:  # named tuples and torch.return_types
                tv.fields = getattr(type(value), "_fields", None) or getattr(type(value), "__match_args__", None)
            return tv
        if isinstance(value, list):
            return T.ListVar([self.from_python(v) for v in value])
        if isinstance(value, dict):
            return T.DictVar({k: self.from_python(v) for k, v in value.items()})
        raise GraphBreak("GB006", f"torch call returned a {type(value).__name__}")

    def record(self, fn: Any, args: list[T.Var], kwargs: dict[str, T.Var]) -> T.Var:
        from xacc._src.capture import scalars

        syms: list[T.SymScalarVar] = []
        scalars.collect(list(args) + list(kwargs.values()), syms)
        sent = None
        if syms:
            def make(s: dict) -> tuple:
                return (tuple(self.python_value(a, s) for a in args),
                        {k: self.python_value(v, s) for k, v in kwargs.items()})
            sent = scalars.probe(fn, make, syms)
        if sent is None:
            pa = [self.python_value(a) for a in args]
            pk = {k: self.python_value(v) for k, v in kwargs.items()}
            return self._read(self.from_python(self.rec.call(fn, tuple(pa), pk)))
        pa = [self.python_value(a, sent) for a in args]
        pk = {k: self.python_value(v, sent) for k, v in kwargs.items()}
        self.rec.sym = {(type(sent[id(s)]), sent[id(s)]): self.scalar_vid(s) for s in syms}
        try:
            return self._read(self.from_python(self.rec.call(fn, tuple(pa), pk)))
        finally:
            self.rec.sym = {}

    # -- value semantics -------------------------------------------------------------
    def const_of(self, v: T.Var) -> Any:
        if isinstance(v, T.SymScalarVar):
            return self.concrete(v).value
        if T.is_const(v):
            return T.const_value(v)
        if isinstance(v, T.ObjVar):
            return v.obj
        if isinstance(v, T.SetVar):
            return v.values.copy()  # a snapshot: the tracked set may change later
        raise GraphBreak("GB011", f"{type(v).__name__} where a constant is needed")

    def truth(self, v: T.Var) -> bool:
        if isinstance(v, T.SymScalarVar):
            v = self.concrete(v)
        if isinstance(v, T.TensorVar):
            raise GraphBreak("GB004", "branch on a tensor")
        if isinstance(v, T.ConstVar):
            return bool(v.value)
        if isinstance(v, (T.TupleVar, T.ListVar)):
            return len(v.items) > 0
        if isinstance(v, T.DictVar):
            return len(v.items) > 0
        if isinstance(v, T.SetVar):
            return len(v.values) > 0
        if isinstance(v, T.ObjVar):
            t = type(v.obj)
            if isinstance(v.obj, torch.nn.Module) and hasattr(v.obj, "__len__"):
                return len(v.obj) > 0
            if not hasattr(t, "__bool__") and not hasattr(t, "__len__"):
                return True
        if isinstance(v, (T.FunctionVar, T.BoundMethodVar, T.TensorMethodVar)):
            return True
        raise GraphBreak("GB011", f"truth value of {type(v).__name__}")

    def identical(self, a: T.Var, b: T.Var) -> bool:
        if isinstance(a, T.ConstVar) and isinstance(b, T.ConstVar):
            return a.value is b.value
        if isinstance(a, T.ObjVar) and isinstance(b, T.ObjVar):
            return a.obj is b.obj
        if isinstance(a, T.TensorVar) and isinstance(b, T.TensorVar):
            return a.meta is b.meta
        if isinstance(a, T.ConstVar) or isinstance(b, T.ConstVar):
            c = a if isinstance(a, T.ConstVar) else b
            if c.value is None:
                return False  # a tracked non-constant is never None
        return a is b

    def contains(self, container: T.Var, item: T.Var) -> bool:
        item = self.concrete(item)
        if isinstance(container, (T.TupleVar, T.ListVar)):
            container = type(container)([self.concrete(i) for i in container.items], container.source)
        if isinstance(container, T.DictVar):
            return self.const_of(item) in container.items
        if isinstance(container, T.SetVar):
            return self.set_key(item) in container.values
        if isinstance(container, (T.TupleVar, T.ListVar)) and T.is_const(item):
            vals = [self.const_of(i) for i in container.items]
            return self.const_of(item) in vals
        if isinstance(container, T.ConstVar) and T.is_const(item):
            return self.const_of(item) in container.value
        raise GraphBreak("GB011", "'in' on a non-constant container")

    def unpack(self, v: T.Var) -> list[T.Var]:
        if isinstance(v, (T.TupleVar, T.ListVar)):
            return list(v.items)
        if isinstance(v, T.IterVar):
            items = v.items[v.pos:]
            v.pos = len(v.items)
            return items
        if isinstance(v, T.ConstVar) and isinstance(v.value, (tuple, list, torch.Size, range, str, frozenset)):
            return [T.ConstVar(e) for e in v.value]
        if isinstance(v, T.DictVar):
            return [T.ConstVar(k) for k in v.items]
        if isinstance(v, T.SetVar):
            return [self.from_const(e) if isinstance(e, CONST_TYPES + (tuple,)) else T.ObjVar(e)
                    for e in v.values]
        if isinstance(v, T.TensorVar):
            return self.unpack(self.record(torch.Tensor.unbind, [v], {}))
        if isinstance(v, T.ObjVar) and isinstance(v.obj, (torch.nn.ModuleList, torch.nn.Sequential)):
            return [self.module_child(v, k) for k in v.obj._modules]
        raise GraphBreak("GB011", f"unpacking a {type(v).__name__}")

    def iterate(self, v: T.Var) -> T.IterVar:
        if isinstance(v, T.IterVar):
            return v
        if isinstance(v, T.ObjVar) and isinstance(v.obj, torch.nn.ModuleDict):
            return T.IterVar([T.ConstVar(k) for k in v.obj._modules])
        return T.IterVar(self.unpack(v))

    def set_key(self, v: T.Var) -> Any:
        """The hashable Python value of a set element (constants and objects)."""
        k = self.const_of(self.concrete(v))
        try:
            hash(k)
        except TypeError:
            raise GraphBreak("GB011", f"unhashable {type(k).__name__} in a set") from None
        return k

    def mutate_set(self, v: T.Var) -> T.SetVar:
        if not isinstance(v, T.SetVar) or isinstance(v.values, frozenset):
            raise GraphBreak("GB011", "add to a non-set")
        if v.source is not None:
            raise GraphBreak("GB009", "set passed in from outside")
        return v

    def make_set(self, items: list[T.Var], frozen: bool = False) -> T.SetVar:
        values = {self.set_key(i) for i in items}
        return T.SetVar(frozenset(values) if frozen else values)

    def super_of(self, frame: Frame, args: list[T.Var]) -> T.SuperVar:
        """`super()` (the frame's `__class__` cell and first argument) or
        `super(cls, obj)`."""
        if len(args) == 2:
            cls, self_var = self.const_of(args[0]), args[1]
        elif not args:
            cell = frame.cells.get("__class__")
            code = frame.code
            if cell is None or cell.var is None or code.co_argcount == 0:
                raise GraphBreak("GB002", "super() outside a method")
            cls = self.const_of(cell.var)
            first = code.co_varnames[0]
            self_var = frame.locals.get(first)
            if self_var is None and first in frame.cells:
                self_var = frame.cells[first].var
            if self_var is None:
                raise GraphBreak("GB002", "super(): first argument is unbound")
        else:
            raise GraphBreak("GB002", "super() with one argument")
        from xacc._src.capture import builtins_ as B

        if not isinstance(cls, type) or not issubclass(B._python_type(self, self_var), cls):
            raise GraphBreak("GB002", "super(type, obj): obj is not an instance of type")
        return T.SuperVar(cls, self_var)

    def super_attr(self, sv: T.SuperVar, name: str) -> T.Var:
        from xacc._src.capture import builtins_ as B

        mro = B._python_type(self, sv.self_var).__mro__
        for k in mro[mro.index(sv.cls) + 1:]:
            if name not in k.__dict__:
                continue
            attr = k.__dict__[name]
            if isinstance(attr, types.FunctionType):
                return T.BoundMethodVar(attr, sv.self_var)
            if isinstance(attr, staticmethod) and isinstance(attr.__func__, types.FunctionType):
                return T.ObjVar(attr.__func__)
            if k is object and name == "__init__":
                return T.ObjVar(_object_init)
            raise GraphBreak("GB010", f"super().{name} is a {type(attr).__name__}")
        raise GraphBreak("GB010", f"super().{name}: no such attribute")

    def mutate_list(self, v: T.Var) -> T.ListVar:
        if not isinstance(v, T.ListVar):
            raise GraphBreak("GB011", "append to a non-list")
        if v.source is not None:
            raise GraphBreak("GB009", "list passed in from outside")
        return v

    def module_child(self, mod: T.ObjVar, name: str) -> T.Var:
        m = mod.obj
        src = mod.source
        for d in ("_parameters", "_buffers", "_modules"):
            dd = m.__dict__.get(d)
            if dd is not None and name in dd:
                value = dd[name]
                return self.wrap(value, src.attr(d).item(name) if src else None)
        raise KeyError(name)

    def getattr(self, obj: T.Var, name: str) -> T.Var:
        if isinstance(obj, T.TensorVar):
            return self.tensor_attr(obj, name)
        if isinstance(obj, T.ObjVar):
            o = obj.obj
            if isinstance(o, torch.nn.Module) and name not in type(o).__dict__:
                try:
                    return self.module_child(obj, name)
                except KeyError:
                    pass
            cls_attr = inspect.getattr_static(o, name, None) if not isinstance(o, types.ModuleType) else None
            if isinstance(cls_attr, types.FunctionType) and not isinstance(o, type) and \
                    name not in getattr(o, "__dict__", {}):
                return T.BoundMethodVar(cls_attr, obj)
            if isinstance(cls_attr, property) and not isinstance(o, type):
                if _is_user_function(cls_attr.fget):
                    return self.inline_call(cls_attr.fget, [obj], {}, None)
            try:
                value = getattr(o, name)
            except Exception as e:  # noqa: BLE001 - attribute errors become breaks
                raise GraphBreak("GB010", f".{name}: {type(e).__name__}") from None
            src = obj.source.attr(name) if obj.source is not None else None
            if src is None and isinstance(o, types.ModuleType) and o.__name__.startswith("torch"):
                return T.ObjVar(value)
            return self.wrap(value, src)
        if isinstance(obj, T.ConstVar):
            v = obj.value
            if isinstance(v, (torch.dtype, torch.device, torch.Size, tuple, int, float, str, complex)):
                attr = getattr(v, name)
                if callable(attr):
                    return T.ObjVar(attr)
                return T.ConstVar(attr)
        if isinstance(obj, T.TupleVar) and getattr(obj, "fields", None) and name in obj.fields:
            return obj.items[obj.fields.index(name)]
        if isinstance(obj, (T.ListVar, T.TupleVar, T.DictVar, T.SetVar)):
            return T.ObjVar(("method", obj, name))
        if isinstance(obj, T.SuperVar):
            return self.super_attr(obj, name)
        raise GraphBreak("GB010", f".{name} of {type(obj).__name__}")

    def tensor_attr(self, t: T.TensorVar, name: str) -> T.Var:
        m = t.meta
        if name == "device":
            return T.ConstVar(torch.device(self.device))
        if name in ("is_cuda", "is_meta", "is_xpu", "is_mps"):
            return T.ConstVar(False)
        if name == "is_cpu":
            return T.ConstVar(self.device == "cpu")
        if name in ("grad", "grad_fn", "_version", "__array__"):
            raise GraphBreak("GB010", f"Tensor.{name}")
        if name in ("cuda", "cpu", "to", "type") or callable(getattr(type(m), name, None)):
            return T.TensorMethodVar(t, name)
        return self._read(self.from_python(self.rec.call(getattr, (m, name), {})))

    def _read(self, v: T.Var) -> T.Var:
        """Notes a value computed from tensor metadata (sizes...) for dynamic shapes."""
        if isinstance(v, T.ConstVar):
            self.reads.append(v.value)
        elif isinstance(v, T.TupleVar) and T.is_const(v):
            self.reads.append(T.const_value(v))
        return v

    def binary(self, op: Any, a: T.Var, b: T.Var) -> T.Var:
        if isinstance(a, T.SymScalarVar) or isinstance(b, T.SymScalarVar):
            from xacc._src.capture import scalars

            if not (isinstance(a, T.TensorVar) or isinstance(b, T.TensorVar)):
                r = scalars.binary(self, op, a, b)
                if r is not None:
                    return r
                a, b = self.concrete(a), self.concrete(b)
        if isinstance(a, T.TensorVar) or isinstance(b, T.TensorVar):
            if op in (operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
                      operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor,
                      operator.imatmul, operator.ilshift, operator.irshift) and isinstance(a, T.TensorVar):
                return self.record(op, [a, b], {})
            return self.record(op, [a, b], {})
        if T.is_const(a) and T.is_const(b):
            try:
                return self.from_const(op(self.const_of(a), self.const_of(b)))
            except Exception as e:  # noqa: BLE001 - the eager program raises it; let Python do so
                raise GraphBreak("GB011", f"{op.__name__} raised {type(e).__name__}") from None
        if isinstance(a, (T.TupleVar, T.ListVar)) and isinstance(b, (T.TupleVar, T.ListVar)) and \
                op in (operator.add, operator.iadd) and type(a) is type(b):
            if op is operator.iadd and isinstance(a, T.ListVar):
                self.mutate_list(a).items.extend(b.items)
                return a
            return type(a)(a.items + b.items)
        if isinstance(a, T.SetVar) and isinstance(b, T.SetVar):
            if op in _SET_INPLACE and isinstance(a.values, set):
                self.mutate_set(a)
                op(a.values, b.values)
                return a
            try:
                r = op(a.values, b.values)
            except TypeError:
                raise GraphBreak("GB011", f"{op.__name__} on sets") from None
            return T.SetVar(r) if isinstance(r, (set, frozenset)) else T.ConstVar(r)
        if isinstance(a, (T.TupleVar, T.ListVar)) and T.is_const(b) and op is operator.mul:
            return type(a)(a.items * self.const_of(b))
        if op in (operator.eq, operator.ne) and isinstance(a, T.ObjVar) and isinstance(b, (T.ObjVar, T.ConstVar)):
            other = b.obj if isinstance(b, T.ObjVar) else b.value
            if type(a.obj).__eq__ is object.__eq__:
                return T.ConstVar((a.obj is other) == (op is operator.eq))
        raise GraphBreak("GB011", f"{op.__name__} on {type(a).__name__} and {type(b).__name__}")

    def from_const(self, value: Any) -> T.Var:
        if isinstance(value, tuple) and all(isinstance(e, CONST_TYPES) for e in value):
            return T.TupleVar([T.ConstVar(e) for e in value])
        return T.ConstVar(value)

    def unary(self, op: Any, v: T.Var) -> T.Var:
        if isinstance(v, T.SymScalarVar):
            from xacc._src.capture import scalars

            r = scalars.unary(self, op, v)
            if r is not None:
                return r
            v = self.concrete(v)
        if isinstance(v, T.TensorVar):
            return self.record(op, [v], {})
        if T.is_const(v):
            return T.ConstVar(op(self.const_of(v)))
        raise GraphBreak("GB011", f"{op.__name__} on {type(v).__name__}")

    def subscr(self, obj: T.Var, idx: T.Var) -> T.Var:
        if isinstance(obj, T.TensorVar):
            return self.record(operator.getitem, [obj, idx], {})
        if isinstance(obj, (T.TupleVar, T.ListVar)):
            i = self.const_of(idx)
            if isinstance(i, slice):
                return type(obj)(obj.items[i])
            return obj.items[i]
        if isinstance(obj, T.DictVar):
            k = self.const_of(idx)
            if k not in obj.items:
                raise GraphBreak("GB011", f"missing key {k!r}")
            return obj.items[k]
        if isinstance(obj, T.ConstVar) and T.is_const(idx):
            return self.from_const(obj.value[self.const_of(idx)])
        if isinstance(obj, T.ObjVar) and isinstance(obj.obj, (torch.nn.ModuleList, torch.nn.Sequential)):
            i = self.const_of(idx)
            keys = list(obj.obj._modules)
            if isinstance(i, int):
                return self.module_child(obj, keys[i])
        if isinstance(obj, T.ObjVar) and isinstance(obj.obj, torch.nn.ModuleDict):
            return self.module_child(obj, self.const_of(idx))
        raise GraphBreak("GB011", f"subscript of {type(obj).__name__}")

    def store_subscr(self, obj: T.Var, idx: T.Var, val: T.Var) -> None:
        if isinstance(obj, T.TensorVar):
            self.record(operator.setitem, [obj, idx, val], {})
            return
        if isinstance(obj, T.ListVar):
            self.mutate_list(obj).items[self.const_of(idx)] = val
            return
        if isinstance(obj, T.DictVar) and obj.source is None:
            obj.items[self.const_of(idx)] = val
            return
        raise GraphBreak("GB009", f"item assignment on {type(obj).__name__}")

    # -- calls -----------------------------------------------------------------------
    def call(self, frame: Frame, fn: T.Var, args: list[T.Var], kwargs: dict[str, T.Var]) -> T.Var:
        from xacc._src.capture import builtins_ as B

        if isinstance(fn, T.TensorMethodVar):
            return B.tensor_method(self, fn, args, kwargs)
        if isinstance(fn, T.GradExitVar):
            self.set_grad(fn.previous)
            return T.ConstVar(None)
        if isinstance(fn, T.BoundMethodVar):
            return self.inline_call(fn.func, [fn.self_var] + args, kwargs, None)
        if isinstance(fn, T.FunctionVar):
            return self.inline_code(fn.code, fn.globals, fn.defaults, fn.kwdefaults, fn.cells, args, kwargs,
                                    None, fn.name)
        if not isinstance(fn, T.ObjVar):
            raise GraphBreak("GB002", f"call of {type(fn).__name__}")
        f = fn.obj
        if isinstance(f, tuple) and len(f) == 3 and f[0] == "method":
            return B.container_method(self, f[1], f[2], args, kwargs)
        if f is print:
            raise GraphBreak("GB003", "print()")
        if f is torch.no_grad or f is torch.enable_grad:
            if args or kwargs:
                raise GraphBreak("GB002", f"{f.__name__}(...) with arguments")
            return T.GradModeVar(f is torch.enable_grad)
        if f is builtins.super:
            return self.super_of(frame, args)
        if f is _object_init:
            if args or kwargs:
                raise GraphBreak("GB002", "object.__init__ with arguments")
            return T.ConstVar(None)
        h = B.BUILTINS.get(f) if _hashable(f) else None
        if h is not None:
            if f is not builtins.isinstance and f is not builtins.type:
                args = [self.concrete(a) for a in args]
                kwargs = {k: self.concrete(v) for k, v in kwargs.items()}
            return h(self, args, kwargs)
        if isinstance(f, torch.nn.Module):
            return self.call_module(fn, args, kwargs)
        if isinstance(f, types.MethodType):
            self_var = self.wrap(f.__self__, fn.source.attr("__self__") if fn.source else None)
            if isinstance(f.__self__, torch.Tensor):
                return B.tensor_method(self, T.TensorMethodVar(self_var, f.__name__), args, kwargs)
            if _is_user_function(f.__func__):
                return self.inline_call(f.__func__, [self_var] + args, kwargs, None)
        if _is_torch_op(f):
            return self.record(f, args, kwargs)
        if isinstance(f, types.FunctionType) and _is_user_function(f):
            return self.inline_call(f, args, kwargs, fn.source)
        args = [self.concrete(a) for a in args]
        kwargs = {k: self.concrete(v) for k, v in kwargs.items()}
        if _hashable(f) and f in PURE and all(T.is_const(a) or isinstance(a, T.SetVar) for a in args) and \
                all(T.is_const(v) for v in kwargs.values()):
            return self.from_const(f(*[self.const_of(a) for a in args],
                                     **{k: self.const_of(v) for k, v in kwargs.items()}))
        name = getattr(f, "__qualname__", getattr(f, "__name__", type(f).__name__))
        raise GraphBreak("GB002", f"{name}")

    def call_module(self, mod: T.ObjVar, args: list[T.Var], kwargs: dict[str, T.Var]) -> T.Var:
        m = mod.obj
        if any(getattr(m, d, None) for d in _NN_HOOK_DICTS):
            raise GraphBreak("GB012", type(m).__name__)
        mm = torch.nn.modules.module
        if mm._global_forward_hooks or mm._global_forward_pre_hooks or mm._global_backward_hooks:
            raise GraphBreak("GB012", "global module hooks")
        forward = type(m).forward
        if not isinstance(forward, types.FunctionType):
            raise GraphBreak("GB002", f"{type(m).__name__}.forward")
        return self.inline_call(forward, [mod] + args, kwargs, None)

    def inline_call(self, fn: types.FunctionType, args: list[T.Var], kwargs: dict[str, T.Var],
                    source: T.Source | None) -> T.Var:
        cells = []
        if fn.__closure__:
            for i, c in enumerate(fn.__closure__):
                try:
                    value = c.cell_contents
                except ValueError:
                    cells.append(T.Cell(None))
                    continue
                src = source.attr("__closure__").item(i).attr("cell_contents") if source else None
                cells.append(T.Cell(self.wrap(value, src)))
        defaults = tuple(self.wrap(d, None) for d in (fn.__defaults__ or ()))
        kwdefaults = {k: self.wrap(v, None) for k, v in (fn.__kwdefaults__ or {}).items()}
        return self.inline_code(fn.__code__, fn.__globals__, defaults, kwdefaults, cells, args, kwargs,
                                source, fn.__name__)

    def inline_code(self, code: types.CodeType, f_globals: dict, defaults: tuple, kwdefaults: dict,
                    cells: list[T.Cell], args: list[T.Var], kwargs: dict[str, T.Var],
                    source: T.Source | None, name: str) -> T.Var:
        if code.co_flags & (0x80 | 0x100 | 0x200):
            raise GraphBreak("GB013", f"coroutine {name}")
        generator = bool(code.co_flags & 0x20)
        if len(self.inline_stack) >= MAX_INLINE_DEPTH or code in self.inline_stack:
            raise GraphBreak("GB016", f"inlining {name}")
        locals_ = bind_arguments(code, defaults, kwdefaults, args, kwargs, name)
        frame_cells: dict[str, T.Cell] = {}
        for i, fv in enumerate(code.co_freevars):
            frame_cells[fv] = cells[i] if i < len(cells) else T.Cell(None)
        trusted = (f_globals.get("__name__") or "").startswith("torch")
        gidx = None if trusted else self.const_index(f_globals)

        def gsource(n: str, _g=f_globals, _i=gidx) -> T.Source | None:
            if _i is None:
                return None
            if n in _g:
                return T.Source("K", _i).item(n)
            b = _g.get("__builtins__", builtins)
            b = b if isinstance(b, dict) else b.__dict__
            return T.Source("K", self.const_index(b)).item(n)

        parent = self.top
        f = Frame(self, code, f_globals, locals_, frame_cells, parent, gsource)
        if generator:
            # Generators (genexprs feeding tuple(), unpacking, sum()) run to
            # completion here; their yields become an iterator over known items.
            f.yields = []
        self.inline_stack.append(code)
        try:
            r = f.run()
            return T.IterVar(f.yields) if generator else r
        except GraphBreak as gb:
            if gb.where is None:
                gb.where = f.where()
            raise
        finally:
            self.inline_stack.pop()


def bind_arguments(code: types.CodeType, defaults: tuple, kwdefaults: dict, args: list[T.Var],
                   kwargs: dict[str, T.Var], name: str) -> dict[str, T.Var]:
    nargs = code.co_argcount
    nkw = code.co_kwonlyargcount
    names = code.co_varnames
    out: dict[str, T.Var] = {}
    pos = names[:nargs]
    for i, a in enumerate(args[:nargs]):
        out[pos[i]] = a
    extra = args[nargs:]
    if code.co_flags & 0x04:
        out[names[nargs + nkw]] = T.TupleVar(extra)
    elif extra:
        raise GraphBreak("GB011", f"too many arguments to {name}")
    varkw = {}
    for k, v in kwargs.items():
        if k in names[:nargs + nkw] and k not in names[:code.co_posonlyargcount]:
            if k in out:
                raise GraphBreak("GB011", f"duplicate argument {k} to {name}")
            out[k] = v
        else:
            varkw[k] = v
    if code.co_flags & 0x08:
        out[names[nargs + nkw + (1 if code.co_flags & 0x04 else 0)]] = T.DictVar(varkw)
    elif varkw:
        raise GraphBreak("GB011", f"unexpected keyword arguments to {name}")
    nd = len(defaults)
    for i, p in enumerate(pos):
        if p not in out:
            j = i - (nargs - nd)
            if j < 0:
                raise GraphBreak("GB011", f"missing argument {p} to {name}")
            out[p] = defaults[j]
    for p in names[nargs:nargs + nkw]:
        if p not in out:
            if p not in kwdefaults:
                raise GraphBreak("GB011", f"missing keyword argument {p} to {name}")
            out[p] = kwdefaults[p]
    return out


_SET_INPLACE = (operator.ior, operator.iand, operator.isub, operator.ixor)


def _object_init(*args: Any, **kwargs: Any) -> None:
    """Stands for `object.__init__` reached through `super().__init__()`."""


def _hashable(x: Any) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False
