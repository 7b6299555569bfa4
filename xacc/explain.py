"""`xacc.explain(fn)(*args)`: run `fn` once under capture from a clean cache and
report what XJIT did: the captured graphs (GIR text), graph and break counts,
every break with its stable code, reason, hint and user file:line, the guards
of each cache entry, ATen op counts and capture times. `xacc.explain(fn).again(
*args)` calls again keeping the caches: recompiles (the guard that failed) and
dynamic-shape decisions (which dims became symbolic, or why not)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from xacc._src.capture import convert as _convert
from xacc._src.capture.breaks import BreakInfo


@dataclass
class ExplainOutput:
    graphs: list[str] = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list[BreakInfo] = field(default_factory=list)
    op_count: int = 0
    ops_per_graph: list[dict[str, int]] = field(default_factory=list)
    guards: list[list[str]] = field(default_factory=list)
    compile_times: list[tuple[str, float]] = field(default_factory=list)
    frames: list[tuple[str, str]] = field(default_factory=list)  # (function, outcome)
    precision: list = field(default_factory=list)  # amp.PrecisionReport per graph (precision="auto")
    pgo_decisions: list[str] = field(default_factory=list)  # "PGO: ..." lines (docs/pgo.md)
    recompiles: list[str] = field(default_factory=list)  # "<function>: <guard that failed>"
    dynamic: list[str] = field(default_factory=list)  # "<function>: dynamic dims: L['x'][0]=s0" ...
    result: Any = None

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, b in enumerate(self.break_reasons, 1):
            lines.append(f"  {i}. {b.code} {b.reason}: {b.detail}")
            lines.append(f"     at {b.filename}:{b.lineno} in {b.function}")
            lines.append(f"     hint: {b.hint}")
        if self.pgo_decisions:
            lines.append("PGO Decisions:")
            lines.extend(f"  {d}" for d in self.pgo_decisions)
        if self.recompiles:
            lines.append("Recompiles:")
            lines.extend(f"  {r}" for r in self.recompiles)
        if self.dynamic:
            lines.append("Dynamic Shapes:")
            lines.extend(f"  {d}" for d in self.dynamic)
        lines.append("Frames:")
        for (name, outcome), (_, secs) in zip(self.frames, self.compile_times):
            lines.append(f"  {name}: {outcome} ({secs * 1e3:.2f} ms)")
        for i, g in enumerate(self.graphs):
            lines.append(f"Graph {i}:")
            lines.extend("  " + ln for ln in g.rstrip().splitlines())
        if self.precision:
            lines.append("Precision:")
            lines.extend("  " + ln for rep in self.precision for ln in str(rep).splitlines())
        return "\n".join(lines)


def explain(fn: Callable, *, device: str = "cpu", precision: str = "float32",
            tolerance: float = 1e-2, pgo: Any = None) -> Callable[..., ExplainOutput]:
    """Returns a callable that runs `fn(*args)` under capture and explains it
    (with precision="auto", also what ran in bfloat16: `ExplainOutput.precision`;
    `pgo`: as for xacc.jit, its decisions are listed)."""
    from xacc.jit import jit, reset

    compiled: list = []

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        reset()
        target = getattr(fn, "_xacc_fn", fn)
        compiled[:] = [jit(target, device=device, precision=precision, tolerance=tolerance, pgo=pgo)]
        return again(*args, **kwargs)

    def again(*args: Any, **kwargs: Any) -> ExplainOutput:
        """Calls again with the caches of the previous call kept: what compiled
        now (a recompile, with the guard that failed and the dynamic-shape decision)."""
        if not compiled:
            return run(*args, **kwargs)
        start = len(_convert.EVENTS)
        result = compiled[0](*args, **kwargs)
        out = ExplainOutput(result=result)
        for ev in _convert.EVENTS[start:]:
            out.recompiles.extend(f"{ev.function}: {r}" for r in ev.recompile_reasons)
            out.dynamic.extend(f"{ev.function}: {d}" for d in ev.dynamic)
            out.frames.append((ev.function, ev.outcome))
            out.compile_times.append((ev.function, ev.seconds))
            out.break_reasons.extend(ev.breaks)
            out.pgo_decisions.extend(ev.pgo)
            if ev.graph:
                out.graphs.append(ev.graph)
                out.ops_per_graph.append(dict(ev.op_counts))
                out.guards.append(list(ev.guards))
            if ev.precision is not None:
                out.precision.append(ev.precision)
        out.graph_count = len(out.graphs)
        out.graph_break_count = len(out.break_reasons)
        out.op_count = sum(sum(d.values()) for d in out.ops_per_graph)
        return out

    run.again = again  # type: ignore[attr-defined]
    return run


__all__ = ["explain", "ExplainOutput"]
