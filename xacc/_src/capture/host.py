"""The Python side of the C++ translator (xacc._C.capture.translate): what it
needs observed in Python. Tensor inputs become meta twins bound to graph
inputs (with tensor guards on their guard-tree node), torch calls run on metas
under the recorder's dispatch mode (recorder.py), and the recorder answers
which graph value a meta is bound to. Everything else — decoding, symbolic
execution, trackers, guards on non-tensor values, inlining — is C++."""

from __future__ import annotations

from typing import Any

import torch

from xacc._src.capture import trackers as T
from xacc._src.capture.breaks import GraphBreak
from xacc._src.capture.recorder import meta_like, tensor_type


class Host:
    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def tensor_input(self, t: torch.Tensor, node: int, guard: bool) -> torch.Tensor:
        ctx = self.ctx
        if type(t) not in (torch.Tensor, torch.nn.Parameter):
            raise GraphBreak("GB011", f"tensor subclass {type(t).__name__}")
        if t.is_sparse or t.layout != torch.strided:
            raise GraphBreak("GB011", "non-strided tensor")
        if node < 0:
            node = ctx.node(T.Source("K", ctx.const_index(t)))
        if guard:
            ctx.tree.leaf_tensor(node, t, [])
        vid = ctx.builder.add_input(tensor_type(t, ctx.device), f"in{len(ctx.inputs)}")
        ctx.inputs.append(node)
        ctx.input_vids.add(vid)
        meta = meta_like(t)
        ctx.rec.bind(meta, vid)
        return meta

    def record(self, fn: Any, args: tuple, kwargs: dict | None, file: str | None, line: int) -> Any:
        rec = self.ctx.rec
        rec.loc = (file or "<unknown>", line)
        return rec.call(fn, args, kwargs or {})

    def value_of(self, meta: torch.Tensor) -> int:
        return self.ctx.rec.vid_of(meta)

    def set_grad(self, enabled: bool) -> None:
        self.ctx.set_grad(bool(enabled))

    def const_index(self, obj: Any) -> int:
        return self.ctx.const_index(obj)
