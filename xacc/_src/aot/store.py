"""Cache entries that outlive the process: recording them as they are made and
installing them again in another process (see docs/aot.md).

Recording: while a *sink* is open (an `xacc.aot` build, `python -m xjit
--cache DIR`), every whole-frame graph entry the capture callback installs is
also turned into an `EntryRecord`: the graph's GIR text, the guard tree, the
entry constants and the return template (codec.py), keyed by the code
object's `code_key`.

Installing: a *source* (a loaded artifact, a cache directory) answers
`records(key)`. On a cache miss the capture callback first asks `install`:
the first time a code object misses, its stored entries (if any) are rebuilt
(guard tree, graph prepared for its device from GIR, which for xpu finds its
kernels in the disk cache) and added to the code object's cache, and their
guards are checked against the frame. If one passes, the hook runs it: no
translation, no pass pipeline, no kernel compile. If none passes, the
mismatch is logged (channel `aot`) and the frame is compiled by the JIT as
usual; the stored entries stay installed for later calls that match them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
import types
import warnings
from dataclasses import dataclass
from typing import Any, Callable

from xacc._C import capture as C
from xacc._src.aot import artifact, codec
from xacc._src.config import debug, log
from xacc.errors import ArtifactError


class CacheWarning(UserWarning):
    """A cache directory cannot be written; the program goes on without storing."""


@dataclass
class EntryRecord:
    """One cache entry in portable form."""

    kind: str  # graph | code | skip (see docs/aot.md)
    label: str  # skip: why
    device: str
    gir: str  # graph: the graph; code: the prefix graph or ""; skip: ""
    inputs: list[int]  # guard-tree node of each graph input
    # codec.encode((guard tree dump, entry constants, return template)) for a graph
    # entry, (tree dump, constants, break function) for a code entry; b"" for skip.
    objects: bytes

    def manifest(self, gir_name: str, obj_name: str) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "device": self.device, "gir": gir_name,
                "objects": obj_name, "inputs": list(self.inputs)}


STATS = {"frames_installed": 0, "entries_installed": 0, "guard_mismatches": 0, "entries_recorded": 0,
         "entries_unportable": 0, "entries_unresolvable": 0, "install_seconds_us": 0}
_lock = threading.RLock()
SINKS: list["Sink"] = []
SOURCES: list["Source"] = []
_consulted: set[types.CodeType] = set()


class Sink:
    """Receives every portable entry made while it is open."""

    def add(self, key: str, rec: EntryRecord) -> None:
        raise NotImplementedError


class Source:
    """Stored entries by code key."""

    name = "?"

    def records(self, key: str) -> list[EntryRecord] | None:
        raise NotImplementedError


# -- recording -------------------------------------------------------------------


def note_graph_entry(code: types.CodeType, tree: Any, consts: tuple, graph: Any, inputs: list[int],
                     tmpl: Any, label: str, device: str) -> None:
    """Called by the capture callback after it installed a graph entry."""
    if not SINKS:
        return
    try:
        objects = codec.encode((tree.dump(), tuple(consts), tmpl))
    except codec.Unportable as e:
        STATS["entries_unportable"] += 1
        log("aot", "%s (%s:%d): entry %s is not saved (an object of its guards or constants has no "
            "portable form: %s); it stays in this process only", code.co_qualname, code.co_filename,
            code.co_firstlineno, label, e)
        return
    _add(code, EntryRecord("graph", label, device, graph.text(), list(inputs), objects))


_PLACEHOLDER = "__xacc_aot_const_%d__"


def _portable_break_function(fn: types.FunctionType) -> tuple[bytes, dict[int, tuple], Any]:
    """The break function's code (marshal) with the constants marshal cannot
    write replaced by placeholders, how to rebuild each, and its GraphFunction."""
    import marshal

    bcode = fn.__code__
    consts, specs, gf = [], {}, None
    for i, c in enumerate(bcode.co_consts):
        if isinstance(c, C.GraphFunction):
            gf = c
            specs[i] = ("graph",)
        elif isinstance(c, types.CodeType) and C.is_resume(c):
            _orig, prologue = C.resume_info(c)
            specs[i] = ("resume", marshal.dumps(c), prologue)
        elif isinstance(c, types.CodeType) and C.is_loop_body(c):
            specs[i] = ("object", c)  # not registered as a loop body when read back: not portable
        else:
            try:
                marshal.dumps(c)
                consts.append(c)
                continue
            except ValueError:
                specs[i] = ("object", c)
        consts.append(_PLACEHOLDER % i)
    return marshal.dumps(bcode.replace(co_consts=tuple(consts))), specs, gf


def note_code_entry(code: types.CodeType, tree: Any, consts: tuple, fn: types.FunctionType, label: str,
                    device: str) -> None:
    """Called by the capture callback after it installed a graph-break entry."""
    if not SINKS:
        return
    gf = next((c for c in fn.__code__.co_consts if isinstance(c, C.GraphFunction)), None)
    try:
        bcode, specs, gf = _portable_break_function(fn)
        objects = codec.encode((tree.dump(), tuple(consts), (bcode, specs)))
    except (codec.Unportable, ValueError) as e:
        STATS["entries_unportable"] += 1
        if gf is None:
            # Nothing was captured before the break (typically a constructor): running
            # the frame in Python is what the stored run did up to the break anyway.
            log("aot", "%s (%s:%d): break function %s has no portable form (%s) and no graph; stored as "
                "'runs in Python'", code.co_qualname, code.co_filename, code.co_firstlineno, label, e)
            _add(code, EntryRecord("skip", f"break function without a portable form: {e}", device, "", [], b""))
            return
        log("aot", "%s (%s:%d): entry %s is not saved (%s); it stays in this process only", code.co_qualname,
            code.co_filename, code.co_firstlineno, label, e)
        return
    gir = gf.graph.text() if gf is not None else ""
    inputs = list(gf.inputs) if gf is not None else []
    _add(code, EntryRecord("code", label, device, gir, inputs, objects))


def note_skip(code: types.CodeType, why: str, device: str) -> None:
    """Called when the callback marks a frame to run in Python."""
    if SINKS:
        _add(code, EntryRecord("skip", why, device, "", [], b""))


def _add(code: types.CodeType, rec: EntryRecord) -> None:
    key = codec.code_key(code)
    with _lock:
        STATS["entries_recorded"] += 1
        for s in list(SINKS):
            s.add(key, rec)
    log("aot", "%s: %s entry %s recorded (%s)", code.co_qualname, rec.kind, rec.label, key)


# -- the artifact payload ----------------------------------------------------------


def pack(frames: dict[str, list[EntryRecord]]) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The manifest's `frames` table and the files it names."""
    table: dict[str, list[dict[str, Any]]] = {}
    files: dict[str, bytes] = {}
    n = 0
    for key, recs in frames.items():
        rows = []
        for rec in recs:
            gir = f"graphs/{n}.gir" if rec.gir else ""
            obj = f"objects/{n}.pkl" if rec.objects else ""
            if gir:
                files[gir] = rec.gir.encode()
            if obj:
                files[obj] = rec.objects
            rows.append(rec.manifest(gir, obj))
            n += 1
        table[key] = rows
    return table, files


