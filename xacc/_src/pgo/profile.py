"""The PGO profile file: reading (with validation), writing, merging.

A profile is one JSON object (schema in docs/pgo.md):

    {"format": "xacc-pgo", "version": 1, "xacc_version": ..., "torch_version": ...,
     "frames": {"<file>:<qualname>:<firstlineno>": {frame record}}, "extra": {...}}

Frames are keyed by their code object's file, qualified name and first line, so a
key survives processes; each frame record holds its graphs, keyed by a hash of
their GIR text. Nothing here decides anything (decisions.py does) or records
anything (recorder.py does).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
import types
from hashlib import sha1
from typing import Any

from xacc.errors import XaccError

FORMAT = "xacc-pgo"
VERSION = 1


class ProfileError(XaccError):
    """A PGO profile file that cannot be used: unreadable, not JSON, or not the
    documented schema. The message starts with the file name."""


def code_file(code: types.CodeType) -> str:
    """The code's file as a real absolute path (the same whatever the working
    directory or the spelling of the path it was run by); "<...>" names unchanged."""
    f = code.co_filename
    return f if f.startswith("<") else os.path.realpath(f)


def code_key(code: types.CodeType) -> str:
    """The stable key of a frame: "<file>:<qualname>:<firstlineno>" (file: code_file)."""
    return f"{code_file(code)}:{code.co_qualname}:{code.co_firstlineno}"


def graph_hash(gir: str) -> str:
    """The key of a graph inside its frame record: 12 hex digits of the GIR text's SHA-1."""
    return sha1(gir.encode()).hexdigest()[:12]


def empty_profile() -> dict:
    import torch

    import xacc
    return {"format": FORMAT, "version": VERSION, "xacc_version": xacc.__version__,
            "torch_version": torch.__version__, "written": "", "frames": {}, "extra": {}}


# -- validation --------------------------------------------------------------------

_NUM = (int, float)


def _expect(path: str, where: str, v: Any, types_: Any, what: str) -> None:
    if isinstance(v, bool) and bool not in (types_ if isinstance(types_, tuple) else (types_,)):
        raise ProfileError(f"{path}: {where}: expected {what}, got {json.dumps(v)}")
    if not isinstance(v, types_):
        shown = json.dumps(v) if not isinstance(v, (dict, list)) else type(v).__name__
        raise ProfileError(f"{path}: {where}: expected {what}, got {shown}")


def _check_samples(path: str, where: str, s: Any) -> None:
    _expect(path, where, s, dict, "an object")
    for k in ("runs", "total_s", "median_s", "min_s"):
        if k in s:
            _expect(path, f"{where}.{k}", s[k], _NUM, "a number")


def validate(data: Any, path: str) -> dict:
    """Raises ProfileError (naming `path` and the offending field) unless `data`
    follows the schema of docs/pgo.md; returns it."""
    _expect(path, "top level", data, dict, "a JSON object")
    if data.get("format") != FORMAT:
        raise ProfileError(f"{path}: not an xacc PGO profile (\"format\" is {json.dumps(data.get('format'))}, "
                           f"expected \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise ProfileError(f"{path}: profile version {json.dumps(data.get('version'))} is not supported "
                           f"(this xacc reads version {VERSION}); record a new profile")
    frames = data.get("frames", {})
    _expect(path, "frames", frames, dict, "an object")
    for fk, fr in frames.items():
        w = f"frames[{json.dumps(fk)}]"
        _expect(path, w, fr, dict, "an object")
        for k in ("calls", "compiles", "recompiles", "firstlineno"):
            if k in fr:
                _expect(path, f"{w}.{k}", fr[k], int, "an integer")
        if "dynamic_failed" in fr:
            _expect(path, f"{w}.dynamic_failed", fr["dynamic_failed"], bool, "true or false")
        graphs = fr.get("graphs", {})
        _expect(path, f"{w}.graphs", graphs, dict, "an object")
        for gk, g in graphs.items():
            gw = f"{w}.graphs[{json.dumps(gk)}]"
            _expect(path, gw, g, dict, "an object")
            for k in ("calls", "ops", "entry"):
                if k in g:
                    _expect(path, f"{gw}.{k}", g[k], int, "an integer")
            for k in ("compile_s",):
                if k in g:
                    _expect(path, f"{gw}.{k}", g[k], _NUM, "a number")
            if "run" in g:
                _check_samples(path, f"{gw}.run", g["run"])
            for i, inp in enumerate(g.get("inputs", [])):
                iw = f"{gw}.inputs[{i}]"
                _expect(path, iw, inp, dict, "an object")
                _expect(path, f"{iw}.name", inp.get("name"), str, "a string")
                for j, shp in enumerate(inp.get("shapes", [])):
                    _expect(path, f"{iw}.shapes[{j}]", shp, list, "a list of sizes")
                    for d in shp:
                        _expect(path, f"{iw}.shapes[{j}]", d, int, "a list of integer sizes")
            for i, r in enumerate(g.get("regions", [])):
                rw = f"{gw}.regions[{i}]"
                _expect(path, rw, r, dict, "an object")
                _expect(path, f"{rw}.key", r.get("key"), str, "a string")
                for k in ("kernel", "aten"):
                    if k in r:
                        _check_samples(path, f"{rw}.{k}", r[k])
    _expect(path, "extra", data.get("extra", {}), dict, "an object")
    return data


def load(path: str | os.PathLike) -> dict:
    """Reads and validates a profile; ProfileError (with the file name, and the
    line and column of a JSON syntax error) when it cannot be used."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ProfileError(f"{path}: cannot read the PGO profile: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ProfileError(f"{path}: not a text file ({e.reason} at byte {e.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ProfileError(f"{path}:{e.lineno}:{e.colno}: not valid JSON: {e.msg}") from None
    return validate(data, path)


_FLAT_LIST = re.compile(r"\[\s+([^\[\]{}\"]*|(?:\s*\"[^\"]*\",?)*)\s+\]")


def dumps(data: dict) -> str:
    """Indented JSON with lists of numbers or strings kept on one line."""
    text = json.dumps(data, indent=1)
    return _FLAT_LIST.sub(lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n"


def save(data: dict, path: str | os.PathLike) -> None:
    """Writes atomically (a temporary file renamed over `path`)."""
    path = os.fspath(path)
    data["written"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".pgo-", suffix=".json", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(dumps(data))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def merge(old: dict | None, new_frames: dict, extra: dict | None = None) -> dict:
    """`old` with every frame recorded in this run replaced by its new record
    (frames this run did not see are kept, so one file can serve many programs)."""
    out = empty_profile()
    if old:
        out["frames"].update(old.get("frames", {}))
        out["extra"].update(old.get("extra", {}))
    out["frames"].update(new_frames)
    if extra:
        out["extra"].update(extra)
    return out
