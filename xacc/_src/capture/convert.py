"""The compile callback of the frame hook: translate one frame, then install a
cache entry on its code object.

Outcomes, in order of preference:
  graph    - the frame ran to RETURN_VALUE: one graph, a template for the return
             value, guards; the original bytecode never runs again on a hit;
  code     - a graph break: the prefix graph runs from a generated break
             function, the unsupported instruction runs natively, and a resume
             function (which re-enters the hook) continues the frame;
  skip     - the frame cannot be split (break in a loop, a try block, a frame
             with cells, ...) or has nothing to capture: it runs in Python.
A break first *restarts* the translation with the break offset recorded, so
the prefix is traced cleanly up to the instruction and never half-executes it.
Internal errors never reach the user: the frame is marked skip and logged.
"""

from __future__ import annotations

import dis
import os
import sys
import sysconfig
import threading
import time
import traceback
import types
from dataclasses import dataclass, field
from typing import Any

import torch

from xacc._C import capture as C
from xacc._src.capture import codegen, config, dynamic
from xacc._src.capture.host import Host
from xacc._src.capture import trackers as T
from xacc._src.capture.breaks import BreakInfo, GraphBreak
from xacc._src.capture.config import RECOMPILE_LIMIT, log
from xacc._src.capture.context import Ctx
from xacc._src.capture.translator import Frame

OP = dis.opmap


@dataclass
class Options:
    device: str = "cpu"
    backend: str | None = None
    fullgraph: bool = False
    dynamic: bool | None = None


@dataclass
class CompileEvent:
    """One callback invocation, as explain() and counters see it."""

    function: str
    filename: str
    lineno: int
    outcome: str  # graph | code | skip | error
    graph: str = ""
    op_counts: dict = field(default_factory=dict)
    breaks: list = field(default_factory=list)
    guards: list = field(default_factory=list)
    seconds: float = 0.0
    recompile_reasons: list = field(default_factory=list)


EVENTS: list[CompileEvent] = []
COUNTERS: dict[str, int] = {"frames": 0, "graphs": 0, "breaks": 0, "recompiles": 0, "skipped": 0,
                            "internal_errors": 0, "capture_seconds_us": 0}
_tls = threading.local()
_lock = threading.RLock()
_RESUME_CACHE: dict[tuple, types.FunctionType] = {}
_label_count: dict[types.CodeType, int] = {}


def current_options() -> Options:
    stack = getattr(_tls, "opts", None)
    return stack[-1] if stack else DEFAULT_OPTIONS


DEFAULT_OPTIONS = Options()


def push_options(o: Options) -> None:
    if not hasattr(_tls, "opts"):
        _tls.opts = []
    _tls.opts.append(o)


def pop_options() -> None:
    _tls.opts.pop()


def _skip_dirs() -> tuple[str, ...]:
    dirs = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
            os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    try:
        import xjit
        dirs.add(os.path.dirname(os.path.abspath(xjit.__file__)))
    except ImportError:
        pass
    for k in ("purelib", "platlib"):
        dirs.add(sysconfig.get_paths()[k])
    return tuple(sorted(d + os.sep for d in dirs))


_SKIP = _skip_dirs()
_ALLOW = (os.path.join(os.path.dirname(torch.__file__), "nn", "modules") + os.sep,)


def should_skip(code: types.CodeType) -> bool:
    if not (code.co_flags & 0x01) or code.co_name == "<module>":  # not CO_OPTIMIZED
        return True
    fn = code.co_filename
    if fn.startswith(_ALLOW):
        return code.co_name != "forward"  # built-in modules' forward, not Module.__call__
    return fn.startswith(_SKIP) or fn.startswith("<frozen")


