"""The bytecode translator: symbolic execution of CPython 3.11 code objects.

One `Frame` per code object being run (the captured frame and every inlined
callee). Each opcode has a handler method named after it; an opcode without a
handler, or a handler that meets something it cannot model, raises
`GraphBreak`. The translator never runs user code: torch calls run on meta
tensors (recorder.py), user functions and `nn.Module.forward` are inlined, and
everything else is a break. Values read from the frame are wrapped by
`Ctx.wrap`, which installs guards on their sources.
"""

from __future__ import annotations

import builtins
import dis
import math
import operator
import types
from typing import Any

import torch

from xacc._src.capture import trackers as T
from xacc._src.capture.breaks import GraphBreak
from xacc._src.capture.recorder import meta_like, tensor_type

MAX_INLINE_DEPTH = 24
MAX_STEPS = 200_000

BINARY_OPS = [operator.add, operator.and_, operator.floordiv, operator.lshift, operator.matmul,
              operator.mul, operator.mod, operator.or_, operator.pow, operator.rshift, operator.sub,
              operator.truediv, operator.xor, operator.iadd, operator.iand, operator.ifloordiv,
              operator.ilshift, operator.imatmul, operator.imul, operator.imod, operator.ior,
              operator.ipow, operator.irshift, operator.isub, operator.itruediv, operator.ixor]
COMPARE_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
               ">": operator.gt, ">=": operator.ge}
# Functions that are safe to evaluate at trace time on constant arguments.
PURE = {abs, min, max, len, int, float, bool, str, round, divmod, pow, isinstance, issubclass,
        hash, repr, sorted, sum, any, all, tuple, list, range, slice, type, callable, hasattr,
        getattr} | {getattr(math, n) for n in dir(math) if callable(getattr(math, n))} | \
       {getattr(operator, n) for n in dir(operator) if callable(getattr(operator, n)) and not n.startswith("_")}
# torch callables that change global state and must never run while tracing.
TORCH_BLOCKLIST = ("manual_seed", "seed", "save", "load", "set_", "use_deterministic",
                   "compile", "jit", "autograd.grad", "backward", "set_grad_enabled")
CONST_TYPES = (bool, int, float, str, type(None), type(Ellipsis), torch.dtype, torch.device,
               torch.memory_format, torch.layout, complex, bytes)


def _is_user_function(fn: Any) -> bool:
    mod = getattr(fn, "__module__", None) or ""
    if mod.startswith("torch.nn.modules") or mod.startswith("torch.nn.utils.parametrize"):
        return True
    if mod.startswith(("torch", "xacc", "xjit", "numpy", "typing", "functools", "abc", "collections",
                       "dataclasses", "contextlib", "inspect", "logging", "threading", "copy")):
        return False
    return True


def _is_torch_op(fn: Any) -> bool:
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return True
    mod = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", getattr(fn, "__name__", "")) or ""
    if isinstance(fn, type):
        return False
    if mod.startswith("torch") and not mod.startswith("torch.nn.modules"):
        full = f"{mod}.{name}"
        return not any(b in full for b in TORCH_BLOCKLIST)
    objclass = getattr(fn, "__objclass__", None)
    return objclass is not None and issubclass(objclass, torch._C.TensorBase)


