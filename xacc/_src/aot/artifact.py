"""The artifact container (format described in docs/aot.md).

    MAGIC (8 bytes) | header length (u32, little endian) | header (JSON, UTF-8) | payload (zip)

The header carries the metadata (format, xacc, torch and Python versions, the
bytecode magic number, device, kind, payload size) and `sha256`, the hash of
the header's other fields (canonical JSON) followed by the payload, so a
changed byte anywhere is detected. Reading checks, in order: the magic, that
the file is as long as the header says, the hash, then the versions; each
failure raises ArtifactError naming the file and what is wrong. Nothing in a
file is used before every check passed. Writing is atomic (write_atomic: a
temporary file, fsync, rename), so a crash or a full disk never leaves a
partial artifact under the final name.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import itertools
import json
import os
import platform
import struct
import zipfile
from dataclasses import dataclass, field
from typing import Any

import torch

from xacc.errors import ArtifactError

MAGIC = b"XACCAOT\x04"
FORMAT = 4  # 2: guard trees carry their dim guards; 3: identity, key-order and autocast guards;
# 4: a guard source may read type(x) and a class's MRO (kinds "Y" and "M", Note [Guard reads of the type])


def environment() -> dict[str, str]:
    """The versions an artifact must match to be loaded."""
    import xacc

    return {
        "xacc": xacc.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "python_bytecode": importlib.util.MAGIC_NUMBER.hex(),
        "machine": platform.machine(),
    }


@dataclass
class Artifact:
    """An artifact's metadata and its files (name -> bytes)."""

    meta: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)

    def json(self, name: str) -> Any:
        return json.loads(self.files[name].decode())


def _digest(meta: dict[str, Any], payload: bytes) -> str:
    fields = {k: v for k, v in meta.items() if k != "sha256"}
    h = hashlib.sha256(json.dumps(fields, sort_keys=True).encode())
    h.update(b"\n")
    h.update(payload)
    return h.hexdigest()


def dumps(meta: dict[str, Any], files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, files[name])
    payload = buf.getvalue()
    meta = dict(meta, format=FORMAT, payload_bytes=len(payload), **environment())
    meta["sha256"] = _digest(meta, payload)
    header = json.dumps(meta, sort_keys=True).encode()
    return MAGIC + struct.pack("<I", len(header)) + header + payload


_seq = itertools.count()


def write_atomic(path: str, data: bytes) -> None:
    """Writes `data` to `path` so that a reader sees the old file, the whole new
    one, or none: a temporary file in the same directory (unique per process and
    call), fsync, rename over `path`, fsync of the directory. Raises OSError
    (ENOSPC, EACCES, EROFS...) with the temporary file removed."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{os.path.basename(path)}.tmp{os.getpid()}.{next(_seq)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself reaches the disk
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def write(path: str, meta: dict[str, Any], files: dict[str, bytes]) -> int:
    """Writes atomically (write_atomic); returns the size. ArtifactError when the
    file cannot be written (nothing is left behind)."""
    data = dumps(meta, files)
    try:
        write_atomic(path, data)
    except OSError as e:
        raise ArtifactError(f"cannot write {path}: {e.strerror or e}") from None
    return len(data)


def read(path: str) -> Artifact:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ArtifactError(f"xacc.load: cannot read {path}: {e.strerror or e}") from None
    return loads(data, path)


def loads(data: bytes, path: str = "<bytes>") -> Artifact:
    def bad(why: str) -> ArtifactError:
        return ArtifactError(f"xacc.load: {path}: {why}; refusing to load it")

    if len(data) < len(MAGIC) + 4:
        if MAGIC.startswith(data[: len(MAGIC)]):
            raise bad(f"truncated: {len(data)} bytes, shorter than the artifact header")
        raise bad("not an xacc artifact (bad magic bytes)")
    if data[: len(MAGIC)] != MAGIC:
        if data[:7] == MAGIC[:7]:
            raise bad(f"artifact format {data[7]} is not the format this xacc reads ({MAGIC[7]})")
        raise bad("not an xacc artifact (bad magic bytes)")
    (hlen,) = struct.unpack_from("<I", data, len(MAGIC))
    start = len(MAGIC) + 4
    if start + hlen > len(data):
        raise bad(f"truncated: the header says {hlen} header bytes, the file has {len(data) - start}")
    try:
        meta = json.loads(data[start:start + hlen].decode())
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except (UnicodeDecodeError, ValueError) as e:
        raise bad(f"corrupted header ({e})") from None
    payload = data[start + hlen:]
    want = meta.get("payload_bytes")
    if not isinstance(want, int):
        raise bad("corrupted header (no payload size)")
    if len(payload) < want:
        raise bad(f"truncated: the header says {want} payload bytes, the file has {len(payload)}")
    if len(payload) > want:
        raise bad(f"{len(payload) - want} unexpected bytes after the payload")
    if _digest(meta, payload) != meta.get("sha256"):
        raise bad("content hash mismatch (sha256): the file was modified or corrupted")
    env = environment()
    for k, what in (("xacc", "xacc"), ("torch", "torch"), ("python", "Python"),
                    ("python_bytecode", "Python bytecode magic"), ("machine", "machine")):
        if meta.get(k) != env[k]:
            raise ArtifactError(f"xacc.load: {path}: built by {what} {meta.get(k)}, this process runs {what} "
                                f"{env[k]}; rebuild the artifact with xacc.aot in this environment")
    try:
        with zipfile.ZipFile(io.BytesIO(payload)) as z:
            files = {n: z.read(n) for n in z.namelist()}
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise bad(f"corrupted payload ({e})") from None
    return Artifact(meta, files)


__all__ = ["Artifact", "dumps", "loads", "read", "write", "write_atomic", "environment", "MAGIC", "FORMAT"]
