"""The compile callback of the frame hook: translate one frame with the C++
translator (xacc._C.capture.translate), then install a cache entry on its code
object and record what happened for explain() and the counters.

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

import ast
import dis
import functools
import gc
import linecache
import logging
import os
import resource
import signal
import sys
import sysconfig
import threading
import time
import traceback
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch

from xacc._C import capture as C
from xacc._src.aot import store as aot_store
from xacc._src.capture import dynamic, hotness, polyfill_registry, polyfills_vmap, training
from xacc._src.capture.breaks import BreakInfo, GraphBreak
from xacc._src.capture.events import EVENTS, CompileEvent
from xacc._src.capture.config import RECOMPILE_LIMIT, debug, enabled, log
from xacc._src.capture.device import EraseDevice
from xacc._src.capture.host import Host, State
from xacc._src.capture.views import view_of  # noqa: F401 - the translator reads convert.view_of
from xacc._src.amp import MODE as _MODE, guard_precision


@dataclass
class Options:
    device: str = "cpu"
    backend: str | None = None
    fullgraph: bool = False
    dynamic: bool | None = None
    precision: str = "float32"  # or "auto": see xacc/_src/amp.py
    tolerance: float = 1e-2
    # Precision reports of the graphs compiled under these options (precision="auto").
    reports: list = field(default_factory=list, compare=False, repr=False)
    pgo: Any = None  # xacc._src.pgo.Session, or None (no profile-guided optimization)
    # A frame is translated at its hot_calls-th call (Note [Hot frames], hotness.py):
    # 1 (xacc.jit) translates on the first call; `python -m xjit` uses 2.
    hot_calls: int = 1

    @property
    def mode_key(self) -> str:
        """What cache entries are guarded on (amp._Mode): the device (when not
        cpu), the precision and, for precision="auto", the tolerance."""
        key = "float32" if self.precision == "float32" else f"{self.precision}:{self.tolerance!r}"
        return key if self.device == "cpu" else f"{self.device}/{key}"


# recompiles: compiles of a code object whose cache entries all failed their
# guards, except dynamic_followups: those of a fragment (a resume function or
# loop body) that follow a dynamic-dim decision its group already made, for the
# same size change (Note [Fragment groups] in dynamic.py).
COUNTERS: dict[str, int] = {"frames": 0, "graphs": 0, "breaks": 0, "recompiles": 0, "dynamic_followups": 0,
                            "skipped": 0, "internal_errors": 0, "capture_seconds_us": 0, "pgo_decisions": 0}
_tls = threading.local()
_lock = threading.RLock()
_label_count: "weakref.WeakKeyDictionary[types.CodeType, int]" = weakref.WeakKeyDictionary()


def current_options() -> Options:
    stack = getattr(_tls, "opts", None)
    return stack[-1] if stack else DEFAULT_OPTIONS


DEFAULT_OPTIONS = Options()


def push_options(o: Options) -> None:
    if not hasattr(_tls, "opts"):
        _tls.opts = []
    _tls.opts.append(o)
    _MODE.precision = o.mode_key


def pop_options() -> None:
    _tls.opts.pop()
    _MODE.precision = _tls.opts[-1].mode_key if _tls.opts else "float32"


def _skip_dirs() -> tuple[str, ...]:
    """The standard library, torch and xacc: never translated as frames. Tools
    built on xacc add their own directory (skip_directory): xacc imports no tool."""
    dirs = {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
            os.path.dirname(torch.__file__),
            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))}  # xacc/
    return tuple(sorted(d + os.sep for d in dirs))


def skip_directory(path: str) -> None:
    """Frames of code under `path` run in Python without translation (a tool
    such as xjit registers its own directory when it is imported)."""
    global _SKIP
    d = os.path.abspath(path).rstrip(os.sep) + os.sep
    if d not in _SKIP:
        _SKIP = tuple(sorted((*_SKIP, d)))


def _site_dirs() -> tuple[str, ...]:
    dirs = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    try:
        import site
        dirs.update(site.getsitepackages())
        dirs.add(site.getusersitepackages())
    except (AttributeError, ImportError):
        pass
    return tuple(sorted(d.rstrip(os.sep) + os.sep for d in dirs if d))


# Third-party packages that are infrastructure rather than model code: their
# frames run in Python (as Dynamo's skip list does). Any other installed
# package (transformers, timm, torchvision's models, ...) is translated like
# user code. transformers' utilities (logging, import checks, the output
# dataclasses' pytree registration) are infrastructure too.
_INFRA_PACKAGES = frozenset({
    "torch", "torchgen", "functorch", "xacc", "xjit", "numpy", "scipy", "pandas", "sympy", "mpmath",
    "networkx", "jinja2", "markupsafe", "filelock", "fsspec", "typing_extensions", "packaging", "six",
    "setuptools", "pkg_resources", "_distutils_hack", "pip", "wheel", "importlib_metadata", "zipp",
    "pytest", "_pytest", "pluggy", "iniconfig", "tqdm", "requests", "urllib3", "certifi", "idna",
    "charset_normalizer", "yaml", "regex", "safetensors", "tokenizers", "huggingface_hub", "hf_xet",
    "onnx", "onnxruntime", "onnxscript", "google", "protobuf", "coloredlogs", "humanfriendly",
    "flatbuffers", "triton", "IPython", "ipykernel", "traitlets", "tornado", "zmq", "jupyter_client",
    "rich", "click", "attr", "attrs", "psutil", "pygments", "dill", "cloudpickle", "lit",
})
_INFRA_MODULES = ("transformers/utils/", "transformers/integrations/", "transformers/dynamic_module_utils",
                  "transformers/configuration_utils", "transformers/modeling_utils.py")
_SKIP = _skip_dirs()
_SITE = _site_dirs()
_DATACLASS_METHODS = frozenset({"__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"})
_ALLOW = (os.path.join(os.path.dirname(torch.__file__), "nn", "modules") + os.sep,)


def should_skip(code: types.CodeType) -> bool:
    """Whether a frame runs in Python without translation: module bodies and
    other unoptimized frames, the standard library, torch (except the forward
    of torch.nn.modules classes), xacc, xjit, frozen modules, and third-party
    infrastructure packages. Third-party model code (transformers' models,
    ...) is translated like the user's own."""
    if not (code.co_flags & 0x01) or code.co_name == "<module>":  # not CO_OPTIMIZED
        return True  # the hook marks these itself (Note [Unoptimized frames], EvalFrameImpl.inc)
    fn = code.co_filename
    if fn.startswith(_ALLOW):
        return code.co_name != "forward"  # built-in modules' forward, not Module.__call__
    if fn == "<string>" and code.co_name in _DATACLASS_METHODS:
        # Methods dataclasses generate (exec'd from a string): a ModelOutput's
        # __init__ reached from Python only stores attributes (the translator
        # models ModelOutput itself, TranslateDataclass.cpp).
        return True
    infra = _third_party_infra(fn)  # site-packages lies inside the stdlib directory
    if infra is not None:
        return infra
    return fn.startswith(_SKIP) or fn.startswith("<frozen")


