"""`python -m xjit`: see xjit/__init__.py."""

from __future__ import annotations

import argparse
import atexit
import builtins
import os
import resource
import signal
import sys
import time
import types
from collections import Counter


def _summary(t0: float, explain: bool, label: str = "") -> str:
    from xacc._src.capture import convert, device_dist
    from xacc.jit import counters

    c = counters()
    breaks = Counter()
    for ev in convert.EVENTS:
        for b in ev.breaks:
            breaks[f"{b.code} {b.reason}"] += 1
    dropped = convert.EVENTS.dropped  # records of long-dead functions, only counted (events.py)
    breaks.update({k.removeprefix("break "): n for k, n in dropped.items() if k.startswith("break ")})
    captured = sum(1 for ev in convert.EVENTS if ev.outcome in ("graph", "code")) + dropped["captured"]
    lines = ["", f"== xjit summary{label} ==",
             f"frames captured: {captured} (compiled {c['frames']}, skipped {c['skipped']})",
             *_code_lines(),
             f"graphs: {c['graphs']}",
             f"graph breaks: {sum(breaks.values())}"]
    for reason, n in breaks.most_common():
        lines.append(f"  {n:4d}  {reason}")
    lines += [f"recompiles: {c['recompiles']}",
              f"cache hits: {c['hook_hits']}  misses: {c['hook_misses']}",
              f"capture time: {c['capture_seconds_us'] / 1e3:.1f} ms",
              f"internal errors (fell back to Python): {c['internal_errors']}",
              f"peak memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB",
              *_cache_lines(),
              *device_dist.summary_lines(),
              *([f"DDP bucket split: {c['ddp_split_graphs']} training graph(s) in {c['ddp_split_pieces']} pieces"]
                if c["ddp_split_graphs"] else []),
              f"wall time: {time.perf_counter() - t0:.2f} s"]
    return "\n".join(lines)


def _code_lines() -> list[str]:
    """Model code (frames translated because they ran hot) against set-up code
    (frames left alone as plain Python; Note [Hot frames])."""
    from xacc._src.capture import convert, hotness

    frames = {(ev.function, ev.filename, ev.lineno) for ev in convert.EVENTS}
    seconds = sum(ev.seconds for ev in convert.EVENTS)
    cold = Counter(c.reason for c in hotness.LEFT_ALONE.values())
    lines = [f"model code: {len(frames)} frame(s) translated ({seconds * 1e3:.1f} ms capturing)",
             f"set-up code: {sum(cold.values())} frame(s) left alone as plain Python"]
    lines += [f"  {n:4d}  {why}" for why, n in cold.most_common()]
    return lines


def _cache_lines() -> list[str]:
    from xacc._src.aot import store

    if not store.SOURCES:
        return []
    s = store.STATS
    lines = [f"stored entries: {s['entries_installed']} installed for {s['frames_installed']} frames, "
             f"{s['guard_mismatches']} guard mismatches, {s['entries_recorded']} recorded "
             f"({s['install_seconds_us'] / 1e3:.1f} ms installing)"]
    mlir = sys.modules.get("xacc._C_xpu")  # loaded when the run used an xpu device
    if mlir is not None:
        k = mlir.kernel_totals()
        lines.append(f"kernels: {k['compiled']} compiled, {k['disk_hits']} loaded from the disk cache "
                     f"({k['compile_seconds'] * 1e3:.1f} ms)")
    return lines


def _at_exit(t0: float, ns: argparse.Namespace, rec: object) -> None:
    print(_report(t0, ns, rec), file=sys.stderr)


# (t0, ns, recorder) of a worker started by xjit/child.py: its summary is written at its exit.
_WORKER: tuple | None = None


def _worker_report() -> str | None:
    """A worker's report; None for a helper process that has no rank and ran no
    model code (multiprocessing's resource tracker, a forkserver): nothing to say."""
    from xjit import child
    from xacc.jit import counters

    if child.rank() is None and not counters()["frames"]:
        return None
    return _report(*_WORKER)


def _forked_worker(ns: argparse.Namespace) -> None:
    """In a multiprocessing worker forked from the program's interpreter
    (child.watch_forks): a worker's summary from here on, counting its own work
    (the counters and compile records start empty; inherited graphs stay)."""
    global _WORKER
    from xacc._C import capture as C
    from xacc._src.capture import convert
    w = argparse.Namespace(**vars(ns))
    w.child = True
    _WORKER = (time.perf_counter(), w, ns.rec)
    C.reset_stats()
    convert.EVENTS.clear()
    for k in convert.COUNTERS:
        convert.COUNTERS[k] = 0
    convert.training.reset()