def callback(func: types.FunctionType, args: tuple, failures: list[str]) -> Any:
    """Called by the hook (thread Off) on a cache miss of `func`'s frame."""
    code = func.__code__
    resume = code in codegen.RESUME_ORIGIN or C.is_resume(code)
    if not resume and should_skip(code):
        C.mark_skip(code)
        return None
    opts = current_options()
    if not resume and not any(_has_tensors(a) for a in args):
        # Nothing tensor-valued comes in (script mains, constructors): translating
        # such frames costs time and captures nothing.
        C.mark_skip(code)
        return None
    with _lock:
        COUNTERS["frames"] += 1
        if failures:
            COUNTERS["recompiles"] += 1
            log("recompiles", "recompiling %s (%s:%d): %s", code.co_qualname, code.co_filename,
                code.co_firstlineno, "; ".join(failures))
        t0 = time.perf_counter()
        ev = CompileEvent(code.co_qualname, code.co_filename, code.co_firstlineno, "error",
                          recompile_reasons=list(failures))
        try:
            compile_frame(func, args, opts, ev)
        except GraphBreak as gb:  # fullgraph=True
            from xacc.errors import Unsupported
            ev.outcome = "error"
            info = gb.info()
            ev.breaks.append(info)
            return Unsupported(f"xacc.jit(fullgraph=True): {info}")
        except Exception as e:  # noqa: BLE001 - never surfaces to user code
            COUNTERS["internal_errors"] += 1
            ev.outcome = "error"
            gb = GraphBreak("GB020", f"{type(e).__name__}: {e}")
            gb.where = (code.co_filename, code.co_firstlineno, code.co_name)
            ev.breaks.append(gb.info())
            log("capture", "internal error while capturing %s; it runs in Python:\n%s", code.co_qualname,
                traceback.format_exc())
            C.mark_skip(code)
        finally:
            ev.seconds = time.perf_counter() - t0
            COUNTERS["capture_seconds_us"] += int(ev.seconds * 1e6)
            EVENTS.append(ev)
    return None


def _has_tensors(a: Any, depth: int = 0) -> bool:
    if isinstance(a, (torch.Tensor, torch.nn.Module)):
        return True
    if depth < 2 and isinstance(a, (list, tuple)):
        return any(_has_tensors(e, depth + 1) for e in a[:8])
    if depth < 2 and isinstance(a, dict):
        return any(_has_tensors(e, depth + 1) for e in list(a.values())[:8])
    return False


def _label(code: types.CodeType) -> str:
    n = _label_count.get(code, 0)
    _label_count[code] = n + 1
    return f"{code.co_name}#{n}"


def compile_frame(func: types.FunctionType, args: tuple, opts: Options, ev: CompileEvent) -> None:
    code = func.__code__
    if config.TRANSLATOR == "cpp":
        _compile_frame_cpp(func, args, opts, ev)
        return
    break_at: dict[int, GraphBreak] = {}
    st = dynamic.state(code)
    plan = dynamic.Plan(st, opts.dynamic is True)
    shadow = None
    if opts.dynamic is not False and not st.failed and plan.any_candidates():
        shadow = _shadow_run(func, args, opts, plan)
        if shadow is None and plan.all == "all":
            # Every dim of every argument is too much when arguments meet
            # parameters (x @ w): retry with leading (batch) dims only.
            st.failed = False
            plan = dynamic.Plan(st, True)
            plan.all = "dim0"
            shadow = _shadow_run(func, args, opts, plan)
    try:
        _compile_frame(func, args, opts, ev, break_at, plan, shadow)
    finally:
        plan.commit()