def _third_party_infra(filename: str) -> bool | None:
    """None outside site-packages; else whether the file is infrastructure."""
    for d in _SITE:
        if filename.startswith(d):
            rel = filename[len(d):]
            top = rel.split(os.sep, 1)[0]
            top = top[:-3] if top.endswith(".py") else top
            return top in _INFRA_PACKAGES or top.endswith((".dist-info", ".egg-info")) or \
                rel.replace(os.sep, "/").startswith(_INFRA_MODULES)
    return None


def callback(func: types.FunctionType, args: tuple, failures: list[str]) -> Any:
    """Called by the hook (thread Off) on a cache miss of `func`'s frame.
    Capture reads the arguments' metadata (sizes, dtypes) with tensor
    subclasses' __torch_function__ disabled: a user's override sees the calls
    the program makes, never ours (Note [__torch_function__] in host.py)."""
    with torch._C.DisableTorchFunctionSubclass():
        return _callback(func, args, failures)


def _callback(func: types.FunctionType, args: tuple, failures: list[str]) -> Any:
    code = func.__code__
    resume = C.is_resume(code) or C.is_loop_body(code)
    if not resume and should_skip(code):
        C.mark_skip(code)
        return None
    opts = current_options()
    autocast = C.autocast_state()
    if autocast:
        # Graphs are traced on meta tensors, which autocast never casts: under
        # autocast (entered around the call, or inside the frame before a resume
        # function) the frame runs in Python, guarded on that state.
        tree = C.GuardTree()
        tree.set_autocast(autocast)
        C.add_entry(code, C.default_entry(tree, (), _label(code)))
        log("capture", "%s runs in Python under torch.autocast", code.co_qualname)
        return None
    fn_modes, dispatch_modes = C.mode_state()
    if dispatch_modes or any(t is not EraseDevice for t in fn_modes):
        # A user's TorchFunctionMode or TorchDispatchMode sees every call or op
        # and may change its result; graphs run below both, so the frame runs in
        # Python, guarded on that stack (Note [Mode stacks] in Guards.cpp).
        tree = C.GuardTree()
        tree.set_modes(fn_modes, dispatch_modes)
        C.add_entry(code, C.default_entry(tree, (), _label(code)))
        log("capture", "%s runs in Python under torch function/dispatch modes %s (%d dispatch)",
            code.co_qualname, [t.__qualname__ for t in fn_modes], dispatch_modes)
        return None
    if not resume and opts.hot_calls > 1:
        # Whole-script mode: translate only frames that pay (Note [Hot frames]).
        why = hotness.permanent_reason(code, args, any(_has_tensors(a) for a in args))
        if why is not None:
            hotness.leave_alone(code, why)
            C.mark_skip(code)
            return None
    elif not resume and not any(_has_tensors(a) for a in args):
        # Nothing tensor-valued comes in (script mains, constructors): translating
        # such frames costs time and captures nothing.
        C.mark_skip(code)
        return None
    if not resume and _DEBUGGER_NAMES.intersection(code.co_names):
        # breakpoint(), pdb.set_trace(), sys.settrace(...): the frame must be a
        # real Python frame with its own locals for the debugger or tracer.
        C.mark_skip(code)
        return None
    if aot_store.SOURCES and aot_store.install(func, args):
        return None  # stored entries (xacc.load, xjit --cache) run this call
    calls = 1
    if not resume and opts.hot_calls > 1:
        calls = hotness.note_call(code, opts.hot_calls)
        if calls is None:
            return None  # not hot yet: this call runs as plain Python
    with _lock, _Interrupts():
        COUNTERS["frames"] += 1
        if failures:
            log("recompiles", "recompiling %s (%s:%d): %s", code.co_qualname, code.co_filename,
                code.co_firstlineno, "; ".join(failures))
        t0 = time.perf_counter()
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        ev = CompileEvent(_frame_name(code), code.co_filename, code.co_firstlineno, "error",
                          recompile_reasons=list(failures), code_ref=weakref.ref(code), device=opts.device,
                          entry=len(C.entries(code)), calls=calls)
        debug("capture", "translating %s (%s:%d) with arguments (%s)", ev.function, code.co_filename,
              code.co_firstlineno, _ArgTypes(args))
        if failures:
            debug("recompiles", "%s already has %d cache entries", code.co_qualname, ev.entry)
        debug("bytecode", "original bytecode of %s:\n%s", code.co_qualname, _dis(code))
        try:
            dec = opts.pgo.decisions(code, opts.device) if opts.pgo is not None and not resume else None
            if dec is not None and dec.eager:
                _pgo_eager(func, ev, dec)
            else:
                compile_frame(func, args, opts, ev, dec)
        except GraphBreak as gb:  # fullgraph=True
            from xacc.errors import Unsupported
            ev.outcome = "error"
            info = gb.info()
            ev.breaks.append(info)
            if gb.code == "GB019" or _in_raise_statement(*info.stack[0][:2]):
                # The traced path reaches a raise statement (the break is the raise
                # or is inside it: building the exception), so the call raises: the
                # user's exception, as eager does, by running in Python (this call
                # only; nothing is installed).
                return None
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
            if failures:
                # A follow-up's entries failed on tensor sizes only (the first failing guard of each).
                followup = ev.followup and all(": tensor(" in f for f in failures)
                COUNTERS["dynamic_followups" if followup else "recompiles"] += 1
                ev.followup = followup
            ev.seconds = time.perf_counter() - t0
            ev.peak_rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            ev.rss_growth_kib = ev.peak_rss_kib - rss0  # what this compile raised the peak by
            COUNTERS["capture_seconds_us"] += int(ev.seconds * 1e6)
            EVENTS.append(ev)
    return None


