"""Which inputs of a graph being captured are parameters that a
DistributedDataParallel module all-reduces in buckets, and its bucket caps: what
the bucket split of its training graph needs (Note [Bucket split] in
csrc/include/xacc/passes/GraphSplit.h; the split runner is training.py's).

The graph is compiled while DDP's forward is running it: DDP.forward (or
`_run_ddp_forward`) is a Python frame further up the stack, whatever captured
the module (xacc.jit on the DDP module, `python -m xjit`, xacc.jit on an inner
module). Its bucketed parameters are those DDP hands its reducer: parameters
that require grad and are not in `parameters_to_ignore`. The caps are DDP's own:
the first bucket's (1 MiB by default) and then the rest's (`bucket_cap_mb`,
25 MiB by default), or the per-bucket list when one was given; DDP rebuilds its
buckets after the first backward in the order gradients become ready, with these
caps, so pieces cut with them line up with the reducer's buckets."""

from __future__ import annotations

import sys
from typing import Any

import torch

try:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as _DDP
    _CODES = {_DDP.forward.__code__, getattr(_DDP, "_run_ddp_forward", _DDP.forward).__code__}
except ImportError:  # pragma: no cover - a torch built without distributed
    _DDP = None
    _CODES = set()

_MAX_DEPTH = 64  # frames looked at above the compile


def calling_ddp() -> Any:
    """The DistributedDataParallel module whose forward is on this thread's stack (innermost), or None."""
    if _DDP is None:
        return None
    f = sys._getframe(1)
    for _ in range(_MAX_DEPTH):
        if f is None:
            return None
        if f.f_code in _CODES:
            self = f.f_locals.get("self")
            if isinstance(self, _DDP):
                return self
        f = f.f_back
    return None


def bucket_caps(ddp: Any) -> list[int]:
    """DDP's bucket caps in bytes, the first bucket's first; the last one repeats."""
    cfg = getattr(ddp, "_bucket_config", None)
    if cfg is not None:
        if cfg.per_bucket_bytes_caps:
            return [int(c) for c in cfg.per_bucket_bytes_caps]
        return [int(min(cfg.first_bucket_bytes_cap, cfg.bucket_bytes_cap)), int(cfg.bucket_bytes_cap)]
    cap = int(ddp.bucket_bytes_cap)
    first = dist._DEFAULT_FIRST_BUCKET_BYTES if getattr(ddp, "bucket_bytes_cap_default", False) else cap
    return [min(int(first), cap), cap]


def bucket_plan(inputs: list[Any]) -> tuple[list[int], list[int]] | None:
    """(bytes per graph input that DDP buckets, 0 for the others; caps) when the
    graph runs inside a DDP forward and reads some of its bucketed parameters."""
    ddp = calling_ddp()
    if ddp is None:
        return None
    ignore = getattr(ddp, "parameters_to_ignore", ()) or ()
    synced = {id(p) for n, p in ddp.module.named_parameters() if p.requires_grad and n not in ignore}
    sizes = [v.numel() * v.element_size() if isinstance(v, torch.Tensor) and id(v) in synced else 0
             for v in inputs]
    if not any(sizes):
        return None
    return sizes, bucket_caps(ddp)
