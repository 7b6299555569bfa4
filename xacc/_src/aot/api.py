"""`xacc.aot`, `xacc.load` and the `python -m xjit --cache DIR` store.

    xacc.aot(model, (x,), "model.xacc", device="xpu0")   # capture + compile now, write one file
    run = xacc.load("model.xacc", model)                  # another process: no capture, no MLIR
    y = run(x)

Parameters are not stored: a module artifact is loaded against a module
instance passed to `load` (the same class, its own parameters), because the
captured graphs read parameters from the module at every call, exactly as a
jitted module does. A function artifact names its function; `load` imports
it by module and qualified name unless the function is passed.
"""

from __future__ import annotations

import atexit
import glob
import importlib
import os
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any

import torch

from xacc._C import capture as C
from xacc._src import jit as _jit
from xacc._src.aot import artifact, store
from xacc._src.config import E, env, log
from xacc.errors import ArtifactError


@dataclass
class AotInfo:
    """What `xacc.aot` wrote."""

    path: str
    bytes: int
    frames: int  # code objects with entries
    entries: int
    kernels: int
    seconds: float  # capture + compile (the example call included)


def _mlir() -> Any:
    """The xpu backend's capture module (xacc._C_xpu) once loaded, else None:
    naming an xpu device to check_device loads it, and a process that never did
    compiles no kernels, so its cache directory does not matter (Note [Lazy
    backend modules] in csrc/python/lazy_modules.cpp)."""
    return sys.modules.get("xacc._C_xpu")


def default_kernel_dir() -> str:
    """Where loaded kernels go: the captured graphs' cache dir if one is set,
    else $XACC_CACHE_DIR, else $XDG_CACHE_HOME/xacc (~/.cache/xacc). An
    artifact's kernels need a directory to be found in, so XACC_CACHE_DIR=off
    (no disk cache for kernels compiled here) still puts them in the default."""
    m = _mlir()
    if m is not None and m.capture_cache_dir():
        return m.capture_cache_dir()
    if env(E.CACHE_DIR) and env(E.CACHE_DIR) != "off":
        return env(E.CACHE_DIR)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "xacc")


def _target_ref(fn: Any) -> dict[str, str]:
    if isinstance(fn, torch.nn.Module):
        t = type(fn)
        return {"kind": "module", "module": t.__module__, "qualname": t.__qualname__}
    f = getattr(fn, "_xacc_fn", fn)
    return {"kind": "function", "module": getattr(f, "__module__", "") or "",
            "qualname": getattr(f, "__qualname__", "") or ""}