def _compile_frame_cpp(func: types.FunctionType, args: tuple, opts: Options, ev: CompileEvent) -> None:
    """The C++ translator: a whole-frame graph, or the frame runs in Python.
    Dynamic dims follow dynamic.py: a shadow run with doubled sizes first, then
    the real run compared against it; any disagreement compiles static."""
    code = func.__code__
    st = dynamic.state(code)
    plan = dynamic.Plan(st, opts.dynamic is True)
    shadow = None
    if opts.dynamic is not False and not st.failed and plan.any_candidates():
        shadow = _shadow_cpp(func, args, opts, plan)
        if shadow is None and plan.all == "all":
            st.failed = False
            plan = dynamic.Plan(st, True)
            plan.all = "dim0"
            shadow = _shadow_cpp(func, args, opts, plan)
    break_at: dict[int, tuple] = {}
    try:
        for _ in range(8):
            ctx = Ctx(func, code.co_name, _gir_device(opts.device), {}, opts.dynamic, plan, shadow=shadow)
            host = Host(ctx, lambda outs, ctx=ctx: _prefix_graph(ctx, func, outs, ev))
            r = C.translate(func, args, host, ctx.tree, ctx.device, opts.dynamic is not False, break_at)
            if shadow is not None and (r[0] != "graph" or ctx.reads != shadow.reads):
                log("recompiles", "%s: dynamic shapes not used (%s)", code.co_qualname,
                    r[2] if r[0] != "graph" else "metadata read by Python depends on a dynamic size")
                st.failed = True
                shadow = None
                continue
            if r[0] == "break" and not r[7] and r[6] >= 0 and not opts.fullgraph:
                # Restart with the break recorded, so the prefix is traced
                # cleanly up to the instruction and never half-executes it.
                _, bcode, detail, filename, lineno, function, offset, _internal = r
                break_at[offset] = (bcode, detail, filename, lineno, function)
                continue
            break
        else:
            raise RuntimeError("translation did not settle after restarts")
    finally:
        plan.commit()
    kind = r[0]
    if kind == "graph":
        _, tmpl, outs, _steps = r
        if ctx.builder.num_nodes == 0:
            _skip(code, ev, "nothing to capture")
            return
        _install_graph_entry(ctx, func, tmpl, outs, ev)
        return
    if kind == "break":
        _, bcode, detail, filename, lineno, function, _offset, internal = r
        info = _break_info(code, bcode, detail, filename, lineno, function)
        if opts.fullgraph:
            gb = GraphBreak(bcode, detail)
            gb.where = (info.filename, info.lineno, info.function)
            raise gb
        ev.breaks.append(info)
        COUNTERS["breaks"] += 1
        if internal:
            COUNTERS["internal_errors"] += 1
            log("capture", "internal error while capturing %s; it runs in Python: %s", code.co_qualname, detail)
        log("breaks", "%s", info)
        _skip(code, ev, f"{bcode} {detail}")
        return
    if kind == "fallback":
        _, fcode, fdetail, bcode, detail, filename, lineno, function, silent = r
        info = _break_info(code, bcode, detail, filename, lineno, function)
        if not silent:
            ev.breaks.append(info)
            COUNTERS["breaks"] += 1
            log("breaks", "%s", info)
        ev.breaks.append(BreakInfo(fcode, GraphBreak(fcode).reason, GraphBreak(fcode).hint, fdetail,
                                   info.filename, info.lineno, info.function))
        _skip(code, ev, f"{fcode} {fdetail}")
        return
    _, fn, bcode, detail, filename, lineno, function, silent = r
    info = _break_info(code, bcode, detail, filename, lineno, function)
    if not silent:
        if opts.fullgraph:
            gb = GraphBreak(bcode, detail)
            gb.where = (info.filename, info.lineno, info.function)
            raise gb
        ev.breaks.append(info)
        COUNTERS["breaks"] += 1
        log("breaks", "%s", info)
    C.mark_skip(fn.__code__)
    C.add_entry(code, C.code_entry(ctx.tree, tuple(ctx.consts), fn, _label(code)))
    ev.outcome = "code"
    ev.guards = ctx.tree.describe()
    log("bytecode", "break function for %s:\n%s", code.co_qualname, _dis(fn.__code__))


def _break_info(code: types.CodeType, bcode: str, detail: str, filename: str, lineno: int,
                function: str) -> BreakInfo:
    gb = GraphBreak(bcode, detail)
    gb.where = (filename or code.co_filename, lineno or code.co_firstlineno, function or code.co_name)
    return gb.info()


def _prefix_graph(ctx: Ctx, func: types.FunctionType, outs: list[int], ev: CompileEvent) -> Any:
    """The prefix graph of a split frame as the callable its break function calls."""
    if ctx.builder.num_nodes == 0:
        return None
    graph = _finish_graph(ctx, outs)
    COUNTERS["graphs"] += 1
    ev.graph = graph.text()
    ev.op_counts = dict(ctx.rec.op_counts)
    return C.GraphFunction(graph, ctx.tree, ctx.inputs, tuple(ctx.consts), func.__globals__,
                           _builtins_dict(func), func.__closure__)


def _shadow_cpp(func: types.FunctionType, args: tuple, opts: Options, plan: "dynamic.Plan") -> Any:
    """The C++ translator with dynamic dims doubled; None when it cannot be used."""
    code = func.__code__
    ctx = Ctx(func, code.co_name, _gir_device(opts.device), {}, opts.dynamic, plan, shadow_run=True)
    r = C.translate(func, args, Host(ctx), ctx.tree, ctx.device, opts.dynamic is not False)
    if r[0] != "graph":
        log("recompiles", "%s: dynamic shapes not used (%s: %s)", code.co_qualname, r[1], r[2])
        plan.state.failed = True
        return None
    if not plan.symbols:
        return None
    return dynamic.Shadow(ctx.rec.trace, ctx.reads)


def _shadow_run(func: types.FunctionType, args: tuple, opts: Options, plan: "dynamic.Plan") -> Any:
    """Traces the frame with dynamic dims doubled; None when it cannot be used."""
    code = func.__code__
    ctx = Ctx(func, code.co_name, _gir_device(opts.device), {}, opts.dynamic, plan, shadow_run=True)
    top = _top_frame(ctx, func, args)
    ctx.top = top
    try:
        top.run()
    except Exception as e:  # noqa: BLE001 - breaks and failures: compile static
        log("recompiles", "%s: dynamic shapes not used (%s: %s)", code.co_qualname, type(e).__name__, e)
        plan.state.failed = True
        return None
    if not plan.symbols:
        return None
    return dynamic.Shadow(ctx.rec.trace, ctx.reads)


