"""Recording the values captured graphs see, through the graph tap of
xacc._C.capture (Note [Graph tap] in CacheEntry.h).

`Recorder` keeps, per compiled graph (CompiledGraph.id), the inputs and outputs of
its first `keep` calls, detached and cloned so later in-place updates do not
change them. Export writes them next to the GIR and re-runs the GIR on them;
xacc.debug.compare replays them on other executors.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from xacc._C import capture as C


def snapshot(v: Any) -> Any:
    """A copy of a graph value that later mutations cannot reach."""
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (list, tuple)):
        return type(v)(snapshot(e) for e in v)
    return v


@dataclass
class GraphCall:
    inputs: tuple
    outputs: tuple | None = None


@dataclass
class Recorder:
    keep: int = 1
    calls: dict[int, list[GraphCall]] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    run_seconds: float = 0.0  # time inside graph runs (between the tap's two calls)

    def __post_init__(self) -> None:
        self._pending = threading.local()

    def tap(self, gid: int, what: str, values: tuple) -> None:
        if what == "in":
            n = self.counts.get(gid, 0)
            self.counts[gid] = n + 1
            self._pending.call = (gid, GraphCall(snapshot(values))) if n < self.keep else None
            self._pending.t0 = time.perf_counter()
        else:
            self.run_seconds += time.perf_counter() - getattr(self._pending, "t0", time.perf_counter())
            pending = getattr(self._pending, "call", None)
            if pending is not None and pending[0] == gid:
                pending[1].outputs = snapshot(values)
                self.calls.setdefault(gid, []).append(pending[1])
                self._pending.call = None

    def __enter__(self) -> "Recorder":
        C.set_graph_tap(self.tap)
        return self

    def __exit__(self, *exc: object) -> None:
        C.set_graph_tap(None)

    def first(self, gid: int) -> GraphCall | None:
        calls = self.calls.get(gid)
        return calls[0] if calls else None