@functools.lru_cache(maxsize=32)
def _raise_spans(filename: str) -> tuple:
    """(first line, last line) of every raise statement in the file."""
    try:
        tree = ast.parse("".join(linecache.getlines(filename)), filename)
    except (SyntaxError, ValueError):
        return ()
    return tuple((n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, ast.Raise))


def _in_raise_statement(filename: str, lineno: int) -> bool:
    return any(a <= lineno <= b for a, b in _raise_spans(filename))


# Names whose use makes a frame run as plain Python (see callback).
_DEBUGGER_NAMES = frozenset({"breakpoint", "set_trace", "settrace", "setprofile", "post_mortem"})


class _Interrupts:
    """Ctrl-C while a frame is captured or compiled is the user's: it must raise
    KeyboardInterrupt from the call, as eager code would, and never be taken for
    a translation failure (every Exception the translator meets becomes a
    fallback to Python, and C++ drops errors of the Python calls it makes). So
    while the callback runs on the main thread, SIGINT is noted (and raised at
    once, to stop the translation); at the end the handler the program had is
    restored and called with the signal, which raises KeyboardInterrupt out of
    the call (the hook passes it on, EvalFrameImpl.inc).

    Note [Noted interrupts stop every stage]: the KeyboardInterrupt raised at
    once does not always stop the work. Raised in a gc callback, a weakref
    callback or a __del__ that runs during the capture, Python reports it as
    ignored and goes on; raised in a Python call the C++ translator makes, it
    becomes a failed call. The translation (or the compile) would then go on
    to its end, install what it made, and only then raise: seconds to minutes
    later, with a cache entry the interrupted capture should never have left
    (and on xpu0 a compile that can itself fail). So the stages check the note
    (`check_interrupt`): after each translation and before passes and the
    backend compile; a noted signal raises there, and nothing is installed."""

    __slots__ = ("prev", "frame")
    active: "_Interrupts | None" = None  # the main thread's, while its callback runs

    def __enter__(self) -> None:
        self.prev = self.frame = None
        if threading.current_thread() is threading.main_thread():
            prev = signal.getsignal(signal.SIGINT)
            if callable(prev):  # a Python-level handler: default_int_handler or the program's
                self.prev = prev
                signal.signal(signal.SIGINT, self._note)
                _Interrupts.active = self

    def _note(self, signum: int, frame: Any) -> None:
        self.frame = frame
        raise KeyboardInterrupt

    def __exit__(self, et: Any, e: Any, tb: Any) -> bool:
        if self.prev is None:
            return False
        _Interrupts.active = None
        signal.signal(signal.SIGINT, self.prev)
        if self.frame is None:
            return False
        self.prev(signal.SIGINT, self.frame)  # default_int_handler raises KeyboardInterrupt
        return et is KeyboardInterrupt  # the program's handler returned: so does the callback