def _compile_frame(func: types.FunctionType, args: tuple, opts: Options, ev: CompileEvent,
                   break_at: dict, plan: "dynamic.Plan", shadow: Any) -> None:
    code = func.__code__
    for _ in range(8):
        ctx = Ctx(func, code.co_name, _gir_device(opts.device), break_at, opts.dynamic, plan, shadow=shadow)
        top = _top_frame(ctx, func, args)
        ctx.top = top
        try:
            ret = top.run()
            if shadow is not None and ctx.reads != shadow.reads:
                raise dynamic.Mismatch("tensor metadata read by Python depends on a dynamic size")
        except dynamic.Mismatch as m:
            log("recompiles", "%s: dynamic shapes not used (%s)", code.co_qualname, m)
            plan.state.failed = True
            shadow = None
            continue
        except GraphBreak as gb:
            if shadow is not None:
                plan.state.failed = True
                shadow = None
                continue
            if gb.where is None:
                gb.where = top.where()
            if getattr(gb, "replayed", False) or top.cur is None:
                if opts.fullgraph:
                    raise
                _install_break(ctx, top, gb, func, opts, ev)
                return
            break_at[top.cur.offset] = gb
            continue
        _install_graph(ctx, top, ret, func, opts, ev)
        return
    raise RuntimeError("translation did not settle after restarts")


def _gir_device(device: str) -> str:
    # The xpu target runs on the host for now (see TensorDatum.h); captured
    # tensors are host tensors either way.
    return "cpu"


def _top_frame(ctx: Ctx, func: types.FunctionType, args: tuple) -> Frame:
    code = func.__code__
    ctx.tree.set_local_names(list(code.co_varnames[:len(args)]))
    locals_: dict[str, T.Var] = {}
    for i, a in enumerate(args):
        locals_[code.co_varnames[i]] = ctx.wrap(a, T.Source("L", i))
    cells: dict[str, T.Cell] = {}
    for i, name in enumerate(code.co_freevars):
        try:
            value = func.__closure__[i].cell_contents
            cells[name] = T.Cell(ctx.wrap(value, T.Source("C", i)))
        except ValueError:
            cells[name] = T.Cell(None)
    return Frame(ctx, code, func.__globals__, locals_, cells, None, lambda n: T.Source("G", 0, n))


# -- whole-frame graphs -------------------------------------------------------------

class _NoTemplate(Exception):
    pass


def _template(ctx: Ctx, v: T.Var, outs: list[int]) -> tuple:
    if isinstance(v, T.TensorVar):
        vid = ctx.rec.vid_of(v.meta)
        if vid not in outs:
            outs.append(vid)
        return ("out", outs.index(vid))
    if isinstance(v, T.SymScalarVar):
        vid = ctx.scalar_vid(v)
        if vid not in outs:
            outs.append(vid)
        return ("out", outs.index(vid))
    if isinstance(v, T.ConstVar) and (v.value is None or isinstance(v.value, (bool, int, float, str, torch.dtype,
                                                                              torch.device, torch.Size))):
        return ("const", v.value)
    if isinstance(v, T.TupleVar) and v.source is None:
        return ("tuple", [_template(ctx, i, outs) for i in v.items])
    if isinstance(v, T.ListVar) and v.source is None:
        return ("list", [_template(ctx, i, outs) for i in v.items])
    if isinstance(v, T.DictVar) and v.source is None:
        return ("dict", list(v.items), [_template(ctx, i, outs) for i in v.items.values()])
    raise _NoTemplate()


def _finish_graph(ctx: Ctx, outs: list[int]) -> Any:
    b = ctx.builder
    b.set_outputs(outs)
    # dce/cse first, then make the graph single-device and tidy its effects
    # (both keep behaviour; see csrc/lib/passes).
    b.run_passes(("dce" if b.has_effects else "dce,cse") + ",erase-device-code,sequence-effects",
                 {"device": ctx.device})
    # The graph is host-typed either way; the target device picks the executor
    # (cpu: ATen; xpuN: the MLIR backend, with ATen for what it does not lower).
    return b.compile(device=current_options().device)


