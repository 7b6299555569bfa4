"""`xacc.export(fn, *args, dir=...)`: run `fn` under capture and write every
artifact of what XJIT did (docs/export.md): per compiled frame the GIR (reloadable
by xacc-opt and xacc.ir), DOT and SVG, bytecode and Python-like source of the
original, rewritten and resume functions, guards, breaks (JSON), recompile
reasons, compile times per stage, Camel source regenerated from the graph, MLIR
when the xpu target compiled it, the values the graph saw, and index.html."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from xacc._src.export.record import Recorder
from xacc._src.export.writer import write_export


@dataclass
class ExportResult:
    dir: str
    index: str
    manifest: dict
    result: Any


def export(fn: Callable, *args: Any, dir: str, device: str = "cpu", fullgraph: bool = False,
           reset: bool = True, **kwargs: Any) -> ExportResult:
    """Runs `fn(*args, **kwargs)` under xacc.jit from a clean cache (unless
    reset=False) and writes the export directory `dir`."""
    import os

    from xacc._src.capture import convert
    from xacc._src.jit import jit
    from xacc._src.jit import reset as reset_caches

    if reset:
        reset_caches()
    start = len(convert.EVENTS)
    target = getattr(fn, "_xacc_fn", fn)
    compiled = jit(target, device=device, fullgraph=fullgraph)
    t0 = time.perf_counter()
    with Recorder() as rec:
        result = compiled(*args, **kwargs)
    elapsed = time.perf_counter() - t0
    name = getattr(target, "__qualname__", type(target).__name__)
    manifest = write_export(convert.EVENTS[start:], dir, rec, title=f"xacc export of {name}", run_seconds=elapsed)
    return ExportResult(dir, os.path.join(dir, "index.html"), manifest, result)


__all__ = ["export", "ExportResult", "Recorder", "write_export"]