def unpack(art: artifact.Artifact, where: str) -> dict[str, list[EntryRecord]]:
    try:
        manifest = art.json("manifest.json")
        out: dict[str, list[EntryRecord]] = {}
        for key, rows in manifest["frames"].items():
            out[key] = [EntryRecord(r["kind"], r["label"], r["device"],
                                    art.files[r["gir"]].decode() if r["gir"] else "",
                                    [int(i) for i in r["inputs"]],
                                    art.files[r["objects"]] if r["objects"] else b"") for r in rows]
            for r in out[key]:
                if r.kind not in ("graph", "code", "skip"):
                    raise ValueError(f"unknown entry kind {r.kind!r}")
        return out
    except (KeyError, ValueError, TypeError) as e:
        raise ArtifactError(f"xacc.load: {where}: malformed manifest ({type(e).__name__}: {e})") from None


# -- installing ------------------------------------------------------------------


def _builtins(func: types.FunctionType) -> dict:
    b = func.__globals__.get("__builtins__", __builtins__)
    return b if isinstance(b, dict) else b.__dict__


def _build(rec: EntryRecord, func: types.FunctionType) -> tuple[Any, Any, tuple]:
    import marshal

    tree_dump, consts, rest = codec.decode(rec.objects)
    consts = tuple(consts)
    tree = codec.rebuild_tree(tree_dump)
    if rec.kind == "graph":
        graph = C.compile_gir(rec.gir, "", f"<aot {rec.label}>", rec.device, False)
        return C.graph_entry(tree, consts, graph, list(rec.inputs), rest, rec.label), tree, consts
    # A graph break: rebuild the break function around this process's frame.
    bcode_bytes, specs = rest
    bcode = marshal.loads(bcode_bytes)
    code = func.__code__
    info = C.resume_info(code)
    orig = info[0] if info else code  # resume functions of resume frames continue the original
    cs = list(bcode.co_consts)
    for i, spec in specs.items():
        if spec[0] == "graph":
            graph = C.compile_gir(rec.gir, "", f"<aot {rec.label}>", rec.device, False)
            cs[i] = C.GraphFunction(graph, tree, list(rec.inputs), consts)
        elif spec[0] == "resume":
            rcode = marshal.loads(spec[1])
            C.register_resume(rcode, orig, spec[2])
            cs[i] = rcode  # made into a function by the break function (MAKE_FUNCTION)
        else:
            cs[i] = spec[1]
    # Code only: the hook makes the break function per call with the frame's
    # globals and closure (Note [Generated code holds no globals]).
    bcode = bcode.replace(co_consts=tuple(cs))
    C.mark_skip(bcode)
    return C.code_entry(tree, consts, bcode, rec.label), tree, consts