def aot(fn: Any, example_inputs: Any, path: str, *, device: str = "cpu", dynamic: bool | None = None) -> AotInfo:
    """Captures `fn` (a function or nn.Module) on `example_inputs` and writes
    one artifact to `path` with every graph entry the call made, their guards,
    and (xpu) the object files of their kernels.

    Capture caches of this process are cleared first so that every frame the
    call reaches is captured anew."""
    _jit.check_device(device)
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    if isinstance(example_inputs, dict):
        args, kwargs = (), dict(example_inputs)
    else:
        args, kwargs = tuple(example_inputs), {}
    target = fn._orig_mod if isinstance(fn, _jit.CompiledModule) else getattr(fn, "_xacc_fn", fn)
    _jit._ensure_installed()
    C.clear_all()
    from xacc._src.capture import convert
    convert.dynamic.reset()
    store.forget()

    mlir = _mlir()
    kdir = tempfile.mkdtemp(prefix="xacc-aot-kernels-")
    atexit.register(shutil.rmtree, kdir, True)
    prev_kdir = mlir.capture_cache_dir() if mlir is not None else ""
    sink = store.MemorySink()
    close = store.open_sink(sink)
    t0 = time.perf_counter()
    try:
        if mlir is not None:
            mlir.set_capture_cache_dir(kdir)
        _jit.jit(target, device=device, dynamic=dynamic)(*args, **kwargs)
    finally:
        close()
        if mlir is not None:
            mlir.set_capture_cache_dir(prev_kdir)
    seconds = time.perf_counter() - t0
    table, files = store.pack(sink.frames)
    kernels = []
    for k in sorted(glob.glob(os.path.join(kdir, "*.so"))):
        name = "kernels/" + os.path.basename(k)
        with open(k, "rb") as f:
            files[name] = f.read()
        kernels.append(name)
    ref = _target_ref(target)
    files["manifest.json"] = store._json({"kind": ref["kind"], "target": ref, "frames": table,
                                          "kernels": kernels})
    meta = {"kind": ref["kind"], "device": device, "target": f"{ref['module']}.{ref['qualname']}",
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    size = artifact.write(path, meta, files)
    n_entries = sum(len(v) for v in sink.frames.values())
    log("aot", "wrote %s: %d frames, %d entries, %d kernels, %d bytes", path, len(sink.frames), n_entries,
        len(kernels), size)
    return AotInfo(path, size, len(sink.frames), n_entries, len(kernels), seconds)


def _install_kernels(art: artifact.Artifact, names: list[str]) -> str:
    """Copies the artifact's object files into the kernel disk cache the
    captured graphs use (see default_kernel_dir); returns the directory."""
    d = default_kernel_dir()
    for n in names:
        dst = os.path.join(d, os.path.basename(n))
        if os.path.exists(dst):
            continue
        # Each file is a kernel cache entry whose header the backend verifies
        # before linking it (Note [Kernel disk cache entries]); written atomically.
        try:
            artifact.write_atomic(dst, art.files[n])
        except OSError as e:
            # Not stored: the graphs compile those kernels instead (same results).
            warnings.warn(f"xacc.load: cannot store the artifact's kernels in {d} ({e.strerror or e}); "
                          "they are compiled instead", store.CacheWarning, stacklevel=3)
            break
    m = _mlir()
    if m is not None and m.capture_cache_dir() != d:
        m.set_capture_cache_dir(d)
    return d


class Loaded:
    """The callable `xacc.load` returns: calls the target under the capture
    hook with the artifact's entries installed."""

    def __init__(self, target: Any, device: str, path: str, info: dict[str, Any]) -> None:
        self.path = path
        self.device = device
        self.info = info
        self._call = _jit.jit(target, device=device)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<xacc.load {self.path} ({self.info['target']['qualname']} on {self.device})>"


def load(path: str, target: Any = None) -> Loaded:
    """Reads and verifies the artifact at `path` and returns a callable that
    runs the stored entries (no capture, no compile) and falls back to the JIT
    where their guards do not hold. Raises xacc.ArtifactError for a file
    that is corrupted, truncated, tampered with or from other versions."""
    t0 = time.perf_counter()
    art = artifact.read(path)
    if art.meta.get("kind") not in ("function", "module"):
        raise ArtifactError(f"xacc.load: {path}: a {art.meta.get('kind')!r} file, not an xacc.aot artifact")
    try:
        manifest = art.json("manifest.json")
        ref = manifest["target"]
        kernels = list(manifest.get("kernels", []))
    except (KeyError, ValueError, TypeError) as e:
        raise ArtifactError(f"xacc.load: {path}: malformed manifest ({type(e).__name__}: {e})") from None
    frames = store.unpack(art, path)
    device = art.meta["device"]
    try:
        _jit.check_device(device)
    except Exception as e:  # BackendError: say which artifact needs it
        raise type(e)(f"xacc.load: {path} was built for {device}: {e}") from None
    if ref["kind"] == "module":
        if not isinstance(target, torch.nn.Module):
            raise ArtifactError(f"xacc.load: {path} holds the compiled forward of a {ref['qualname']} module; "
                                f"pass the module instance whose parameters it runs with: "
                                f"xacc.load(path, model)")
        if type(target).__qualname__ != ref["qualname"]:
            raise ArtifactError(f"xacc.load: {path} was built for a {ref['module']}.{ref['qualname']}, "
                                f"got a {type(target).__module__}.{type(target).__qualname__}")
    elif target is None:
        try:
            obj: Any = importlib.import_module(ref["module"])
            for part in ref["qualname"].split("."):
                obj = getattr(obj, part)
            target = obj
        except (ImportError, AttributeError) as e:
            raise ArtifactError(f"xacc.load: {path}: cannot find the function {ref['module']}.{ref['qualname']} "
                                f"({e}); pass it: xacc.load(path, fn)") from None
    if isinstance(target, _jit.CompiledModule):
        target = target._orig_mod
    target = getattr(target, "_xacc_fn", target)
    if kernels:
        _install_kernels(art, kernels)
    _jit._ensure_installed()
    store.add_source(store.ArtifactSource(os.path.abspath(path), frames))
    log("aot", "loaded %s: %d frames, %d entries, %d kernels (%s %s on %s) in %.1f ms", path, len(frames),
        sum(len(v) for v in frames.values()), len(kernels), ref["kind"], ref["qualname"], device,
        (time.perf_counter() - t0) * 1e3)
    return Loaded(target, device, path, manifest)


def use_cache_dir(root: str, device: str) -> store.CacheDir:
    """`python -m xjit --cache DIR`: entries are read from and written to DIR."""
    from xacc._src.capture.config import RECOMPILE_LIMIT

    _jit.check_device(device)  # loads the backend module of an xpu device
    c = store.CacheDir(root, device, RECOMPILE_LIMIT)
    m = _mlir()
    if m is not None:
        m.set_capture_cache_dir(os.path.join(c.root, "kernels"))
    store.add_source(c)
    store.open_sink(c)
    return c
