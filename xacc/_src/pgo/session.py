"""PGO sessions: what `xacc.jit(..., pgo=...)` and `python -m xjit --pgo` resolve to.

One `Session` per profile file per process. Its mode is
  record - compile as without PGO, and record every graph this session compiles:
           call counts, the input shapes and dtypes of every call, run times, and
           on xpu devices per-region kernel vs ATen times (measured by the MLIR
           executable, CompileOptions::profile); written to the file at exit
           (or `flush()`), merged into what the file already holds;
  use    - read the file once and let `decisions.decide` change compiles;
  auto   - `use` when the file exists, `record` otherwise (the default).
A file that cannot be used is reported by a `PGOWarning` naming it (never an
exception from inside a compile): the session then compiles as without PGO.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import types
import warnings
from dataclasses import dataclass
from typing import Any

import torch

from xacc._src.capture.device import backend_profiles
from xacc._src.pgo import profile as _profile

DEFAULT_FILE = "xacc_pgo.json"
MODES = ("auto", "record", "use")


class PGOWarning(UserWarning):
    """A PGO profile could not be read or written; compiles go on without it."""


@dataclass(frozen=True)
class Config:
    """`xacc.jit(fn, pgo=Config(path, mode))`; `pgo=True` is Config(), `pgo="f.json"`
    is Config("f.json"). `path` None: $XACC_PGO_PROFILE, else ./xacc_pgo.json."""

    path: str | None = None
    mode: str = "auto"

    def resolved_path(self) -> str:
        from xacc._src.config import E, env
        p = self.path or env(E.PGO_PROFILE) or DEFAULT_FILE
        return os.path.abspath(os.fspath(p))


def resolve(pgo: Any) -> "Session | None":
    """The session for a `pgo=` argument: None/False (no PGO), True, a path or a Config."""
    if pgo is None or pgo is False:
        return None
    if pgo is True:
        cfg = Config()
    elif isinstance(pgo, (str, os.PathLike)):
        cfg = Config(os.fspath(pgo))
    elif isinstance(pgo, Config):
        cfg = pgo
    else:
        raise TypeError(f"xacc.jit: pgo must be True, a profile path or xacc.pgo.Config, got {type(pgo).__name__}")
    if cfg.mode not in MODES:
        raise ValueError(f"xacc.jit: pgo mode must be one of {', '.join(MODES)}, got {cfg.mode!r}")
    return session(cfg)


_SESSIONS: dict[tuple[str, str], "Session"] = {}
_lock = threading.RLock()


def session(cfg: Config) -> "Session":
    path = cfg.resolved_path()
    with _lock:
        s = _SESSIONS.get((path, cfg.mode))
        if s is None:
            s = _SESSIONS[(path, cfg.mode)] = Session(path, cfg.mode)
        return s


def sessions() -> list["Session"]:
    return list(_SESSIONS.values())


def flush() -> None:
    """Writes every recording session's profile now (also done at exit)."""
    for s in sessions():
        s.write()


def reset() -> None:
    """Forgets the sessions of this process (tests): recorded data is dropped unwritten."""
    with _lock:
        for s in _SESSIONS.values():
            s.graphs.clear()
            s.recording = False
        _SESSIONS.clear()
        _TAP.graphs.clear()


class Samples:
    """Run times of one graph: count, total, and up to 1024 kept for the median."""

    __slots__ = ("runs", "total", "kept")

    def __init__(self) -> None:
        self.runs = 0
        self.total = 0.0
        self.kept: list[float] = []

    def add(self, s: float) -> None:
        self.runs += 1
        self.total += s
        if len(self.kept) < 1024:
            self.kept.append(s)

    def json(self) -> dict:
        v = sorted(self.kept)
        n = len(v)
        med = 0.0 if not n else (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)
        return {"runs": self.runs, "total_s": self.total, "median_s": med, "min_s": v[0] if v else 0.0}


class GraphRecord:
    """What a recording session saw of one compiled graph."""

    def __init__(self, session: "Session", ev: Any, graph: Any) -> None:
        self.session = session
        self.code: types.CodeType = ev.code
        self.frame_key = _profile.code_key(ev.code)
        self.ghash = _profile.graph_hash(ev.graph or graph.text())
        self.graph = graph
        self.ev = ev
        self.names = list(ev.graph_inputs)
        self.calls = 0
        self.run = Samples()
        self.shapes: list[dict] = [dict() for _ in self.names]  # per input: shape -> calls
        self.dtypes: list[set] = [set() for _ in self.names]

    def note_inputs(self, values: tuple) -> None:
        self.calls += 1
        for i, v in enumerate(values[:len(self.shapes)]):
            if isinstance(v, torch.Tensor):
                shp = tuple(v.shape)
                seen = self.shapes[i]
                if shp in seen or len(seen) < 64:
                    seen[shp] = seen.get(shp, 0) + 1
                if len(self.dtypes[i]) < 4:
                    self.dtypes[i].add(str(v.dtype).removeprefix("torch."))

    def json(self) -> dict:
        import json as _json
        ev = self.ev
        inputs = []
        for name, seen, dts in zip(self.names, self.shapes, self.dtypes):
            if not seen:
                continue
            shapes = [list(s) for s in seen]
            changed = sorted({d for s in seen for t in seen if len(s) == len(t)
                              for d in range(len(s)) if s[d] != t[d]})
            inputs.append({"name": name, "dtypes": sorted(dts), "shapes": shapes,
                           "calls_per_shape": list(seen.values()), "changed_dims": changed})
        out = {"device": ev.device, "outcome": ev.outcome, "entry": ev.entry,
               "ops": sum(ev.op_counts.values()), "op_counts": dict(ev.op_counts),
               "compile_s": ev.seconds, "calls": self.calls, "run": self.run.json(), "inputs": inputs}
        if backend_profiles(ev.device):
            try:
                dev = _json.loads(self.graph.profile_json() or "{}")
            except ValueError:
                dev = {}
            out["regions"] = dev.get("regions", [])
            out["fallback_ops"] = dev.get("fallback_ops", [])
            # The graph's cost on ATen alone: every region as its ATen ops plus the fallbacks.
            if out["regions"]:
                aten = sum(r["aten"]["median_s"] for r in out["regions"] if r["aten"]["runs"])
                fb = sum(f["time"]["total_s"] / max(1, self.calls) for f in out["fallback_ops"])
                out["aten_estimate_s"] = aten + fb
        return out