def install(func: types.FunctionType, args: tuple) -> bool:
    """Installs the stored entries of `func`'s code object (first miss only);
    True when one of them passes its guards for this call."""
    code = func.__code__
    with _lock:
        if not SOURCES or code in _consulted:
            return False
        _consulted.add(code)
        t0 = time.perf_counter()
        try:
            return _install(func, code, args)
        finally:
            STATS["install_seconds_us"] += int((time.perf_counter() - t0) * 1e6)


def _install(func: types.FunctionType, code: types.CodeType, args: tuple) -> bool:
    key = codec.code_key(code)
    debug("aot", "looking up %s", key)
    recs, src = None, None
    for s in SOURCES:
        recs = s.records(key)
        if recs:
            src = s
            break
    if not recs:
        return False
    if recs[0].kind == "skip":
        # The frame ran in Python in the run that stored this: no translation now either.
        C.mark_skip(code)
        STATS["frames_installed"] += 1
        log("aot", "%s (%s:%d): runs in Python (stored: %s)", code.co_qualname, code.co_filename,
            code.co_firstlineno, recs[0].label)
        return True
    built = []
    for rec in recs:
        if rec.kind == "skip":
            continue
        try:
            built.append(_build(rec, func))
        except codec.Unresolvable as e:
            STATS["entries_unresolvable"] += 1
            log("aot", "%s: stored entry %s not used: %s does not exist in this process", code.co_qualname,
                rec.label, e)
        except Exception as e:  # noqa: BLE001 - a stored entry never breaks the program
            STATS["entries_unresolvable"] += 1
            log("aot", "%s: stored entry %s not used: %s: %s", code.co_qualname, rec.label,
                type(e).__name__, e)
    for entry, _tree, _consts in built:
        C.add_entry(code, entry)
    STATS["frames_installed"] += 1
    STATS["entries_installed"] += len(built)
    why = []
    for entry, tree, consts in built:
        ok, reason = tree.check(args, func.__globals__, _builtins(func), func.__closure__, consts)
        if ok:
            log("aot", "%s (%s:%d): %d stored entries installed from %s; no capture", code.co_qualname,
                code.co_filename, code.co_firstlineno, len(built), src.name)
            return True
        why.append(f"{entry.info['label']}: {reason}")
    STATS["guard_mismatches"] += 1
    log("aot", "%s (%s:%d): guard mismatch on the %d stored entries from %s (%s); compiling with the JIT",
        code.co_qualname, code.co_filename, code.co_firstlineno, len(built), src.name, "; ".join(why))
    return False