def _report(t0: float, ns: argparse.Namespace, rec: object) -> str:
    """The summary (and the --explain/--compare/--export parts) of this
    interpreter's run; a worker's is labelled with its rank (Note [xjit in child
    interpreters])."""
    from xacc._src.capture import convert

    label = ""
    if getattr(ns, "child", False):
        from xjit import child
        r = child.rank()
        label = f" (rank {r}, pid {os.getpid()})" if r is not None else f" (worker pid {os.getpid()})"
        if ns.export:
            ns.export = os.path.join(ns.export, f"rank{r}" if r is not None else f"pid{os.getpid()}")
    out = [_summary(t0, ns.explain, label)]
    events = list(convert.EVENTS)
    if ns.explain:
        from xacc._src.debug.explain_report import explain_report
        from xacc._src.capture import hotness
        out.append(explain_report(events, run_seconds=rec.run_seconds, graph_calls=sum(rec.counts.values()),
                                  wall_seconds=time.perf_counter() - t0,
                                  left_alone=list(hotness.LEFT_ALONE.values())))
    if ns.compare:
        from xacc._src.debug.compare import graph_comparisons
        from xacc._src.debug.executors import executor_for
        ex = executor_for(ns.device)
        comps = graph_comparisons(events, rec, ex, ns.atol, ns.rtol)
        comps.sort(key=lambda g: -g.worst)
        out += ["", f"== xjit compare: {len(comps)} graph(s), reference interpreter vs {ex.name} =="]
        bad = [g for g in comps if not g.ok]
        out.append(f"diverging graphs: {len(bad)}")
        for g in comps[:10]:
            worst = max(g.diffs, key=lambda d: d.max_abs, default=None)
            out.append(f"  {g.label}: {'ok' if g.ok else 'DIVERGES'}"
                       + (f"; worst {worst}" if worst else "") + (f"; error {g.error}" if g.error else ""))
            if g.first_divergent is not None:
                out.append(f"    first divergent {g.first_divergent}")
    if ns.pgo_session is not None:
        out.append(_pgo_summary(ns.pgo_session, events))
    if ns.export:
        from xacc._src.export.writer import write_export
        m = write_export(events, ns.export, rec, title=f"xjit export of {ns.script or ns.module or 'a worker'}",
                         run_seconds=time.perf_counter() - t0)
        out.append(f"export: {len(m['frames'])} frame(s), {m['graph_count']} graph(s) -> "
                   f"{os.path.join(ns.export, 'index.html')}")
    return "\n".join(out)


def _pgo_summary(sess: object, events: list) -> str:
    if sess.mode == "record":
        sess.write()
        frames = sess.frames()
        return (f"pgo: recorded {sum(len(f['graphs']) for f in frames.values())} graph(s) of {len(frames)} frame(s), "
                f"{sum(f['calls'] for f in frames.values())} call(s) -> {sess.path}")
    if sess.error:
        return f"pgo: profile not used: {sess.error}"
    notes = [n for ev in events for n in ev.pgo]
    return "\n".join([f"pgo: compiled with the profile {sess.path}: {len(notes)} decision(s)"]
                     + [f"  {ev.function}: {n}" for ev in events for n in ev.pgo])


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m xjit", description=__doc__)
    p.add_argument("--device", default="cpu", help="cpu or xpuN (default cpu)")
    p.add_argument("--backend", default=None, help="executor backend (default: ATen)")
    p.add_argument("--explain", action="store_true", help="print graphs and breaks at exit")
    p.add_argument("--fullgraph", action="store_true", help="graph breaks raise xacc.Unsupported")
    p.add_argument("--precision", default="float32", choices=("float32", "auto"),
                   help="auto: matmul/conv regions in bfloat16 where the error stays within --tolerance")
    p.add_argument("--tolerance", type=float, default=1e-2,
                   help="max relative error of precision=auto against float32 (default 1e-2)")
    p.add_argument("--export", metavar="DIR", default=None,
                   help="write every capture artifact and DIR/index.html at exit (default: $XACC_DUMP)")
    p.add_argument("--compare", action="store_true",
                   help="replay every compiled graph on the reference interpreter and the target; print divergences")
    p.add_argument("--cache", metavar="DIR", default=None,
                   help="reuse the graphs and kernels earlier runs compiled into DIR, and add this run's "
                        "(docs/aot.md)")
    p.add_argument("--hot-calls", type=int, default=2, metavar="N",
                   help="translate a frame at its N-th call; frames called fewer times (set-up code) run as "
                        "plain Python (default 2; 1 translates every frame on its first call)")
    p.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance of --compare")
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of --compare")
    p.add_argument("--pgo", action="store_true",
                   help="profile-guided optimization: record a profile when the file does not exist, "
                        "else compile with it (docs/pgo.md)")
    p.add_argument("--pgo-profile", metavar="FILE", default=None,
                   help="the profile file (implies --pgo; default $XACC_PGO_PROFILE, else ./xacc_pgo.json)")
    p.add_argument("--pgo-mode", choices=("auto", "record", "use"), default=None,
                   help="record, use, or auto (the default: use when the file exists; implies --pgo)")
    p.add_argument("script", nargs="?", help="the script to run (or -m MODULE, as python -m runs it)")
    p.add_argument("args", nargs=argparse.REMAINDER)
    return p


