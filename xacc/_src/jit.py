"""`xacc.jit` (re-exported by xacc/jit.py): capture PyTorch functions and
modules with the XJIT frame hook.

    @xacc.jit
    def f(x, y): ...

    model = xacc.jit(MyModel())          # nn.Module: calls go through the hook
    f = xacc.jit(f, fullgraph=True)      # graph breaks raise xacc.Unsupported

While a jitted callable runs, every Python frame it calls is eligible for
capture (library frames are skipped); each frame gets its own per-code cache
of graphs guarded on its inputs. Anything that cannot be captured runs in
plain Python, so results are always those of eager PyTorch.
"""

from __future__ import annotations

import functools
import gc
from typing import Any, Callable, TypeVar

import torch

from xacc._C import capture as _C
from xacc._src.capture import convert as _convert
from xacc._src.capture.config import RECOMPILE_LIMIT
from xacc._src.capture.device import check_device  # noqa: F401 - part of this module's API
from xacc._src.config import check_jit_options

F = TypeVar("F", bound=Callable[..., Any])
_installed = False


def _ensure_installed() -> None:
    global _installed
    if not _installed:
        _C.register_aten()
        _C.set_recompile_limit(RECOMPILE_LIMIT)
        _C.set_callback(_convert.callback)
        _C.install()
        gc.callbacks.append(_C.gc_callback)  # Note [Resume registry sweep]
        _installed = True


class _Capture:
    """Context manager: capture (Compile state) with `opts` on this thread."""

    __slots__ = ("opts", "prev")

    def __init__(self, opts: _convert.Options) -> None:
        self.opts = opts

    def __enter__(self) -> None:
        _convert.push_options(self.opts)
        self.prev = _C.set_state(2)

    def __exit__(self, *exc: object) -> None:
        _C.set_state(self.prev)
        _convert.pop_options()


class CompiledModule(torch.nn.Module):
    """An nn.Module whose calls run under the capture hook."""

    def __init__(self, mod: torch.nn.Module, opts: _convert.Options) -> None:
        super().__init__()
        self._orig_mod = mod
        self._xacc_opts = opts

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        opts = self._xacc_opts
        _convert.push_options(opts)
        prev = _C.set_state(2)
        try:
            return self._orig_mod(*args, **kwargs)
        finally:
            _C.set_state(prev)
            _convert.pop_options()


def jit(fn: Any = None, *, device: str = "cpu", backend: str | None = None, fullgraph: bool = False,
        dynamic: bool | None = None, precision: str = "float32", tolerance: float = 1e-2,
        pgo: Any = None, hot_calls: int = 1) -> Any:
    """Captures `fn` (a function or an nn.Module); usable as `@jit` or `@jit(...)`.

    hot_calls=N translates each frame at its N-th call and runs the earlier
    calls as plain Python (Note [Hot frames]; `python -m xjit` uses 2).

    precision="auto" runs matmul/linear/conv regions in bfloat16 where the error
    against float32, measured on the first call's inputs, stays within
    `tolerance` (docs/mixed-precision.md; `xacc.precision_report(fn)`).
    `pgo`: True, a profile path or xacc.pgo.Config: profile-guided optimization
    (record a profile, or compile with one; docs/pgo.md).
    `backend`: None (the device's: 'aten' for cpu, 'mlir' for xpuN) or that name.
    A value that is not allowed raises xacc.ConfigError (xacc/_src/config.py)."""
    check_jit_options(device=device, backend=backend, fullgraph=fullgraph, dynamic=dynamic, precision=precision,
                      tolerance=tolerance, hot_calls=hot_calls)
    if fn is None:
        return lambda f: jit(f, device=device, backend=backend, fullgraph=fullgraph, dynamic=dynamic,
                             precision=precision, tolerance=tolerance, pgo=pgo, hot_calls=hot_calls)
    from xacc._src.amp import check_options
    from xacc._src.pgo.session import resolve as _resolve_pgo
    check_options(precision, tolerance)
    check_device(device)
    _ensure_installed()
    opts = _convert.Options(device=device, backend=backend, fullgraph=fullgraph, dynamic=dynamic,
                            precision=precision, tolerance=float(tolerance), pgo=_resolve_pgo(pgo),
                            hot_calls=hot_calls)
    if isinstance(fn, torch.nn.Module):
        return CompiledModule(fn, opts)
    if not callable(fn):
        raise TypeError(f"xacc.jit expects a function or nn.Module, got {type(fn).__name__}")
    push, pop, set_state = _convert.push_options, _convert.pop_options, _C.set_state

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        push(opts)
        prev = set_state(2)
        try:
            return fn(*args, **kwargs)
        finally:
            set_state(prev)
            pop()

    wrapper._xacc_fn = fn  # type: ignore[attr-defined]
    wrapper._xacc_opts = opts  # type: ignore[attr-defined]
    return wrapper


def capture(device: str = "cpu", fullgraph: bool = False) -> _Capture:
    """`with xacc.jit.capture(): ...` captures every frame called inside the block."""
    check_jit_options(device=device, fullgraph=fullgraph)
    check_device(device)
    _ensure_installed()
    return _Capture(_convert.Options(device=device, fullgraph=fullgraph))


def reset() -> None:
    """Forgets every cache entry and counter (tests, benchmarks)."""
    _C.clear_all()
    _C.reset_stats()
    _convert.EVENTS.clear()
    _convert.dynamic.reset()
    _convert.hotness.clear()
    _convert.aot_store.forget()
    for k in _convert.COUNTERS:
        _convert.COUNTERS[k] = 0
    _convert.training.reset()


def counters() -> dict[str, int]:
    """Frames compiled, graphs, breaks, recompiles, skipped frames, internal errors,
    capture time (µs), training graphs (compiled backward) and their runs, plus
    the hook's cache hits and misses. A resume function or loop body compiled
    again for a size change its frame already made dynamic counts as a
    `dynamic_followups`, not a recompile (Note [Fragment groups] in dynamic.py)."""
    out = dict(_convert.COUNTERS)
    out.update(_convert.training.counters())
    out.update({f"hook_{k}": v for k, v in _C.stats().items()})
    return out


__all__ = ["jit", "capture", "reset", "counters", "CompiledModule"]