def check_interrupt() -> None:
    """Raises KeyboardInterrupt when a SIGINT was noted during this capture
    (Note [Noted interrupts stop every stage])."""
    active = _Interrupts.active
    if active is not None and active.frame is not None:
        raise KeyboardInterrupt


# The arguments are classified by type(a), never isinstance(a, ...): isinstance
# reads `a.__class__` when the type does not match, which runs a Python
# __getattribute__ (or a `__class__` property) plain Python never ran here
# (Note [Guard reads of the type] in csrc/lib/capture/Guards.cpp).


class _ArgTypes:
    """The arguments as `+capture` lists them, described only when that line is
    written (a class's `__name__` may run its metaclass's __getattribute__)."""

    def __init__(self, args: tuple) -> None:
        self.args = args

    def __str__(self) -> str:
        return ", ".join(_describe_arg(a) for a in self.args)


def _describe_arg(a: Any) -> str:
    if issubclass(type(a), torch.Tensor):
        return f"Tensor[{str(a.dtype).removeprefix('torch.')}, {list(a.shape)}]"
    return type(a).__name__


def _has_tensors(a: Any, depth: int = 0) -> bool:
    t = type(a)
    if issubclass(t, (torch.Tensor, torch.nn.Module)):
        return True
    if t.__module__ == "numpy" and t.__name__ == "ndarray":  # NumPy capture
        return True
    if depth < 2 and issubclass(t, (list, tuple)):
        return any(_has_tensors(e, depth + 1) for e in a[:8])
    if depth < 2 and issubclass(t, dict):
        return any(_has_tensors(e, depth + 1) for e in list(a.values())[:8])
    return False


def _label(code: types.CodeType) -> str:
    n = _label_count.get(code, 0)
    _label_count[code] = n + 1
    return f"{code.co_name}#{n}"


def _pgo_eager(func: types.FunctionType, ev: CompileEvent, dec: Any) -> None:
    """A profile said this frame is cold and tiny: it runs in plain Python with
    capture off inside it (so its callees are not compiled either), through a
    cache entry without guards. Frames with *args, keyword-only arguments or
    closures (whose slots a plain call cannot pass on) are only marked skip."""
    code = func.__code__
    if code.co_flags & 0x0C or code.co_kwonlyargcount or code.co_freevars:
        C.mark_skip(code)
    else:
        set_state = C.set_state
        # Weakly: the entry lives in the code object's co_extra, which the
        # collector cannot traverse, so holding `func` (and through it its
        # globals) there would keep both alive forever. The frame this entry
        # runs for holds `func` while it runs.
        func_ref = weakref.ref(func)

        def eager(*args: Any) -> Any:
            prev = set_state(0)
            try:
                return func_ref()(*args)  # type: ignore[misc]
            finally:
                set_state(prev)

        C.add_entry(code, C.code_entry(C.GuardTree(), (), eager, _label(code)))
    COUNTERS["skipped"] += 1
    COUNTERS["pgo_decisions"] += 1
    ev.outcome = "skip"
    ev.pgo.extend(n for n in dec.notes if "eagerly" in n)
    log("capture", "%s (%s:%d): %s", code.co_qualname, code.co_filename, code.co_firstlineno, ev.pgo[-1])


