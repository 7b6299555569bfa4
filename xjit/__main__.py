"""`python -m xjit`: see xjit/__init__.py."""

from __future__ import annotations

import argparse
import atexit
import os
import runpy
import sys
import time
from collections import Counter


def _summary(t0: float, explain: bool) -> str:
    from xacc._src.capture import convert
    from xacc.jit import counters

    c = counters()
    breaks = Counter()
    for ev in convert.EVENTS:
        for b in ev.breaks:
            breaks[f"{b.code} {b.reason}"] += 1
    captured = sum(1 for ev in convert.EVENTS if ev.outcome in ("graph", "code"))
    lines = ["", "== xjit summary ==",
             f"frames captured: {captured} (compiled {c['frames']}, skipped {c['skipped']})",
             f"graphs: {c['graphs']}",
             f"graph breaks: {sum(breaks.values())}"]
    for reason, n in breaks.most_common():
        lines.append(f"  {n:4d}  {reason}")
    lines += [f"recompiles: {c['recompiles']}",
              f"cache hits: {c['hook_hits']}  misses: {c['hook_misses']}",
              f"capture time: {c['capture_seconds_us'] / 1e3:.1f} ms",
              f"internal errors (fell back to Python): {c['internal_errors']}",
              *_cache_lines(),
              f"wall time: {time.perf_counter() - t0:.2f} s"]
    return "\n".join(lines)


def _cache_lines() -> list[str]:
    from xacc._src.aot import store

    if not store.SOURCES:
        return []
    s = store.STATS
    lines = [f"stored entries: {s['entries_installed']} installed for {s['frames_installed']} frames, "
             f"{s['guard_mismatches']} guard mismatches, {s['entries_recorded']} recorded "
             f"({s['install_seconds_us'] / 1e3:.1f} ms installing)"]
    from xacc import _C
    if getattr(_C, "has_mlir", False):
        k = _C.mlir.kernel_totals()
        lines.append(f"kernels: {k['compiled']} compiled, {k['disk_hits']} loaded from the disk cache "
                     f"({k['compile_seconds'] * 1e3:.1f} ms)")
    return lines


def _at_exit(t0: float, ns: argparse.Namespace, rec: object) -> None:
    from xacc._src.capture import convert

    out = [_summary(t0, ns.explain)]
    events = list(convert.EVENTS)
    if ns.explain:
        from xacc._src.debug.explain_report import explain_report
        out.append(explain_report(events, run_seconds=rec.run_seconds, graph_calls=sum(rec.counts.values()),
                                  wall_seconds=time.perf_counter() - t0))
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
        m = write_export(events, ns.export, rec, title=f"xjit export of {ns.script}",
                         run_seconds=time.perf_counter() - t0)
        out.append(f"export: {len(m['frames'])} frame(s), {m['graph_count']} graph(s) -> "
                   f"{os.path.join(ns.export, 'index.html')}")
    print("\n".join(out), file=sys.stderr)


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


def main(argv: list[str] | None = None) -> int:
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
    p.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance of --compare")
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of --compare")
    p.add_argument("--pgo", action="store_true",
                   help="profile-guided optimization: record a profile when the file does not exist, "
                        "else compile with it (docs/pgo.md)")
    p.add_argument("--pgo-profile", metavar="FILE", default=None,
                   help="the profile file (implies --pgo; default $XACC_PGO_PROFILE, else ./xacc_pgo.json)")
    p.add_argument("--pgo-mode", choices=("auto", "record", "use"), default=None,
                   help="record, use, or auto (the default: use when the file exists; implies --pgo)")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)

    from xacc._src.capture import convert, device
    from xacc._src.config import env
    from xacc._src.export.record import Recorder
    from xacc.errors import BackendError
    from xacc.jit import _ensure_installed, check_device

    try:
        check_device(ns.device)
    except BackendError as e:
        print(f"xjit: {e}", file=sys.stderr)
        return 2
    if ns.export is None and env("XACC_DUMP"):
        ns.export = env("XACC_DUMP")

    t0 = time.perf_counter()
    device.install(ns.device)
    from xacc._src.amp import check_options
    try:
        check_options(ns.precision, ns.tolerance)
    except ValueError as e:
        print(f"xjit: {e}", file=sys.stderr)
        return 2
    ns.pgo_session = None
    if ns.pgo or ns.pgo_profile or ns.pgo_mode:
        from xacc._src.pgo import Config, resolve
        ns.pgo_session = resolve(Config(ns.pgo_profile, ns.pgo_mode or "auto"))
    opts = convert.Options(device=ns.device, backend=ns.backend, fullgraph=ns.fullgraph,
                           precision=ns.precision, tolerance=ns.tolerance, pgo=ns.pgo_session)
    _ensure_installed()
    if ns.cache:
        from xacc._src.aot.api import use_cache_dir
        use_cache_dir(ns.cache, ns.device)
    convert.push_options(opts)
    # Graph values are kept (first call of each graph) only when something replays them.
    rec = Recorder(keep=1 if (ns.export or ns.compare) else 0)
    if ns.explain or ns.export or ns.compare:
        rec.__enter__()  # the graph tap costs a Python call per graph run: only when asked for
        from xacc._src.pgo.session import chain_tap
        C_tap = chain_tap(rec.tap)
        if C_tap is not rec.tap:  # a recording PGO session sees graph calls too
            from xacc._C import capture as C0
            C0.set_graph_tap(C_tap)
    atexit.register(_at_exit, t0, ns, rec)
    sys.argv = [ns.script] + ns.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(ns.script)))
    from xacc._C import capture as C
    C.set_state(2)
    try:
        runpy.run_path(ns.script, run_name="__main__")
    finally:
        C.set_state(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