def _split_module(argv: list[str]) -> tuple[list[str], str | None, list[str]]:
    """(xjit's options, MODULE, MODULE's arguments) for `... -m MODULE args`, the
    way python reads its own -m: everything after MODULE belongs to it. (argv, None,
    []) when -m comes after the script (then it is the script's argument)."""
    for i, a in enumerate(argv):
        if a == "-m" and i + 1 < len(argv):
            head = argv[:i]
            if _parser().parse_known_args(head)[0].script is None:
                return head, argv[i + 1], argv[i + 2:]
            break
    return argv, None, []


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    opts, module, module_args = _split_module(argv)
    p = _parser()
    ns = p.parse_args(opts)
    ns.module = module
    if module is not None:
        ns.args = module_args
    elif ns.script is None:
        p.error("a script to run is required (or -m MODULE)")
    ns.child = False
    from xjit import child
    if child.STARTED:  # this interpreter already runs under xjit (XACC_XJIT): run the program in it
        ns.child = True  # its summary is the worker's
        return _run_module(module, module_args) if module else _run_path(ns)
    error = _setup(ns)
    if error is not None:
        print(f"xjit: {error}", file=sys.stderr)
        return 2
    child.propagate(ns)  # workers the program starts run under xjit too
    child.watch_forks(lambda: _forked_worker(ns), _worker_report)  # and those it forks
    if module is not None:
        atexit.register(_at_exit, ns.t0, ns, ns.rec)
        return _run_module(module, module_args)
    return _run_path(ns)


def _run_path(ns: argparse.Namespace) -> int:
    code, path = _compile_script(ns.script)
    if code is None:
        return path  # the exit status python gives (no summary: the script never ran)
    if not ns.child:
        atexit.register(_at_exit, ns.t0, ns, ns.rec)
    return _run_script(code, path, ns.script, ns.args)


def _setup(ns: argparse.Namespace) -> str | None:
    """Everything `python -m xjit` does before the program runs: device erasure,
    the hook with ns's options, the recorder (ns.t0, ns.rec); a worker
    (ns.child, xjit/child.py) also registers its summary for its exit. The
    error message when an option is not usable, else None."""
    from xacc._src.capture import convert, device
    from xacc._src.config import E, env
    from xacc._src.export.record import Recorder
    from xacc.errors import BackendError
    from xacc._src.jit import _ensure_installed, check_device

    try:
        check_device(ns.device)
    except BackendError as e:
        return str(e)
    if ns.hot_calls < 1:
        return f"--hot-calls must be at least 1, not {ns.hot_calls}"
    if ns.export is None and env(E.DUMP):
        ns.export = env(E.DUMP)

    ns.t0 = time.perf_counter()
    device.install(ns.device)
    from xacc._src.amp import check_options
    try:
        check_options(ns.precision, ns.tolerance)
    except ValueError as e:
        return str(e)
    ns.pgo_session = None
    if ns.pgo or ns.pgo_profile or ns.pgo_mode:
        from xacc._src.pgo import Config, resolve
        ns.pgo_session = resolve(Config(ns.pgo_profile, ns.pgo_mode or "auto"))
    opts = convert.Options(device=ns.device, backend=ns.backend, fullgraph=ns.fullgraph,
                           precision=ns.precision, tolerance=ns.tolerance, pgo=ns.pgo_session,
                           hot_calls=ns.hot_calls)
    _ensure_installed()
    if ns.cache:
        from xacc._src.aot.api import use_cache_dir
        use_cache_dir(ns.cache, ns.device)
    convert.push_options(opts)
    # Graph values are kept (first call of each graph) only when something replays them.
    rec = ns.rec = Recorder(keep=1 if (ns.export or ns.compare) else 0)
    if ns.explain or ns.export or ns.compare:
        rec.__enter__()  # the graph tap costs a Python call per graph run: only when asked for
        from xacc._src.pgo.session import chain_tap
        C_tap = chain_tap(rec.tap)
        if C_tap is not rec.tap:  # a recording PGO session sees graph calls too
            from xacc._C import capture as C0
            C0.set_graph_tap(C_tap)
    if ns.child:
        global _WORKER
        _WORKER = (ns.t0, ns, rec)
    return None