def _pgo_apply_shapes(code: types.CodeType, st: "dynamic.State", dec: Any, ev: CompileEvent) -> None:
    """First compile of a frame under a profile: its dynamic dims (or a static compile)."""
    if dec is None or st.seen or st.dyn or st.failed:
        return
    if dec.static:
        st.failed = True
    for name, dims in dec.dynamic.items():
        st.dyn.setdefault(name, set()).update(dims)
    notes = [n for n in dec.notes if " dim " in n]
    if notes:
        ev.pgo.extend(notes)
        COUNTERS["pgo_decisions"] += 1
        for n in notes:
            log("recompiles", "%s: %s", code.co_qualname, n)


def compile_frame(func: types.FunctionType, args: tuple, opts: Options, ev: CompileEvent,
                  dec: Any = None) -> None:
    """Translates `func`'s frame and installs the outcome. Dynamic dims follow
    dynamic.py: a shadow run with doubled sizes first, then the real run
    compared against it; any disagreement compiles static."""
    code = func.__code__
    t_start = time.perf_counter()
    # Note [Translation without cyclic GC]: the automatic cyclic collector is off
    # while a frame is translated (gc.collect() still works) and back on after,
    # if it was on. A translation allocates many short-lived containers; a
    # collection in the middle promotes those alive at that moment, and the
    # promotions count towards the next full collection, which scans every
    # object of the process (~170k after import torch: 85 ms of CPU). Measured
    # on examples/tiny_gpt.py under xjit (OMP_NUM_THREADS=1): 3 full collections
    # with the collector on, 2 (as plain python) with it off; total CPU 0.88 ->
    # 0.80 s. The collector's schedule is not part of Python's semantics; the
    # program's own code does not run during a translation (the hook is Off).
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        _compile_frame(func, args, opts, ev, dec)
    finally:
        if gc_was_on:
            gc.enable()
        # Tracing is what remains of the compile time after the later stages.
        later = sum(v for k, v in ev.stage_seconds.items() if k != "trace")
        ev.stage_seconds["trace"] = max(0.0, time.perf_counter() - t_start - later)


def _compile_frame(func: types.FunctionType, args: tuple, opts: Options, ev: CompileEvent,
                   dec: Any = None) -> None:
    code = func.__code__
    st = dynamic.state(code, args)
    _pgo_apply_shapes(code, st, dec, ev)
    plan = dynamic.Plan(st, opts.dynamic is True)
    use_dyn = opts.dynamic is not False and not st.failed and plan.any_candidates()
    shadow = None
    break_at: dict[int, tuple] = {}
    try:
        for _ in range(12):
            if use_dyn:
                # The shadow run stops at the same recorded breaks as the real run.
                plan, shadow = _shadow_plan(func, args, opts, st, plan, break_at)
                use_dyn = shadow is not None
                if shadow is None and plan.inherited and not plan.all:
                    plan, use_dyn = _without_inherited(code, st, opts, "the shadow run failed")
                    continue
            ctx = State(code.co_name, _gir_device(opts.device), opts.dynamic, plan, shadow=shadow)
            ctx.frame = (func, args)  # the call being compiled: amp measures on its inputs
            host = Host(ctx, lambda outs, ctx=ctx: _prefix_graph(ctx, func, outs, ev))
            r = _translate(func, args, host, ctx, opts, break_at)
            check_interrupt()
            if shadow is not None and (ctx.rec.mismatch or r[0] != shadow.kind or ctx.reads != shadow.reads or (
                    r[0] == "break" and r[6] != shadow.offset)):
                why = (f"{ctx.rec.mismatch} differs in the run with other sizes" if ctx.rec.mismatch
                       else "metadata read by Python depends on a dynamic size" if r[0] == shadow.kind
                       else f"{r[1]}: {r[2]} at {r[3]}:{r[4]}" if r[0] == "break"
                       else f"{r[2]}: {r[3]} at {r[4]}:{r[5]}" if r[0] == "code"
                       else "the run with other sizes took another path")
                if plan.inherited and not plan.all:
                    plan, use_dyn = _without_inherited(code, st, opts, why)
                    shadow = None
                    break_at.clear()
                    continue
                if plan.all in ("all", "lead"):
                    # dynamic=True: try again with fewer dynamic dims (see _shadow_plan).
                    log("recompiles", "%s: dynamic dims (%s) not used (%s)", code.co_qualname, plan.all, why)
                    fewer = "lead" if plan.all == "all" else "dim0"
                    plan = dynamic.Plan(st, True)
                    plan.all = fewer
                    break_at.clear()
                    continue
                log("recompiles", "%s: dynamic shapes not used (%s)", code.co_qualname, why)
                ev.dynamic.append(f"dynamic shapes not used: {why}")
                st.failed = True
                shadow = None
                use_dyn = False
                break_at.clear()
                continue
            if r[0] == "break" and not r[7] and r[6] >= 0 and not opts.fullgraph:
                # Restart with the break recorded, so the prefix is traced
                # cleanly up to the instruction and never half-executes it.
                _, bcode, detail, filename, lineno, function, offset, _internal = r
                break_at[offset] = (bcode, detail, filename, lineno, function)
                continue
            if shadow is not None:
                ev.dynamic.append("dynamic dims: " + ", ".join(
                    f"{ident}[{d}]={plan.symbols.get(plan.seen[ident][d], '?')}"
                    for ident, dims in plan.dims.items() for d in sorted(dims)
                    if ident in plan.seen and plan.seen[ident][d] in plan.symbols))
            break
        else:
            raise RuntimeError("translation did not settle after restarts")
        ev.followup = plan.followup(shadow is not None)
    finally:
        plan.commit(shadow is not None)
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
    if silent and ctx.builder.num_nodes == 0:
        # Split at RETURN_VALUE (a value rebuilt by bytecode, attribute writes)
        # with no graph before it: the break function would only redo what the
        # frame's own code does.
        _skip(code, ev, "nothing to capture")
        return
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
    label = _label(code)
    # The entry keeps the break function's code only: the hook makes the
    # function per call with the frame's globals (Note [Generated code holds no
    # globals] in translate/CodegenImpl.h).
    C.add_entry(code, C.code_entry(ctx.tree, tuple(ctx.consts), fn.__code__, label))
    if aot_store.SINKS:  # xacc.aot, xjit --cache
        aot_store.note_code_entry(code, ctx.tree, ctx.consts, fn, label, opts.device)
    ev.rewritten = fn.__code__
    made = [c for c in fn.__code__.co_consts if isinstance(c, types.CodeType)]  # resume and loop-body code
    ev.resumes = [c for c in made if C.is_resume(c)]
    dynamic.register_fragments(code, [c for c in made if C.is_resume(c) or C.is_loop_body(c)])
    for c in made:
        if C.loop_body_runs_as_python(c):  # Note [Loops left to Python] in translate/CodegenLoops.cpp
            C.mark_skip(c)
    ev.outcome = "code"
    ev.guards = ctx.tree.describe()
    log("bytecode", "break function for %s:\n%s", code.co_qualname, _dis(fn.__code__))