class _Tap:
    """The graph tap (Note [Graph tap]) of all recording sessions; chains to
    another tap (export's Recorder) when one is given."""

    def __init__(self) -> None:
        self.graphs: dict[int, GraphRecord] = {}
        self.chain: Any = None
        self.installed = False
        self._t0 = threading.local()

    def __call__(self, gid: int, what: str, values: tuple) -> None:
        rec = self.graphs.get(gid)
        if rec is not None:
            if what == "in":
                rec.note_inputs(values)
                self._t0.t = time.perf_counter()
            else:
                t0 = getattr(self._t0, "t", None)
                if t0 is not None:
                    rec.run.add(time.perf_counter() - t0)
                    self._t0.t = None
        if self.chain is not None:
            self.chain(gid, what, values)

    def install(self) -> None:
        from xacc._C import capture as C
        C.set_graph_tap(self)
        self.installed = True


_TAP = _Tap()


def chain_tap(other: Any) -> Any:
    """The tap to install when `other` (a Recorder's tap) must see graph calls too:
    the PGO tap when a session records (it calls `other`), else `other`."""
    if _TAP.installed:
        _TAP.chain = other
        return _TAP
    return other


class Session:
    def __init__(self, path: str, mode: str) -> None:
        self.path = path
        self.requested = mode
        self.profile: dict | None = None  # what `use` decides from
        self.error: str | None = None
        self.graphs: list[GraphRecord] = []
        self._decisions: dict[types.CodeType, Any] = {}
        exists = os.path.exists(path)
        self.mode = mode if mode != "auto" else ("use" if exists else "record")
        if self.mode == "use":
            try:
                self.profile = _profile.load(path)
            except _profile.ProfileError as e:
                self.error = str(e)
                warnings.warn(f"xacc PGO: ignoring the profile: {e}", PGOWarning, stacklevel=4)
        self.recording = self.mode == "record"
        if self.recording:
            _TAP.install()
            atexit.register(self.write)

    @property
    def using(self) -> bool:
        return self.profile is not None

    def __repr__(self) -> str:
        return f"<pgo session {self.mode} {self.path}>"

    # -- recording --
    def device_options(self) -> dict[str, str]:
        return {"profile": "1"} if self.recording else {}

    def note_graph(self, ev: Any, graph: Any) -> None:
        """Called by the capture (convert.py) for each graph compiled under this session."""
        if not self.recording or ev.code is None:
            return
        rec = GraphRecord(self, ev, graph)
        with _lock:
            self.graphs.append(rec)
            _TAP.graphs[graph.id] = rec

    def frames(self) -> dict:
        """This run's frame records (docs/pgo.md), from the graphs recorded."""
        from xacc._src.capture import convert, dynamic
        frames: dict[str, dict] = {}
        for rec in list(self.graphs):
            code = rec.code
            fr = frames.get(rec.frame_key)
            if fr is None:
                evs = [e for e in convert.EVENTS if e.code is code]
                st = dynamic._STATES.get(code)
                fr = frames[rec.frame_key] = {
                    "file": _profile.code_file(code), "qualname": code.co_qualname, "firstlineno": code.co_firstlineno,
                    "calls": 0, "compiles": len(evs), "recompiles": sum(1 for e in evs if e.recompile_reasons),
                    "dynamic_failed": bool(st and st.failed),
                    "dynamic_dims": {k: sorted(v) for k, v in (st.dyn.items() if st else ())},
                    "graphs": {}}
            g = rec.json()
            fr["calls"] += rec.calls
            old = fr["graphs"].get(rec.ghash)
            if old is not None:  # the same graph compiled twice (e.g. after a reset): add up
                g["calls"] += old["calls"]
            fr["graphs"][rec.ghash] = g
        return frames

    def write(self) -> None:
        if not self.recording or not self.graphs:
            return
        old = None
        if os.path.exists(self.path):
            try:
                old = _profile.load(self.path)
            except _profile.ProfileError as e:
                warnings.warn(f"xacc PGO: replacing an unusable profile: {e}", PGOWarning, stacklevel=2)
        try:
            _profile.save(_profile.merge(old, self.frames()), self.path)
        except OSError as e:
            warnings.warn(f"xacc PGO: cannot write the profile {self.path}: {e}", PGOWarning, stacklevel=2)

    # -- using --
    def decisions(self, code: types.CodeType, device: str) -> Any:
        """decisions.FrameDecisions for `code` (cached), or None without a profile record."""
        if self.profile is None:
            return None
        key = (code, device)
        if key not in self._decisions:
            from xacc._src.pgo.decisions import decide
            fr = self.profile.get("frames", {}).get(_profile.code_key(code))
            self._decisions[key] = decide(fr, device) if fr is not None else None
        return self._decisions[key]
