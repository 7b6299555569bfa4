"""Capture records: one CompileEvent per call of the compile callback, kept in
EVENTS for explain(), export, compare, PGO and the xjit summary.

Invariant: a record never keeps a function's code alive. Its code objects (the
frame's, the generated break function's, the resume functions') are held
weakly, so a deleted function's code object dies and its cache entries (held
in the code's co_extra slot) are freed with it. When a code object dies its
records are retired: the last RETIRED_KEPT of them stay readable (tests and
reports that look a little after a function went away still find them), older
ones are dropped and only counted (`EVENTS.dropped`), so a process that jits
any number of short-lived functions holds a bounded amount of capture records.

EVENTS behaves as the list it replaced for its readers: iteration, indexing,
`list(EVENTS)`, `EVENTS[start:]` after `start = len(EVENTS)`. `len` counts
every record ever appended (since the last clear), so such a mark stays valid
while older records are dropped.
"""

from __future__ import annotations

import threading
import types
import weakref
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

RETIRED_KEPT = 64  # records of dead code objects kept readable


def _ref(code: types.CodeType | None) -> Any:
    return None if code is None else weakref.ref(code)


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
    dynamic: list = field(default_factory=list)  # dynamic-shape decisions (dynamic.py), for explain
    # A recompile that follows its group's dynamic-dim decision (Note [Fragment groups] in dynamic.py):
    # counted as dynamic_followups, not recompiles.
    followup: bool = False
    # -- The export record: what xacc.export, xacc.debug.compare and `xjit --explain`
    # read (xacc/_src/export, xacc/_src/debug). Nothing else of the translator is
    # read from outside; keep filling these. Code objects are read through the
    # properties `code`, `rewritten` and `resumes` (held weakly: see above). --
    code_ref: Any = None  # weakref to the frame's original code object
    graph_id: int = 0  # CompiledGraph.id of the captured graph (Note [Graph tap]); 0: none
    # A training split's forward (training.py) returns the captured graph's results and then
    # the residuals its backward reads: the tap sees both. -1: every output is a result.
    graph_results: int = -1
    graph_inputs: list = field(default_factory=list)  # a name per graph input ("L['x']", ...)
    stage_seconds: dict = field(default_factory=dict)  # trace, passes, prepare
    device: str = "cpu"  # target the frame was captured for
    entry: int = 0  # index of this compile's cache entry on the code object
    precision: Any = None  # amp.PrecisionReport when compiled with precision="auto"
    pgo: list = field(default_factory=list)  # "PGO: ..." lines: what the profile changed (docs/pgo.md)
    rewritten_ref: Any = None  # outcome "code": weakref to the generated break function's code
    resume_refs: list = field(default_factory=list)  # weakrefs to the resume functions' code objects
    calls: int = 1  # the call of the frame that was translated (Note [Hot frames], hotness.py)
    peak_rss_kib: int = 0  # the process's peak resident memory when this compile ended
    rss_growth_kib: int = 0  # how much this compile raised that peak

    @property
    def code(self) -> types.CodeType | None:
        """The frame's original code object (None once it died)."""
        return self.code_ref() if self.code_ref is not None else None

    @code.setter
    def code(self, c: types.CodeType | None) -> None:
        self.code_ref = _ref(c)

    @property
    def rewritten(self) -> types.CodeType | None:
        """Outcome "code": the generated break function's code object."""
        return self.rewritten_ref() if self.rewritten_ref is not None else None

    @rewritten.setter
    def rewritten(self, c: types.CodeType | None) -> None:
        self.rewritten_ref = _ref(c)

    @property
    def resumes(self) -> list:
        """The resume functions' code objects the break function calls (live ones)."""
        return [c for c in (r() for r in self.resume_refs) if c is not None]

    @resumes.setter
    def resumes(self, codes: list) -> None:
        self.resume_refs = [weakref.ref(c) for c in codes]

    def graph_outputs(self, outputs: Any) -> list:
        """The captured graph's results among the outputs the graph tap saw."""
        outs = list(outputs)
        return outs if self.graph_results < 0 else outs[:self.graph_results]


class EventLog:
    """EVENTS: the capture records (see the module docstring)."""

    def __init__(self) -> None:
        self._events: dict[int, CompileEvent] = {}  # sequence number -> record, in order
        self._seq = 0
        self._retired: list[int] = []  # sequence numbers of dead codes' records, oldest first
        self._watched: dict[int, list[int]] = {}  # id(code) -> its records' sequence numbers
        self._lock = threading.RLock()  # a code object may die (and retire) while one is held
        # What dropped records said, for totals (the xjit summary).
        self.dropped: Counter = Counter()

    def append(self, ev: CompileEvent) -> None:
        code = ev.code
        with self._lock:
            seq = self._seq
            self._seq += 1
            self._events[seq] = ev
            if code is None:
                return
            key = id(code)
            seqs = self._watched.get(key)
            if seqs is None:
                seqs = self._watched[key] = []
                weakref.finalize(code, self._retire, key).atexit = False  # records outlive the exit
            seqs.append(seq)

    def _retire(self, key: int) -> None:
        with self._lock:
            seqs = self._watched.pop(key, ())
            self._retired.extend(s for s in seqs if s in self._events)
            excess = len(self._retired) - RETIRED_KEPT
            if excess > 0:
                for s in self._retired[:excess]:
                    ev = self._events.pop(s, None)
                    if ev is not None:
                        self._count_dropped(ev)
                del self._retired[:excess]

    def _count_dropped(self, ev: CompileEvent) -> None:
        self.dropped["events"] += 1
        if ev.outcome in ("graph", "code"):
            self.dropped["captured"] += 1
        for b in ev.breaks:
            self.dropped[f"break {b.code} {b.reason}"] += 1

    def clear(self) -> None:
        with self._lock:
            self._events.clear()
            self._retired.clear()
            self._seq = 0
            self.dropped.clear()

    def __len__(self) -> int:
        return self._seq

    def __bool__(self) -> bool:
        return bool(self._events)

    def __iter__(self) -> Iterator[CompileEvent]:
        return iter(list(self._events.values()))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice) and i.step is None and (i.start is None or i.start >= 0) and i.stop is None:
            start = i.start or 0
            return [ev for s, ev in list(self._events.items()) if s >= start]
        return list(self._events.values())[i]


EVENTS = EventLog()
