"""Device erasure for torch.distributed (issue 25): a script written for CUDA
and NCCL -- `torch.cuda.set_device(rank)`, `init_process_group("nccl")`,
`DDP(model, device_ids=[rank], output_device=rank)` -- runs on the CPU target
over gloo. device.py's TorchFunctionMode moves tensors (`.cuda(rank)`,
`.to(f"cuda:{rank}")`); the calls here are not torch functions, so they are
wrapped in place, once, when `python -m xjit` (or a worker it started, see
xjit/child.py) installs erasure.

Note [Distributed erasure]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Every rewrite keeps what the script's logic can observe:

* the backend: "nccl" (alone or inside a "cuda:nccl,cpu:gloo" list) becomes
  "gloo", the collective library that serves CPU tensors; `device_id=` (a CUDA
  device the group binds to) is dropped. Ranks, world size, store and timeout
  are passed through unchanged, so rendezvous works as written.
* `torch.cuda.set_device(i)` records i; `torch.cuda.current_device()` returns
  it (0 before any call), so `device = torch.cuda.current_device()` followed
  by `.cuda(device)` still names the rank's device (which erasure maps to the
  target).
* DDP's `device_ids`/`output_device` select a GPU for single-device modules;
  DDP rejects them for CPU modules. They are dropped when every parameter of
  the module is on the CPU (after erasure, the module is), which is what the
  CPU version of the script passes.
* `torch.cuda.device_count()` and `torch.cuda.is_available()` are left alone:
  a script that sizes its world from them sees the CPU machine as it is.

Each rewrite is counted in ERASED (what -> count); `python -m xjit` prints the
counts in its summary, so the report says what was changed."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

import torch

# "what was rewritten" -> times, in the order first seen (the summary lists them).
ERASED: Counter = Counter()
# Rank this process joined the default group as (init_process_group), for the
# per-rank summary after the script destroyed its group.
STATE: dict[str, Any] = {"rank": None, "device": 0}


def _backend(backend: Any) -> Any:
    if isinstance(backend, str) and "nccl" in backend.lower():
        ERASED[f"process group backend {backend!r} -> 'gloo'"] += 1
        return "gloo"
    return backend


def _wrap_group_maker(fn: Any, backend_pos: int) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        args = list(args)
        if len(args) > backend_pos:
            args[backend_pos] = _backend(args[backend_pos])
        elif "backend" in kwargs:
            kwargs["backend"] = _backend(kwargs["backend"])
        if kwargs.get("device_id") is not None:
            ERASED[f"{fn.__name__}(device_id={kwargs['device_id']!r}) dropped"] += 1
            kwargs["device_id"] = None
        out = fn(*args, **kwargs)
        if fn.__name__ == "init_process_group":
            import torch.distributed as dist
            STATE["rank"] = dist.get_rank()
        return out
    wrapper.__xacc_erased__ = fn
    return wrapper


def _set_device(device: Any) -> None:
    idx = device.index if isinstance(device, torch.device) else device
    if isinstance(idx, str):
        idx = torch.device(idx).index
    STATE["device"] = int(idx or 0)
    ERASED["torch.cuda.set_device(...) ignored (the target has one device)"] += 1


def _current_device() -> int:
    return STATE["device"]


def _wrap_ddp_init(init: Any) -> Any:
    @functools.wraps(init)
    def __init__(self: Any, module: Any, device_ids: Any = None, output_device: Any = None,
                 *args: Any, **kwargs: Any) -> None:
        if device_ids is not None or output_device is not None:
            if all(p.device.type == "cpu" for p in module.parameters()):
                ERASED["DistributedDataParallel(device_ids=..., output_device=...) dropped for a CPU module"] += 1
                device_ids = output_device = None
        init(self, module, device_ids, output_device, *args, **kwargs)
    __init__.__xacc_erased__ = init
    return __init__


def install() -> None:
    """Wraps the distributed entry points (idempotent). Called by device.install
    for every target: all of them run on the CPU's collective library."""
    if not torch.distributed.is_available():
        return
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d
    from torch.nn.parallel import DistributedDataParallel as DDP

    for name, pos in (("init_process_group", 0), ("new_group", 2)):
        fn = getattr(c10d, name)
        if hasattr(fn, "__xacc_erased__"):
            continue
        w = _wrap_group_maker(fn, pos)
        setattr(c10d, name, w)
        setattr(dist, name, w)
    if not hasattr(DDP.__init__, "__xacc_erased__"):
        DDP.__init__ = _wrap_ddp_init(DDP.__init__)
    torch.cuda.set_device = _set_device
    torch.cuda.current_device = _current_device


def summary_lines() -> list[str]:
    if not ERASED:
        return []
    return ["device erasure (distributed):"] + [f"  {n:4d}  {what}" for what, n in ERASED.items()]