def _install_graph(ctx: Ctx, top: Frame, ret: T.Var, func: types.FunctionType, opts: Options,
                   ev: CompileEvent) -> None:
    code = func.__code__
    outs: list[int] = []
    try:
        tmpl = _template(ctx, ret, outs)
    except _NoTemplate:
        # The return value must be rebuilt by bytecode: treat RETURN_VALUE as a break.
        top.stack.append(ret)
        top.cur = top.instrs[top.ip - 1]
        gb = GraphBreak("GB011", f"returning a {type(ret).__name__}")
        gb.where = top.where()
        gb.silent = True
        _install_break(ctx, top, gb, func, opts, ev)
        return
    if ctx.builder.num_nodes == 0:
        _skip(code, ev, "nothing to capture")
        return
    _install_graph_entry(ctx, func, tmpl, outs, ev)


def _install_graph_entry(ctx: Ctx, func: types.FunctionType, tmpl: tuple, outs: list[int],
                         ev: CompileEvent) -> None:
    code = func.__code__
    graph = _finish_graph(ctx, outs)
    entry = C.graph_entry(ctx.tree, tuple(ctx.consts), graph, ctx.inputs, tmpl, _label(code))
    C.add_entry(code, entry)
    COUNTERS["graphs"] += 1
    ev.outcome = "graph"
    ev.graph = graph.text()
    ev.op_counts = dict(ctx.rec.op_counts)
    ev.guards = ctx.tree.describe()
    log("capture", "captured %s (%s:%d): %d ops, %d guards", code.co_qualname, code.co_filename,
        code.co_firstlineno, graph.num_nodes, ctx.tree.num_leaves)
    log("guards", "%s:\n  %s", code.co_qualname, "\n  ".join(ev.guards))
    log("graphs", "%s", ev.graph)


def _skip(code: types.CodeType, ev: CompileEvent, why: str) -> None:
    C.mark_skip(code)
    COUNTERS["skipped"] += 1
    ev.outcome = "skip"
    log("capture", "skipping %s (%s:%d): %s", code.co_qualname, code.co_filename, code.co_firstlineno, why)


# -- graph breaks --------------------------------------------------------------------

_PUSHES = {"BEFORE_WITH": 2, "STORE_ATTR": 0, "STORE_SUBSCR": 0, "STORE_GLOBAL": 0, "DELETE_ATTR": 0,
           "DELETE_SUBSCR": 0, "POP_TOP": 0, "RAISE_VARARGS": 0, "IMPORT_STAR": 0, "STORE_DEREF": 0,
           "DELETE_GLOBAL": 0, "PRINT_EXPR": 0}
_NOT_BREAKABLE = {"LOAD_METHOD", "FOR_ITER", "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT",
                  "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "SEND", "YIELD_VALUE", "UNPACK_SEQUENCE",
                  "UNPACK_EX", "LIST_APPEND", "SET_ADD", "MAP_ADD", "LOAD_CLOSURE", "MAKE_CELL",
                  "COPY_FREE_VARS", "RETURN_GENERATOR", "PUSH_EXC_INFO", "POP_EXCEPT", "RERAISE",
                  "CHECK_EXC_MATCH", "WITH_EXCEPT_START", "LOAD_FAST", "STORE_FAST", "DELETE_FAST"}
_COND = {"POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_FORWARD_IF_TRUE",
         "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_FORWARD_IF_TRUE",
         "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_FORWARD_IF_FALSE",
         "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_FORWARD_IF_FALSE",
         "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_FORWARD_IF_NONE",
         "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_FORWARD_IF_NONE",
         "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_FORWARD_IF_NOT_NONE",
         "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_FORWARD_IF_NOT_NONE"}


class _Fallback(Exception):
    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail


def _install_break(ctx: Ctx, top: Frame, gb: GraphBreak, func: types.FunctionType, opts: Options,
                   ev: CompileEvent) -> None:
    code = func.__code__
    info = gb.info()
    if not getattr(gb, "silent", False):
        ev.breaks.append(info)
        COUNTERS["breaks"] += 1
        log("breaks", "%s", info)
    try:
        _emit_break(ctx, top, gb, func, ev)
    except _Fallback as fb:
        fbinfo = BreakInfo(fb.code, GraphBreak(fb.code).reason, GraphBreak(fb.code).hint, fb.detail,
                           info.filename, info.lineno, info.function)
        ev.breaks.append(fbinfo)
        _skip(code, ev, f"{fb.code} {fb.detail}")