def _break_info(code: types.CodeType, bcode: str, detail: str, filename: str, lineno: int,
                function: str) -> BreakInfo:
    gb = GraphBreak(bcode, detail)
    gb.where = (filename or code.co_filename, lineno or code.co_firstlineno, function or code.co_name)
    # User stack: the break's location, then (when the break is in an inlined
    # function) the captured frame, at its first line: the translator reports no
    # call-site lines for inlined frames.
    gb.stack = [gb.where]
    if gb.where[2] != code.co_name:
        gb.stack.append((code.co_filename, code.co_firstlineno, code.co_name))
    return gb.info()


def _prefix_graph(ctx: State, func: types.FunctionType, outs: list[int], ev: CompileEvent) -> Any:
    """The prefix graph of a split frame as the callable its break function calls."""
    if ctx.builder.num_nodes == 0:
        return None
    graph = _finish_graph(ctx, outs, ev)
    COUNTERS["graphs"] += 1
    ev.graph = ctx.captured_text or graph.text()
    ev.op_counts = dict(ctx.rec.op_counts)
    return C.GraphFunction(graph, ctx.tree, ctx.inputs, tuple(ctx.consts), ctx.runner)


_SHADOW_GRAPH = object()


def _shadow_plan(func: types.FunctionType, args: tuple, opts: Options, st: "dynamic.State",
                 plan: "dynamic.Plan", break_at: dict) -> tuple:
    """The shadow run for `plan` (with dynamic=True, falling back to all dims
    but the last, then leading dims): (plan, Shadow), or (plan, None)."""
    shadow = _shadow_cpp(func, args, opts, plan, break_at)
    for fallback in ("lead", "dim0"):
        if shadow is not None or plan.all not in ("all", "lead"):
            break
        st.failed = False
        plan = dynamic.Plan(st, True)
        plan.all = fallback
        shadow = _shadow_cpp(func, args, opts, plan, break_at)
    return plan, shadow


def _without_inherited(code: types.CodeType, st: "dynamic.State", opts: Options, why: str) -> tuple:
    """A new plan with the fragment's own history only: the group's candidates
    were rejected (Note [Fragment groups] in dynamic.py)."""
    log("recompiles", "%s: dims inherited from the group not used (%s)", code.co_qualname, why)
    plan = dynamic.Plan(st, opts.dynamic is True, inherit=False)
    return plan, opts.dynamic is not False and not st.failed and plan.any_candidates()


