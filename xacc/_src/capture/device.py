"""Device erasure for scripts run under `python -m xjit`: a TorchFunctionMode
that rewrites every device a script names (`.cuda()`, `.to("cuda")`,
`device="cuda:1"` on factories, `torch.device` arguments) to the capture
target, so programs written for CUDA run unchanged on the CPU/xpu target.
Captured graphs need no rewriting: the translator records devices as the
target (see recorder.py)."""

from __future__ import annotations

from typing import Any

import torch
from torch.overrides import TorchFunctionMode

_CUDA_NOOPS = ("synchronize", "empty_cache", "reset_peak_memory_stats")


def _is_foreign(d: Any) -> bool:
    if isinstance(d, torch.device):
        return d.type not in ("cpu", "meta")
    if isinstance(d, str):
        return d.split(":")[0] in ("cuda", "xpu", "mps", "hip")
    return False


class EraseDevice(TorchFunctionMode):
    def __init__(self, target: str = "cpu") -> None:
        super().__init__()
        self.target = torch.device(target)

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: D105
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name in ("cuda", "xpu") and args and isinstance(args[0], torch.Tensor):
            return args[0].to(self.target)
        if "device" in kwargs and _is_foreign(kwargs["device"]):
            kwargs["device"] = self.target
        if name == "to":
            args = tuple(self.target if _is_foreign(a) else a for a in args)
        elif name in ("device",) and args and _is_foreign(args[0]):
            args = (self.target,) + tuple(args[1:])
        return func(*args, **kwargs)


def install(target: str = "cpu") -> EraseDevice:
    """Pushes the erasure mode for the rest of the program and neutralises
    torch.cuda calls that would fail without a GPU."""
    mode = EraseDevice("cpu" if target.startswith("xpu") else target)
    mode.__enter__()
    for n in _CUDA_NOOPS:
        if hasattr(torch.cuda, n):
            setattr(torch.cuda, n, lambda *a, **k: None)
    from xacc._src.capture import device_dist
    device_dist.install()  # nccl -> gloo, DDP device_ids, set_device (Note [Distributed erasure])
    return mode


def backend_of(device: str) -> dict | None:
    """The backend registered for `device`'s target (Note [Backend interface]):
    a dict of target, name, description and capabilities (native_code,
    profiles), or None when no backend serves it."""
    from xacc._C import capture as _C
    target = device.rstrip("0123456789")
    if target != "cpu":
        _C.device_available(device)  # imports a lazily loaded backend (Note [Lazy backend modules])
    return next((b for b in _C.backends() if b["target"] == target), None)


def backend_profiles(device: str) -> bool:
    """Whether `device`'s backend times regions for profile-guided optimization."""
    b = backend_of(device)
    return bool(b and b["profiles"])


def check_device(device: str) -> None:
    """Raises BackendError unless captured graphs can run on `device`: 'cpu'
    (the ATen executor) or 'xpuN' (the MLIR backend, when this build has it)."""
    from xacc._C import capture as _C
    from xacc.errors import BackendError
    if device != "cpu" and not (device.startswith("xpu") and device[3:].isdigit() or device == "xpu"):
        raise BackendError(f"xacc.jit: unknown device {device!r} (expected 'cpu' or 'xpuN')")
    try:
        available = _C.device_available(device)  # the first xpu device imports xacc._C_xpu
    except ImportError as e:
        raise BackendError(f"xacc.jit: device {device!r} is not available: its backend module failed to "
                           f"load ({e})") from None
    if not available:
        raise BackendError(f"xacc.jit: device {device!r} is not available: this build of xacc._C has no "
                           "MLIR backend (configure with XACC_WITH_MLIR=ON)")