def _emit_break(ctx: Ctx, top: Frame, gb: GraphBreak, func: types.FunctionType, ev: CompileEvent) -> None:
    code = func.__code__
    orig, shift = codegen.origin(code)
    ins = top.cur
    off = ins.offset
    if code.co_cellvars:
        raise _Fallback("GB017", "frame defines closure cells")
    if off < shift:
        raise _Fallback("GB020", "break inside a resume prologue")
    if codegen.in_try(code, off):
        raise _Fallback("GB014", "break inside a try/with block")
    if any(a <= off <= b for a, b in codegen.loop_ranges(code)):
        raise _Fallback("GB015", f"{gb.code} inside a loop")
    name = ins.opname
    cond = _COND.get(name)
    if name in _NOT_BREAKABLE or (name.startswith(("POP_JUMP", "JUMP")) and cond is None):
        raise _Fallback("GB001", f"cannot split the frame at {name}")
    orig_off = off - shift
    stack = list(top.stack)
    nargs = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)

    # Graph outputs: every computed tensor that is live on the stack or in a local.
    outs: list[int] = []
    seen: set[int] = set()

    def collect(v: T.Var) -> None:
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, T.TensorVar):
            vid = ctx.rec.vid_of(v.meta)
            if not (v.source is not None and vid in ctx.input_vids) and vid not in outs:
                outs.append(vid)
        elif isinstance(v, (T.TupleVar, T.ListVar)):
            for i in v.items:
                collect(i)
        elif isinstance(v, T.DictVar):
            for i in v.items.values():
                collect(i)
        elif isinstance(v, T.IterVar):
            for i in v.items[v.pos:]:
                collect(i)
        elif isinstance(v, T.SymScalarVar):
            if v.source is None and v.vid not in outs:
                outs.append(v.vid)
        elif isinstance(v, T.TensorMethodVar):
            collect(v.tensor)
        elif isinstance(v, T.BoundMethodVar):
            collect(v.self_var)

    for v in stack:
        collect(v)
    for v in top.locals.values():
        collect(v)
    has_graph = ctx.builder.num_nodes > 0
    graph_fn = None
    if has_graph:
        graph = _finish_graph(ctx, outs)
        graph_fn = C.GraphFunction(graph, ctx.tree, ctx.inputs, tuple(ctx.consts), func.__globals__,
                                   _builtins_dict(func), func.__closure__)
        COUNTERS["graphs"] += 1
        ev.graph = graph.text()
        ev.op_counts = dict(ctx.rec.op_counts)
    elif outs:
        raise _Fallback("GB020", "live tensors without a graph")

    em = _Emitter(code, ctx, top.line)
    out_local = em.local("__xacc_out")
    asm = em.asm
    if code.co_freevars:
        asm.op("COPY_FREE_VARS", len(code.co_freevars))
    asm.op("RESUME", 0)
    if graph_fn is not None:
        asm.op("PUSH_NULL")
        asm.op("LOAD_CONST", em.const(graph_fn))
        for i in range(nargs):
            asm.op("LOAD_FAST", i)
        asm.op("PRECALL", nargs)
        asm.op("CALL", nargs)
        asm.op("STORE_FAST", out_local)
    out_index = {vid: k for k, vid in enumerate(outs)}
    # 1. the stack, 2. the locals (all loads before any store), 3. store locals.
    for v in stack:
        em.rebuild(v, out_index, out_local)
    bound = [n for n in code.co_varnames if n in top.locals]
    for n in bound:
        em.rebuild(top.locals[n], out_index, out_local)
    for n in reversed(bound):
        asm.op("STORE_FAST", code.co_varnames.index(n))

    orig_names = orig.co_varnames
    unbound = [i for i, n in enumerate(orig_names) if n not in top.locals]

    def call_resume(target: int, layout: list[bool]) -> None:
        fn = _resume_function(func, orig, target, layout, unbound)
        temps = [em.local(f"__xacc_tmp{i}") for i in range(len(layout))]
        for t in reversed(temps):
            asm.op("STORE_FAST", t)
        asm.op("PUSH_NULL")
        asm.op("LOAD_CONST", em.const(fn))
        for i, n in enumerate(orig_names):
            if i in unbound:
                asm.op("LOAD_CONST", em.const(None))
            else:
                asm.op("LOAD_FAST", code.co_varnames.index(n))
        nvals = 0
        for t, nonnull in zip(temps, layout):
            if nonnull:
                asm.op("LOAD_FAST", t)
                nvals += 1
        asm.op("PRECALL", len(orig_names) + nvals)
        asm.op("CALL", len(orig_names) + nvals)
        asm.op("RETURN_VALUE")

    layout = [not isinstance(v, T.NullVar) for v in stack]
    if name == "RETURN_VALUE":
        asm.op("RETURN_VALUE")
    elif cond is not None:
        rest = layout[:-1]
        asm.op(cond, "taken")
        call_resume(orig_off + 2 * (1 + codegen.CACHES[ins.opcode]), rest)
        asm.label("taken")
        call_resume(ins.argval - shift, rest)
    else:
        start, end = codegen.instruction_group(orig, orig_off)
        raw = orig.co_code[start:end]
        raw = codegen.shift_derefs(raw, len(orig.co_varnames), len(em.varnames) - len(orig.co_varnames))
        effect = 0
        for i in range(0, len(raw), 2):
            op = raw[i]
            if op == codegen.OP["CACHE"] or op == codegen.OP["EXTENDED_ARG"]:
                continue
            effect += dis.stack_effect(op, ins.arg if op == ins.opcode else raw[i + 1] if op >= dis.HAVE_ARGUMENT else None, jump=False) \
                if op >= dis.HAVE_ARGUMENT else dis.stack_effect(op, None)
        pushes = _PUSHES.get(name, 1)
        consumed = pushes - effect
        if consumed > len(stack) or consumed < 0:
            raise _Fallback("GB020", f"stack effect of {name}")
        after = layout[:len(stack) - consumed] + [True] * pushes
        asm.raw(bytes(raw[:]))
        em.depth_hint(len(after))
        call_resume(end, after)
    new_code = em.finish(f"__xacc_break_{code.co_name}", nargs)
    fn = types.FunctionType(new_code, func.__globals__, new_code.co_name, None, func.__closure__)
    C.mark_skip(new_code)
    entry = C.code_entry(ctx.tree, tuple(ctx.consts), fn, _label(code))
    C.add_entry(code, entry)
    ev.outcome = "code"
    ev.guards = ctx.tree.describe()
    log("bytecode", "break function for %s:\n%s", code.co_qualname, _dis(new_code))