class Frame:
    """Symbolic state of one code object being translated."""

    def __init__(self, ctx: Any, code: types.CodeType, f_globals: dict, locals_: dict[str, T.Var],
                 cells: dict[str, T.Cell], parent: "Frame | None", globals_source: Any) -> None:
        self.ctx = ctx
        self.code = code
        self.globals = f_globals
        self.globals_source = globals_source  # callable(name) -> Source | None
        self.locals = locals_
        self.cells = cells
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.stack: list[T.Var] = []
        self.kw_names: tuple = ()
        self.instrs = ctx.instructions(code)
        self.index = {ins.offset: i for i, ins in enumerate(self.instrs)}
        self.ip = 0
        self.cur: dis.Instruction | None = None
        self.line = code.co_firstlineno

    # -- helpers -------------------------------------------------------------
    def push(self, v: T.Var) -> None:
        self.stack.append(v)

    def pop(self) -> T.Var:
        return self.stack.pop()

    def popn(self, n: int) -> list[T.Var]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def jump(self, target: int) -> None:
        self.ip = self.index[target]

    def where(self) -> tuple[str, int, str]:
        return (self.code.co_filename, self.line, self.code.co_name)

    def run(self) -> T.Var:
        """Runs until RETURN_VALUE; returns the returned tracker."""
        ctx = self.ctx
        while True:
            ins = self.instrs[self.ip]
            self.cur = ins
            if ins.positions is not None and ins.positions.lineno is not None:
                self.line = ins.positions.lineno
            ctx.steps += 1
            if ctx.steps > MAX_STEPS:
                raise GraphBreak("GB016", "too many instructions (unbounded loop?)")
            if self.parent is None:
                ctx.before_instruction(self, ins)
            self.ip += 1
            handler = getattr(self, ins.opname, None)
            if handler is None:
                raise GraphBreak("GB001", ins.opname)
            ctx.rec.loc = (self.code.co_filename, self.line)
            r = handler(ins)
            if r is not None:
                return r

    # -- frame setup and no-ops ----------------------------------------------
    def NOP(self, ins):
        pass

    RESUME = EXTENDED_ARG = PRECALL = CACHE = NOP

    def COPY_FREE_VARS(self, ins):
        pass  # free variables are bound when the frame is made

    def MAKE_CELL(self, ins):
        name = ins.argval
        self.cells[name] = T.Cell(self.locals.pop(name, None))

    # -- locals, constants, globals ------------------------------------------
    def LOAD_FAST(self, ins):
        v = self.locals.get(ins.argval)
        if v is None:
            raise GraphBreak("GB001", f"read of unbound local {ins.argval!r}")
        self.push(v)

    def STORE_FAST(self, ins):
        self.locals[ins.argval] = self.pop()

    def DELETE_FAST(self, ins):
        self.locals.pop(ins.argval, None)

    def LOAD_CONST(self, ins):
        v = ins.argval
        if isinstance(v, tuple):
            self.push(T.TupleVar([T.ConstVar(e) for e in v]) if all(isinstance(e, CONST_TYPES) for e in v)
                      else T.ConstVar(v))
        else:
            self.push(T.ConstVar(v))

    def LOAD_GLOBAL(self, ins):
        if ins.arg & 1:
            self.push(T.NullVar())
        name = ins.argval
        if name in self.globals:
            value = self.globals[name]
        else:
            b = self.globals.get("__builtins__", builtins)
            b = b if isinstance(b, dict) else b.__dict__
            if name not in b:
                raise GraphBreak("GB001", f"name {name!r} is not defined")
            value = b[name]
        self.push(self.ctx.wrap(value, self.globals_source(name)))

    def STORE_GLOBAL(self, ins):
        raise GraphBreak("GB008", f"global {ins.argval}")

    def LOAD_DEREF(self, ins):
        cell = self.cells.get(ins.argval)
        if cell is None or cell.var is None:
            raise GraphBreak("GB001", f"free variable {ins.argval!r} is unbound")
        self.push(cell.var)

    LOAD_CLASSDEREF = LOAD_DEREF

    def STORE_DEREF(self, ins):
        cell = self.cells.get(ins.argval)
        if cell is None or (self.parent is None and ins.argval in self.code.co_freevars):
            raise GraphBreak("GB008", f"nonlocal {ins.argval}")
        cell.var = self.pop()

    def LOAD_CLOSURE(self, ins):
        cell = self.cells.get(ins.argval)
        if cell is None:
            raise GraphBreak("GB001", f"closure {ins.argval!r}")
        self.push(T.CellRefVar(cell))

    # -- stack manipulation ----------------------------------------------------
    def POP_TOP(self, ins):
        self.pop()

    def PUSH_NULL(self, ins):
        self.push(T.NullVar())

    def COPY(self, ins):
        self.push(self.stack[-ins.arg])

    def SWAP(self, ins):
        s = self.stack
        s[-1], s[-ins.arg] = s[-ins.arg], s[-1]

    # -- attributes ------------------------------------------------------------
    def LOAD_ATTR(self, ins):
        self.push(self.ctx.getattr(self.pop(), ins.argval))

    def LOAD_METHOD(self, ins):
        obj = self.pop()
        self.push(T.NullVar())
        self.push(self.ctx.getattr(obj, ins.argval))

    def STORE_ATTR(self, ins):
        raise GraphBreak("GB007", f".{ins.argval} = ...")

    def DELETE_ATTR(self, ins):
        raise GraphBreak("GB007", f"del .{ins.argval}")

    # -- operators -------------------------------------------------------------
    def BINARY_OP(self, ins):
        b, a = self.pop(), self.pop()
        self.push(self.ctx.binary(BINARY_OPS[ins.arg], a, b))

    def COMPARE_OP(self, ins):
        b, a = self.pop(), self.pop()
        self.push(self.ctx.binary(COMPARE_OPS[ins.argval], a, b))

    def UNARY_NEGATIVE(self, ins):
        self.push(self.ctx.unary(operator.neg, self.pop()))

    def UNARY_POSITIVE(self, ins):
        self.push(self.ctx.unary(operator.pos, self.pop()))

    def UNARY_INVERT(self, ins):
        self.push(self.ctx.unary(operator.invert, self.pop()))

    def UNARY_NOT(self, ins):
        v = self.pop()
        self.push(T.ConstVar(not self.ctx.truth(v)))

    def IS_OP(self, ins):
        b, a = self.pop(), self.pop()
        r = self.ctx.identical(a, b)
        self.push(T.ConstVar(r != bool(ins.arg)))

    def CONTAINS_OP(self, ins):
        container, item = self.pop(), self.pop()
        r = self.ctx.contains(container, item)
        self.push(T.ConstVar(r != bool(ins.arg)))

    def BINARY_SUBSCR(self, ins):
        idx, obj = self.pop(), self.pop()
        self.push(self.ctx.subscr(obj, idx))

    def STORE_SUBSCR(self, ins):
        idx, obj, val = self.stack[-1], self.stack[-2], self.stack[-3]
        self.ctx.store_subscr(obj, idx, val)
        self.popn(3)

    def DELETE_SUBSCR(self, ins):
        raise GraphBreak("GB009", "del x[i]")

    # -- containers ------------------------------------------------------------
    def BUILD_TUPLE(self, ins):
        self.push(T.TupleVar(self.popn(ins.arg)))

    def BUILD_LIST(self, ins):
        self.push(T.ListVar(self.popn(ins.arg)))

    def BUILD_SET(self, ins):
        self.push(self.ctx.make_set(self.popn(ins.arg)))

    def SET_ADD(self, ins):
        v = self.pop()
        self.ctx.mutate_set(self.stack[-ins.arg]).values.add(self.ctx.set_key(v))

    def SET_UPDATE(self, ins):
        v = self.pop()
        s = self.ctx.mutate_set(self.stack[-ins.arg])
        s.values.update(self.ctx.set_key(i) for i in self.ctx.unpack(self.ctx.iterate(v)))

    def BUILD_MAP(self, ins):
        items = self.popn(2 * ins.arg)
        d = {}
        for k, v in zip(items[::2], items[1::2]):
            d[self.ctx.const_of(k)] = v
        self.push(T.DictVar(d))

    def BUILD_CONST_KEY_MAP(self, ins):
        keys = self.ctx.const_of(self.pop())
        vals = self.popn(ins.arg)
        self.push(T.DictVar(dict(zip(keys, vals))))

    def BUILD_SLICE(self, ins):
        parts = self.popn(ins.arg)
        self.push(T.ConstVar(slice(*[self.ctx.const_of(p) for p in parts])))

    def BUILD_STRING(self, ins):
        parts = self.popn(ins.arg)
        self.push(T.ConstVar("".join(self.ctx.const_of(p) for p in parts)))

    def FORMAT_VALUE(self, ins):
        spec = self.ctx.const_of(self.pop()) if (ins.arg & 0x04) else ""
        v = self.ctx.const_of(self.pop())
        conv = ins.arg & 0x03
        v = str(v) if conv == 1 else repr(v) if conv == 2 else ascii(v) if conv == 3 else v
        self.push(T.ConstVar(format(v, spec)))

    def LIST_APPEND(self, ins):
        v = self.pop()
        lst = self.stack[-ins.arg]
        self.ctx.mutate_list(lst).items.append(v)

    def LIST_EXTEND(self, ins):
        v = self.pop()
        lst = self.stack[-ins.arg]
        self.ctx.mutate_list(lst).items.extend(self.ctx.unpack(v))

    def LIST_TO_TUPLE(self, ins):
        self.push(T.TupleVar(self.ctx.unpack(self.pop())))

    def MAP_ADD(self, ins):
        v, k = self.pop(), self.pop()
        d = self.stack[-ins.arg]
        if not isinstance(d, T.DictVar) or d.source is not None:
            raise GraphBreak("GB009", "dict update")
        d.items[self.ctx.const_of(k)] = v

    def DICT_UPDATE(self, ins):
        v = self.pop()
        d = self.stack[-ins.arg]
        if not isinstance(d, T.DictVar) or not isinstance(v, T.DictVar) or d.source is not None:
            raise GraphBreak("GB009", "dict update")
        d.items.update(v.items)

    DICT_MERGE = DICT_UPDATE

    def UNPACK_SEQUENCE(self, ins):
        items = self.ctx.unpack(self.pop())
        if len(items) != ins.arg:
            raise GraphBreak("GB011", "unpack length mismatch")
        for v in reversed(items):
            self.push(v)

    def UNPACK_EX(self, ins):
        items = self.ctx.unpack(self.pop())
        before, after = ins.arg & 0xFF, ins.arg >> 8
        if len(items) < before + after:
            raise GraphBreak("GB011", "unpack length mismatch")
        rest = items[before:len(items) - after]
        out = items[:before] + [T.ListVar(rest)] + items[len(items) - after:]
        for v in reversed(out):
            self.push(v)

    # -- control flow ----------------------------------------------------------
    def JUMP_FORWARD(self, ins):
        self.jump(ins.argval)

    JUMP_BACKWARD = JUMP_BACKWARD_NO_INTERRUPT = JUMP_FORWARD

    def _cond(self, ins, want: bool):
        v = self.stack[-1]
        t = self.ctx.truth(v)  # raises GB004 for tensors before popping
        self.pop()
        if t == want:
            self.jump(ins.argval)

    def POP_JUMP_FORWARD_IF_TRUE(self, ins):
        self._cond(ins, True)

    def POP_JUMP_FORWARD_IF_FALSE(self, ins):
        self._cond(ins, False)

    POP_JUMP_BACKWARD_IF_TRUE = POP_JUMP_FORWARD_IF_TRUE
    POP_JUMP_BACKWARD_IF_FALSE = POP_JUMP_FORWARD_IF_FALSE

    def _none(self, ins, want: bool):
        v = self.pop()
        is_none = isinstance(v, T.ConstVar) and v.value is None
        if is_none == want:
            self.jump(ins.argval)

    def POP_JUMP_FORWARD_IF_NONE(self, ins):
        self._none(ins, True)

    def POP_JUMP_FORWARD_IF_NOT_NONE(self, ins):
        self._none(ins, False)

    POP_JUMP_BACKWARD_IF_NONE = POP_JUMP_FORWARD_IF_NONE
    POP_JUMP_BACKWARD_IF_NOT_NONE = POP_JUMP_FORWARD_IF_NOT_NONE

    def JUMP_IF_TRUE_OR_POP(self, ins):
        if self.ctx.truth(self.stack[-1]):
            self.jump(ins.argval)
        else:
            self.pop()

    def JUMP_IF_FALSE_OR_POP(self, ins):
        if not self.ctx.truth(self.stack[-1]):
            self.jump(ins.argval)
        else:
            self.pop()

    def GET_ITER(self, ins):
        self.push(self.ctx.iterate(self.pop()))

    def FOR_ITER(self, ins):
        it = self.stack[-1]
        if not isinstance(it, T.IterVar):
            raise GraphBreak("GB011", "iteration over an unknown iterator")
        if it.pos < len(it.items):
            self.push(it.items[it.pos])
            it.pos += 1
        else:
            self.pop()
            self.jump(ins.argval)

    def RETURN_VALUE(self, ins):
        return self.pop()

    def RETURN_GENERATOR(self, ins):
        if getattr(self, "yields", None) is None:
            raise GraphBreak("GB013", "generator")
        self.push(T.ConstVar(None))

    def YIELD_VALUE(self, ins):
        if getattr(self, "yields", None) is None:
            raise GraphBreak("GB013", "yield")
        self.yields.append(self.pop())
        self.push(T.ConstVar(None))

    # -- calls -----------------------------------------------------------------
    def KW_NAMES(self, ins):
        self.kw_names = self.code.co_consts[ins.arg]

    def CALL(self, ins):
        if self.parent is None:
            self.ctx.check_break_at(self, ins)
        n = ins.arg
        args = self.popn(n)
        a, b = self.stack[-2], self.stack[-1]
        self.popn(2)
        if isinstance(a, T.NullVar):
            fn = b
        else:
            fn, args = a, [b] + args
        kw = {}
        if self.kw_names:
            names = self.kw_names
            kw = dict(zip(names, args[len(args) - len(names):]))
            args = args[:len(args) - len(names)]
            self.kw_names = ()
        self.push(self.ctx.call(self, fn, args, kw))

    def CALL_FUNCTION_EX(self, ins):
        kw = self.pop() if ins.arg & 1 else T.DictVar({})
        args = self.pop()
        fn = self.pop()
        if self.stack and isinstance(self.stack[-1], T.NullVar):
            self.pop()
        if not isinstance(kw, T.DictVar):
            raise GraphBreak("GB011", "**kwargs of unknown type")
        self.push(self.ctx.call(self, fn, self.ctx.unpack(args), dict(kw.items)))

    def MAKE_FUNCTION(self, ins):
        code = self.ctx.const_of(self.pop())
        cells = []
        if ins.arg & 0x08:
            cells = [c.cell for c in self.pop().items]
        if ins.arg & 0x04:
            raise GraphBreak("GB001", "function annotations")
        kwdefaults = {}
        if ins.arg & 0x02:
            kwdefaults = self.pop().items
        defaults = ()
        if ins.arg & 0x01:
            defaults = tuple(self.ctx.unpack(self.pop()))
        self.push(T.FunctionVar(code, self.globals, defaults, kwdefaults, cells, code.co_name))

    # -- with / exceptions (always breaks; see breaks.py) --------------------------
    def BEFORE_WITH(self, ins):
        mgr = self.stack[-1]
        if not isinstance(mgr, T.GradModeVar):
            raise GraphBreak("GB014", "with statement")
        # A grad-mode region: __exit__ (called on the normal path with three
        # Nones) restores the mode; the exception path is never traced.
        previous = self.ctx.grad_enabled
        self.ctx.set_grad(mgr.enabled)
        self.pop()
        self.push(T.GradExitVar(previous))
        self.push(T.ConstVar(None))

    def RAISE_VARARGS(self, ins):
        raise GraphBreak("GB019", "raise")

    def LOAD_ASSERTION_ERROR(self, ins):
        raise GraphBreak("GB019", "assert failed")


def tensor_input_type(t: torch.Tensor, device: str) -> tuple:
    return tensor_type(t, device)


__all__ = ["Frame", "meta_like", "tensor_input_type", "_is_user_function", "_is_torch_op", "PURE",
           "CONST_TYPES", "MAX_INLINE_DEPTH"]