def forget() -> None:
    """Forgets which code objects were consulted (after xacc.jit.reset())."""
    with _lock:
        _consulted.clear()


# -- sources and sinks --------------------------------------------------------------


class MemorySink(Sink):
    def __init__(self) -> None:
        self.frames: dict[str, list[EntryRecord]] = {}

    def add(self, key: str, rec: EntryRecord) -> None:
        self.frames.setdefault(key, []).append(rec)


class ArtifactSource(Source):
    def __init__(self, name: str, frames: dict[str, list[EntryRecord]]) -> None:
        self.name = name
        self.frames = frames

    def records(self, key: str) -> list[EntryRecord] | None:
        return self.frames.get(key)


class CacheDir(Source, Sink):
    """`python -m xjit --cache DIR`: one small artifact per code object and
    device under DIR/frames, kernels under DIR/kernels (the MLIR disk cache)."""

    def __init__(self, root: str, device: str, limit: int) -> None:
        self.root = os.path.abspath(root)
        self.name = self.root
        self.device = device
        self.limit = limit
        self.frames: dict[str, list[EntryRecord]] = {}
        self.writable = True  # False after a write failed (one warning)

    def _path(self, key: str) -> str:
        h = hashlib.sha256(f"{key}|{self.device}".encode()).hexdigest()[:32]
        return os.path.join(self.root, "frames", h + ".xacc")

    def records(self, key: str) -> list[EntryRecord] | None:
        path = self._path(key)
        if not os.path.exists(path):
            return None
        try:
            art = artifact.read(path)
            frames = unpack(art, path)
            if art.meta.get("key") != key or art.meta.get("device") != self.device:
                raise ArtifactError(f"{path}: written for {art.meta.get('key')} on {art.meta.get('device')}")
        except ArtifactError as e:
            # Corrupted, truncated, from other versions or another key: never used, and
            # deleted (this process writes the frame's entries again).
            with contextlib.suppress(OSError):
                os.unlink(path)
            log("aot", "cache file ignored and deleted: %s", e)
            return None
        recs = frames.get(key, [])
        self.frames[key] = list(recs)
        return recs

    def add(self, key: str, rec: EntryRecord) -> None:
        recs = self.frames.setdefault(key, [])
        recs.append(rec)
        del recs[:-self.limit]
        if not self.writable:
            return
        table, files = pack({key: recs})
        files["manifest.json"] = _json({"kind": "cache", "frames": table, "kernels": []})
        path = self._path(key)
        try:
            artifact.write(path, {"kind": "cache", "key": key, "device": self.device}, files)
        except ArtifactError as e:
            # A full disk or a read-only directory: the program goes on without storing.
            self.writable = False
            warnings.warn(f"xacc: {e}; captured entries are not stored in {self.root} for the rest of this "
                          "process", CacheWarning, stacklevel=2)
            return
        log("aot", "cache: %d entries of %s written to %s", len(recs), key, path)


def _json(obj: Any) -> bytes:
    import json

    return json.dumps(obj, indent=1, sort_keys=True).encode()


def add_source(s: Source) -> None:
    with _lock:
        SOURCES.insert(0, s)
        _consulted.clear()  # code objects that missed before may have entries now


def open_sink(s: Sink) -> Callable[[], None]:
    with _lock:
        SINKS.append(s)

    def close() -> None:
        with _lock:
            if s in SINKS:
                SINKS.remove(s)

    return close