def _dis(code: types.CodeType) -> str:
    import io
    s = io.StringIO()
    dis.dis(code, file=s)
    return s.getvalue()


def _builtins_dict(func: types.FunctionType) -> dict:
    b = func.__globals__.get("__builtins__", __builtins__)
    return b if isinstance(b, dict) else b.__dict__


def _resume_function(func: types.FunctionType, orig: types.CodeType, target: int, layout: list[bool],
                     unbound: list[int]) -> types.FunctionType:
    key = (orig, target, tuple(layout), tuple(unbound), id(func.__globals__))
    fn = _RESUME_CACHE.get(key)
    if fn is not None and fn.__closure__ == func.__closure__:
        return fn
    rcode = codegen.make_resume(orig, target, layout, unbound)
    fn = types.FunctionType(rcode, func.__globals__, rcode.co_name, None, func.__closure__)
    _RESUME_CACHE[key] = fn
    log("bytecode", "resume function %s:\n%s", rcode.co_qualname, _dis(rcode))
    return fn


class _Emitter:
    """Builds a break function's tables (consts, names, locals) and bytecode."""

    def __init__(self, code: types.CodeType, ctx: Ctx, line: int) -> None:
        self.code = code
        self.ctx = ctx
        self.consts = list(code.co_consts)
        self.names = list(code.co_names)
        self.varnames = list(code.co_varnames)
        self.asm = codegen.Asm(line, code.co_firstlineno)
        self.max_depth = 8

    def local(self, name: str) -> int:
        if name not in self.varnames:
            self.varnames.append(name)
        return self.varnames.index(name)

    def const(self, obj: Any) -> int:
        for i, c in enumerate(self.consts):
            if c is obj and i >= len(self.code.co_consts):
                return i
        self.consts.append(obj)
        return len(self.consts) - 1

    def name(self, n: str) -> int:
        if n not in self.names:
            self.names.append(n)
        return self.names.index(n)

    def depth_hint(self, d: int) -> None:
        self.max_depth = max(self.max_depth, d + 8)

    def source(self, s: T.Source) -> None:
        a = self.asm
        if s.kind == "L":
            a.op("LOAD_FAST", s.index)
        elif s.kind == "G":
            a.op("LOAD_GLOBAL", self.name(s.key) << 1)
        elif s.kind == "C":
            a.op("LOAD_DEREF", -1 - s.index)  # patched in finish()
        elif s.kind == "K":
            a.op("LOAD_CONST", self.const(self.ctx.consts[s.index]))
        elif s.kind == "A":
            self.source(s.parent)
            a.op("LOAD_ATTR", self.name(s.key))
        else:
            self.source(s.parent)
            a.op("LOAD_CONST", self.const(s.key if s.key is not None else s.index))
            a.op("BINARY_SUBSCR")

    def rebuild(self, v: T.Var, out_index: dict[int, int], out_local: int) -> None:
        a = self.asm
        self.max_depth += 1
        if isinstance(v, T.NullVar):
            a.op("PUSH_NULL")
        elif isinstance(v, T.TensorVar):
            vid = self.ctx.rec.vid_of(v.meta)
            if vid in out_index:
                a.op("LOAD_FAST", out_local)
                a.op("LOAD_CONST", self.const(out_index[vid]))
                a.op("BINARY_SUBSCR")
            elif v.source is not None:
                self.source(v.source)
            else:
                raise _Fallback("GB020", "tensor with no source and no graph output")
        elif isinstance(v, T.SymScalarVar):
            if v.source is not None:
                self.source(v.source)
            elif v.vid in out_index:
                a.op("LOAD_FAST", out_local)
                a.op("LOAD_CONST", self.const(out_index[v.vid]))
                a.op("BINARY_SUBSCR")
            else:
                raise _Fallback("GB020", "number with no source and no graph output")
        elif isinstance(v, T.ConstVar):
            a.op("LOAD_CONST", self.const(v.value))
        elif isinstance(v, (T.ListVar, T.DictVar, T.TupleVar, T.ObjVar, T.SetVar)) and v.source is not None:
            self.source(v.source)
        elif isinstance(v, T.SetVar):
            if isinstance(v.values, frozenset):
                a.op("LOAD_CONST", self.const(v.values))
            else:
                for e in v.values:
                    a.op("LOAD_CONST", self.const(e))
                a.op("BUILD_SET", len(v.values))
                self.depth_hint(len(v.values))
        elif isinstance(v, T.TupleVar):
            for i in v.items:
                self.rebuild(i, out_index, out_local)
            a.op("BUILD_TUPLE", len(v.items))
        elif isinstance(v, T.ListVar):
            for i in v.items:
                self.rebuild(i, out_index, out_local)
            a.op("BUILD_LIST", len(v.items))
        elif isinstance(v, T.DictVar):
            for k, i in v.items.items():
                a.op("LOAD_CONST", self.const(k))
                self.rebuild(i, out_index, out_local)
            a.op("BUILD_MAP", len(v.items))
        elif isinstance(v, T.ObjVar):
            if isinstance(v.obj, tuple) and len(v.obj) == 3 and v.obj[0] == "method":
                self.rebuild(v.obj[1], out_index, out_local)
                a.op("LOAD_ATTR", self.name(v.obj[2]))
            else:
                a.op("LOAD_CONST", self.const(v.obj))
        elif isinstance(v, T.TensorMethodVar):
            self.rebuild(v.tensor, out_index, out_local)
            a.op("LOAD_ATTR", self.name(v.name))
        elif isinstance(v, T.BoundMethodVar):
            a.op("PUSH_NULL")
            a.op("LOAD_CONST", self.const(types.MethodType))
            a.op("LOAD_CONST", self.const(v.func))
            self.rebuild(v.self_var, out_index, out_local)
            a.op("PRECALL", 2)
            a.op("CALL", 2)
        elif isinstance(v, T.IterVar):
            for i in v.items[v.pos:]:
                self.rebuild(i, out_index, out_local)
            a.op("BUILD_TUPLE", len(v.items) - v.pos)
            a.op("GET_ITER")
        else:
            raise _Fallback("GB011", f"cannot rebuild a {type(v).__name__} at a break")

    def finish(self, name: str, nargs: int) -> types.CodeType:
        nvar = len(self.varnames)
        items = []
        for it in self.asm.items:
            if it[0] == "op" and it[1] == codegen.OP["LOAD_DEREF"] and isinstance(it[2], int) and it[2] < 0:
                it = ("op", it[1], nvar + (-1 - it[2]))
            items.append(it)
        self.asm.items = items
        raw, lt = self.asm.assemble()
        c = self.code
        return c.replace(
            co_code=raw, co_consts=tuple(self.consts), co_names=tuple(self.names),
            co_varnames=tuple(self.varnames), co_nlocals=nvar, co_argcount=nargs, co_posonlyargcount=0,
            co_kwonlyargcount=0, co_flags=c.co_flags & ~(0x04 | 0x08), co_stacksize=self.max_depth + c.co_stacksize,
            co_exceptiontable=b"", co_linetable=lt, co_name=name, co_qualname=f"{c.co_qualname}.<break>")
