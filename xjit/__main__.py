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
              f"wall time: {time.perf_counter() - t0:.2f} s"]
    if explain:
        for ev in convert.EVENTS:
            for b in ev.breaks:
                lines.append(f"  break: {b}")
            if ev.graph:
                lines.append(f"  graph of {ev.function}:")
                lines.extend("    " + ln for ln in ev.graph.rstrip().splitlines())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m xjit", description=__doc__)
    p.add_argument("--device", default="cpu", help="cpu or xpuN (default cpu)")
    p.add_argument("--backend", default=None, help="executor backend (default: ATen)")
    p.add_argument("--explain", action="store_true", help="print graphs and breaks at exit")
    p.add_argument("--fullgraph", action="store_true", help="graph breaks raise xacc.Unsupported")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)

    from xacc._src.capture import convert, device
    from xacc.errors import BackendError
    from xacc.jit import _ensure_installed, check_device

    try:
        check_device(ns.device)
    except BackendError as e:
        print(f"xjit: {e}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    device.install(ns.device)
    opts = convert.Options(device=ns.device, backend=ns.backend, fullgraph=ns.fullgraph)
    _ensure_installed()
    convert.push_options(opts)
    atexit.register(lambda: print(_summary(t0, ns.explain), file=sys.stderr))
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