def _translate(func: types.FunctionType, args: tuple, host: Host, ctx: State, opts: Options, break_at: dict) -> Any:
    """One run of the C++ translator; the vmap levels it leaves open (a break
    inside a vmapped function) are closed (Note [Batched metas] in polyfills_vmap.py)."""
    depth = polyfills_vmap.functorch_depth()
    polyfill_registry.register_imported()  # Note [References of modules imported later]
    try:
        return C.translate(func, args, host, ctx.tree, ctx.device, opts.dynamic is not False, break_at)
    finally:
        polyfills_vmap.restore_functorch_depth(depth)


def _shadow_cpp(func: types.FunctionType, args: tuple, opts: Options, plan: "dynamic.Plan",
                break_at: dict) -> Any:
    """The C++ translator with dynamic dims scaled (dynamic.py); None when it cannot be used."""
    code = func.__code__
    plan.symbols.clear()
    ctx = State(code.co_name, _gir_device(opts.device), opts.dynamic, plan, shadow_run=True)
    # A split frame's break function is emitted and dropped: any object stands for its graph.
    host = Host(ctx, lambda outs: _SHADOW_GRAPH)
    r = _translate(func, args, host, ctx, opts, break_at)
    check_interrupt()
    if r[0] not in ("graph", "code", "break") or (r[0] == "break" and (r[7] or r[6] < 0)):
        log("recompiles", "%s: dynamic shapes not used (%s)", code.co_qualname, r[1:3])
        if not plan.inherited:  # else retried without the group's candidates
            plan.state.failed = True
        return None
    if not plan.symbols:
        return None
    return dynamic.Shadow(ctx.rec.trace, ctx.reads, r[0], r[6] if r[0] == "break" else -1, ctx.rec.known.trace)


def _gir_device(device: str) -> str:
    # The xpu target runs on the host for now (see TensorDatum.h); captured
    # tensors are host tensors either way.
    return "cpu"


def _finish_graph(ctx: State, outs: list[int], ev: CompileEvent) -> Any:
    check_interrupt()
    b = ctx.builder
    b.set_outputs(outs)
    guard_precision(ctx)
    if enabled("graphs", logging.DEBUG):
        debug("graphs", "%s before passes:\n%s", ev.function, b.text())
    # dce/cse first, then make the graph single-device and tidy its effects
    # (both keep behaviour; see csrc/lib/passes).
    pipeline = ("dce" if b.has_effects else "dce,cse") + ",erase-device-code,sequence-effects"
    before = b.num_nodes
    debug("passes", "%s: options device=%s", ev.function, ctx.device)
    t0 = time.perf_counter()
    b.run_passes(pipeline, {"device": ctx.device})
    t1 = time.perf_counter()
    check_interrupt()  # before the backend compile
    log("passes", "%s: %s: %d -> %d nodes (%.2f ms)", ev.function, pipeline, before, b.num_nodes, (t1 - t0) * 1e3)
    # The graph is host-typed either way; the target device picks the executor
    # (cpu: ATen; xpuN: the MLIR backend, with ATen for what it does not lower).
    opts = current_options()
    device = opts.device
    options, regions = _pgo_device_options(opts, ev)
    ctx.runner = None
    ctx.captured_text = None
    built = None
    if opts.precision != "auto" and torch.is_grad_enabled() and not aot_store.SINKS:
        # Inputs that require grad: a compiled forward and backward (training.py).
        # Not while recording AOT artifacts: they store the captured graph, which
        # replays with eager autograd when loaded.
        built = training.build(b.module(), _frame_inputs(ctx), device, ev.function, b.has_effects)
    if built is not None:
        ctx.runner, graph, ev.graph_results = built
        ctx.captured_text = b.text()  # what explain and the logs show (not the split forward)
        regions = {}
    elif opts.precision == "auto":
        graph = _compile_mixed(ctx, ev, opts)
    else:
        graph = b.compile(device=device, options=options)
    t2 = time.perf_counter()
    if regions:  # the regions of this graph the profile left to ATen (the executable's plan names them)
        plan = graph.describe()
        applied = [note for key, note in regions.items() if f"left to ATen: {key}" in plan]
        ev.pgo.extend(applied)
        COUNTERS["pgo_decisions"] += bool(applied)
    ev.stage_seconds["passes"] = t1 - t0
    ev.stage_seconds["prepare"] = t2 - t1
    ev.graph_id = graph.id
    ev.graph_inputs = [ctx.tree.path(n) for n in ctx.inputs]
    if opts.pgo is not None:
        opts.pgo.note_graph(ev, graph)
    log("backend", "%s: prepared for %s: %d nodes, %d inputs (%.2f ms)", ev.function,
        "the ATen executor" if device == "cpu" else device, graph.num_nodes, graph.num_inputs, (t2 - t1) * 1e3)
    return graph