def start_worker(spec: str) -> None:
    """Installs xjit in this interpreter, at its start-up, with the options
    `spec` (XACC_XJIT; xjit/_boot/sitecustomize.py, Note [xjit in child interpreters])."""
    import shlex

    from xjit import child
    from xacc._src.config import value

    if child.STARTED:
        return
    value(child.ENV)  # ConfigError on a malformed value
    ns = _parser().parse_args(shlex.split(spec))
    ns.pgo, ns.pgo_profile, ns.pgo_mode = False, None, None  # one profile file, many writers: not passed on
    ns.child, ns.script, ns.module = True, None, None
    error = _setup(ns)
    if error is not None:
        raise RuntimeError(f"XACC_XJIT={spec!r}: {error}")
    child.REPORT = _worker_report
    child.after_start()
    from xacc._C import capture as C
    C.set_state(2)  # capture for the rest of the interpreter's life (Note [Hot frames] keeps set-up plain)


def _run_module(module: str, args: list) -> int:
    """Runs MODULE as `python -m MODULE args` does (runpy, sys.argv, __main__),
    with capture on; exit status and error report as python gives them."""
    import runpy

    from xacc._C import capture as C
    sys.argv = [module] + list(args)  # runpy sets sys.argv[0] to the module's file
    prev = C.set_state(2)
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - reported as python reports it
        sys.excepthook(type(e), e, e.__traceback__)
        return _INTERRUPTED if isinstance(e, KeyboardInterrupt) else 1
    finally:
        C.set_state(prev)
    return 0


def _compile_script(script: str) -> tuple:
    """(code, absolute path) of `script` compiled as `python script` compiles it,
    or (None, exit status) after printing what python prints when the file
    cannot be read (status 2) or does not compile (status 1)."""
    path = os.path.abspath(script)  # __file__, tracebacks and warnings name it as python does
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        prog = sys.orig_argv[0] if sys.orig_argv else "python"
        print(f"{prog}: can't open file {path!r}: [Errno {e.errno}] {e.strerror}", file=sys.stderr)
        return None, 2
    try:
        return compile(source, path, "exec", dont_inherit=True), path
    except (SyntaxError, ValueError) as e:  # ValueError: a NUL byte in the source
        sys.excepthook(type(e), e.with_traceback(None), None)  # python shows the error alone
        return None, 1


def _run_script(code: types.CodeType, path: str, script: str, args: list) -> int:
    """Runs `code` as python runs a script: in a fresh `__main__` module (which
    stays in sys.modules), with sys.argv and sys.path[0] as python sets them. An
    uncaught exception is reported by sys.excepthook from the script's own frame
    on (status 1); SystemExit propagates unchanged."""
    from importlib.machinery import SourceFileLoader

    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __builtins__=builtins, __annotations__={},
                         __loader__=SourceFileLoader("__main__", path))
    sys.modules["__main__"] = main
    sys.argv = [script] + list(args)
    # python puts the script's directory (symlinks resolved) first instead of the
    # current directory that `-m` put there.
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    from xacc._C import capture as C
    prev = C.set_state(2)
    try:
        exec(code, main.__dict__)
    except SystemExit:
        raise
    except BaseException as e:  # noqa: BLE001 - reported exactly as python reports it
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code is not code:
            tb = tb.tb_next  # drop this function's frame: the traceback starts in the script
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        if isinstance(e, KeyboardInterrupt):
            return _INTERRUPTED
        return 1
    finally:
        C.set_state(prev)
    return 0


# python dies of SIGINT after an uncaught KeyboardInterrupt (its exit status
# shows the signal), once the atexit functions ran.
_INTERRUPTED = -signal.SIGINT


def _exit(status: int) -> None:
    if status != _INTERRUPTED:
        sys.exit(status)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


if __name__ == "__main__":
    _exit(main())
