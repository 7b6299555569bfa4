"""The readable report of `python -m xjit --explain`: per compiled frame its
outcome, graph and op counts, each break with code, reason, the user's source
line and hint, each recompile with the guard that failed, and where the time
went (capturing, compiling, running graphs). Built from the event records only."""

from __future__ import annotations

import linecache
import os
from collections import Counter


def _src(file: str, line: int) -> str:
    text = linecache.getline(file, line).strip()
    return text or "<source not available>"


def explain_report(events: list, *, run_seconds: float | None = None, graph_calls: int | None = None,
                   wall_seconds: float | None = None, left_alone: list | None = None) -> str:
    """`left_alone`: hotness.ColdFrame records (Note [Hot frames]), listed after
    the compiled frames as the set-up code that ran as plain Python."""
    lines = ["", "== xjit explain =="]
    stages: Counter = Counter()
    for ev in events:
        stages.update(ev.stage_seconds)
    capture = sum(ev.seconds for ev in events)
    compile_s = stages.get("passes", 0.0) + stages.get("prepare", 0.0)
    lines.append(f"time: capturing {stages.get('trace', 0.0) * 1e3:.1f} ms (translating bytecode), "
                 f"compiling {compile_s * 1e3:.1f} ms (passes {stages.get('passes', 0.0) * 1e3:.1f}, "
                 f"prepare {stages.get('prepare', 0.0) * 1e3:.1f}), "
                 f"total compile callback {capture * 1e3:.1f} ms")
    if run_seconds is not None:
        lines.append(f"      running graphs {run_seconds * 1e3:.1f} ms over {graph_calls or 0} call(s)"
                     + (f"; wall {wall_seconds:.2f} s" if wall_seconds is not None else ""))
    by_frame: dict[tuple, list] = {}
    for ev in events:
        by_frame.setdefault((ev.function, ev.filename, ev.lineno), []).append(ev)
    for (fn, file, line), evs in by_frame.items():
        lines.append(f"frame {fn} ({os.path.relpath(file) if os.path.isabs(file) else file}:{line}): "
                     f"{len(evs)} compile(s), first translated at call {evs[0].calls}")
        for ev in evs:
            ops = sum(ev.op_counts.values())
            desc = {"graph": "whole frame is one graph", "code": "graph break: prefix graph + resume",
                    "skip": "runs in Python", "error": "failed: runs in Python"}.get(ev.outcome, ev.outcome)
            lines.append(f"  entry {ev.entry}: {ev.outcome} ({desc}); {1 if ev.graph else 0} graph, {ops} ops, "
                         f"{ev.seconds * 1e3:.2f} ms capturing, peak memory {ev.peak_rss_kib / 1024:.0f} MiB "
                         f"(+{ev.rss_growth_kib / 1024:.1f})")
            if ev.op_counts:
                top = ", ".join(f"{k} x{v}" for k, v in sorted(ev.op_counts.items(), key=lambda kv: -kv[1])[:8])
                lines.append(f"    ops: {top}")
            for note in getattr(ev, "pgo", ()):
                lines.append(f"    {note}")
            for r in ev.recompile_reasons:
                lines.append(f"    recompile: guard failed: {r}")
            for b in ev.breaks:
                lines.append(f"    break {b.code} {b.reason}: {b.detail}")
                lines.append(f"      at {b.filename}:{b.lineno} in {b.function}: {_src(b.filename, b.lineno)}")
                for f, ln, name in list(b.stack or ())[:-1]:
                    lines.append(f"      inlined from {f}:{ln} in {name}")
                lines.append(f"      hint: {b.hint}")
            for r in ev.resumes:
                lines.append(f"    resume function: {r.co_qualname}")
            if getattr(ev, "precision", None) is not None:
                lines.extend("    " + ln for ln in str(ev.precision).splitlines())
    if left_alone:
        lines.append(f"left alone (plain Python, not translated): {len(left_alone)} frame(s)")
        for c in sorted(left_alone, key=lambda c: (c.filename, c.lineno)):
            where = os.path.relpath(c.filename) if os.path.isabs(c.filename) else c.filename
            lines.append(f"  {c.function} ({where}:{c.lineno}): {c.calls} call(s) seen; {c.reason}")
    if not events:
        lines.append("no frame was compiled (no function took tensors?)")
    return "\n".join(lines)