def _frame_inputs(ctx: State) -> list | None:
    """The values the graph's inputs have in the call being compiled (None when
    they cannot be read)."""
    frame = getattr(ctx, "frame", None)
    if frame is None:
        return None
    func, args = frame
    return C.resolve(ctx.tree, tuple(args), func.__globals__, _builtins_dict(func), func.__closure__,
                     tuple(ctx.consts), list(ctx.inputs))


def _compile_mixed(ctx: State, ev: CompileEvent, opts: Options) -> Any:
    """The graph with bfloat16 regions checked on this call's inputs (amp.py)."""
    from xacc._src import amp
    b = ctx.builder
    inputs = None
    frame = getattr(ctx, "frame", None)
    if frame is not None:
        func, args = frame
        inputs = C.resolve(ctx.tree, tuple(args), func.__globals__, _builtins_dict(func), func.__closure__,
                           tuple(ctx.consts), list(ctx.inputs))
    graph, report = amp.compile_graph(b, opts.device, opts.tolerance, inputs, ev.function,
                                      b.has_effects)
    ev.precision = report
    opts.reports.append(report)
    log("amp", "%s", report)
    return graph


def _pgo_device_options(opts: Options, ev: CompileEvent) -> tuple[dict, dict]:
    """Options for CompiledGraph (profile=1 when recording; the regions to leave
    to ATen) and those regions' explain notes."""
    if opts.pgo is None or opts.device == "cpu" or ev.code is None:
        return {}, {}
    options = dict(opts.pgo.device_options())
    dec = opts.pgo.decisions(ev.code, opts.device)
    regions = dict(dec.aten_regions) if dec is not None else {}
    if regions:
        options["aten_regions"] = "\n".join(regions)
    return options, regions


def _install_graph_entry(ctx: State, func: types.FunctionType, tmpl: tuple, outs: list[int],
                         ev: CompileEvent) -> None:
    code = func.__code__
    graph = _finish_graph(ctx, outs, ev)
    label = _label(code)
    entry = C.graph_entry(ctx.tree, tuple(ctx.consts), graph, ctx.inputs, tmpl, label, ctx.runner)
    C.add_entry(code, entry)
    if aot_store.SINKS and ctx.runner is None:  # xacc.aot, xjit --cache (not training entries)
        aot_store.note_graph_entry(code, ctx.tree, ctx.consts, graph, ctx.inputs, tmpl, label,
                                   current_options().device)
    COUNTERS["graphs"] += 1
    ev.outcome = "graph"
    ev.graph = ctx.captured_text or graph.text()
    ev.op_counts = dict(ctx.rec.op_counts)
    ev.guards = ctx.tree.describe()
    log("capture", "captured %s (%s:%d): %d ops, %d guards", code.co_qualname, code.co_filename,
        code.co_firstlineno, graph.num_nodes, ctx.tree.num_leaves)
    log("guards", "%s:\n  %s", code.co_qualname, "\n  ".join(ev.guards))
    debug("guards", "%s: %d guards on %d sources", code.co_qualname, ctx.tree.num_leaves, ctx.tree.num_nodes)
    log("graphs", "%s", ev.graph)


def _skip(code: types.CodeType, ev: CompileEvent, why: str) -> None:
    C.mark_skip(code)
    if aot_store.SINKS:
        aot_store.note_skip(code, why, ev.device)
    COUNTERS["skipped"] += 1
    ev.outcome = "skip"
    log("capture", "skipping %s (%s:%d): %s", code.co_qualname, code.co_filename, code.co_firstlineno, why)


class _dis:
    """`dis` of a code object for a log line, made only when the line is written
    (a resume function holds the whole original code: disassembling it on every
    compile made capture time quadratic in the number of breaks)."""

    __slots__ = ("code",)

    def __init__(self, code: types.CodeType) -> None:
        self.code = code

    def __str__(self) -> str:
        import io
        s = io.StringIO()
        dis.dis(self.code, file=s)
        return s.getvalue()


def _frame_name(code: types.CodeType) -> str:
    """How explain and the logs name a frame. Resume and loop-body functions
    carry the user's names (so tracebacks show the user's function); they are
    told apart here by where they continue."""
    if C.is_resume(code):
        line = C.resume_line(code)
        return f"{code.co_qualname} (resumed at line {line})" if line else f"{code.co_qualname} (resumed)"
    if C.is_loop_body(code):
        line = next((ln for _, _, ln in code.co_lines() if ln), 0)
        return f"{code.co_qualname} (loop body at line {line})"
    return code.co_qualname


def _builtins_dict(func: types.FunctionType) -> dict:
    b = func.__globals__.get("__builtins__", __builtins__)
    return b if isinstance(b, dict) else b.__dict__
