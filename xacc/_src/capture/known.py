"""Known tensor values: small integer tensors whose value the capture knows.

Note [Known tensor values]: library code keeps sizes and paddings in 0-d
integer tensors (transformers' EnCodec keeps `stride`, `kernel_size` and
`padding_total` as buffers, computes `extra_padding` from them with torch ops
and `x.shape[-1]`, then uses the results as Python numbers: `max(l, r)`,
`if length <= max_pad`, `F.pad(x, (l, r))`, `padded[..., :end]`). Their
values depend on no input data, so the capture can know them exactly:

* a guarded graph input that is a 0-d integer (or bool) CPU tensor read
  through an attribute or item of a frame argument (a module's buffer, never
  a bare argument, whose value typically changes per call) is known, its
  value snapshotted; reading its value (or one derived from it) adds an
  equality guard on it (`L['self']._buffers['stride'] == tensor(2)`), so the
  entry is only used while the buffer holds that value;
* `torch.tensor(<number>)` made in the frame (`aten.lift_fresh`) is known;
* an ATen op whose tensor arguments are all known, whose other arguments are
  plain values (no symbolic number's sentinel), that is deterministic and
  writes nothing, is run on the known values (on the CPU, as eager runs it):
  its small results (at most 16 elements) are known, depending on the union of
  its inputs' guards. An op with no tensor argument at all counts too: a
  number where the op takes a Tensor reaches the dispatch mode as the number
  (`torch.div(n, 2, rounding_mode="trunc")` is `aten.div.Tensor_mode(n, 2)`),
  and so do factories (`torch.arange(4)`, `torch.zeros(2)`); its results
  depend on no guard. Ops whose values are unspecified (`empty` and its kin:
  uninitialized memory) are never known, nor are seeded random ops;
* any op that writes a tensor (in place, `out=`) forgets every known value
  (an alias may have been written).

Python reading a known value (`int(t)`, `bool(t)`, `t.item()`, `if t:`, an int
argument of a torch call) gets the number eager would get, with the guards;
everything else stays recorded in the graph as before. Sizes are fixed by the
tensor guards, except dynamic dims: in the run compared with the shadow run
(dynamic.py) a known value is *tainted* when an op computing it had arguments
or a result that differ from the shadow run's (it depends on a dynamic size);
reading a tainted value records a mismatch (the frame compiles with static
shapes), as reading a dynamic size as a plain number does (GB022).
"""

from __future__ import annotations

import re
from typing import Any, Callable

import torch

# At most this many elements are computed at capture time.
_MAX_NUMEL = 16
_BARE_ARGUMENT = re.compile(r"^L\['[^']*'\]$")
# Ops whose result holds uninitialized memory: its value is no value eager computes.
_UNSPECIFIED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted"}


def _small_int(t: torch.Tensor) -> bool:
    return (type(t) is torch.Tensor and t.device.type == "cpu" and t.dim() == 0 and not t.requires_grad
            and not t.is_floating_point() and not t.is_complex())


def _has_tensor(a: Any) -> bool:
    return isinstance(a, torch.Tensor) or (isinstance(a, (list, tuple)) and any(_has_tensor(e) for e in a))


class Known:
    """The known values of one translation attempt, keyed by meta twin."""

    def __init__(self, guard: Callable[[int, torch.Tensor], None]) -> None:
        self.vals: dict[int, tuple[torch.Tensor, tuple, bool]] = {}  # id(meta) -> (value, guards, tainted)
        self.trace: list = []  # per recorded op: its known results (compared with the shadow run's)
        self.shadow: list | None = None
        self._guard = guard
        self._guarded: set[int] = set()
        self.tainted_read = ""  # set when Python read a value that depends on a dynamic size

    def input(self, meta: torch.Tensor, t: torch.Tensor, node: int, path: str) -> None:
        """A guarded graph input read from guard node `node` at `path`."""
        if node >= 0 and _small_int(t) and path and not _BARE_ARGUMENT.match(path):
            v = t.detach().clone()
            self.vals[id(meta)] = (v, ((node, v),), False)

    def fresh(self, k: int, meta: torch.Tensor, real: torch.Tensor) -> None:
        """`torch.tensor(n)` made in the frame (op `k`, aten.lift_fresh of a new tensor)."""
        if real.device.type != "cpu" or real.numel() > _MAX_NUMEL or real.is_complex():
            self._note(k, None)
            return
        values = (real.tolist(),)
        self._note(k, values)
        tainted = self.shadow is not None and (k >= len(self.shadow) or self.shadow[k] != values)
        self.vals[id(meta)] = (real.detach().clone(), (), tainted)

    def record(self, k: int, func: Any, args: tuple, kwargs: dict, out: Any, sizes_differ: bool,
               symbolic: bool) -> None:
        """After op number `k` of the trace ran on metas with result `out`:
        its known results, if its tensor arguments are all known."""
        schema = func._schema
        if schema.is_mutable:
            self.vals.clear()  # an alias of a known tensor may have been written
            self._note(k, None)
            return
        if symbolic or torch.Tag.nondeterministic_seeded in func.tags \
                or schema.name.rpartition("::")[2] in _UNSPECIFIED \
                or not schema.name.startswith("aten::"):  # a custom op: never run at capture time
            self._note(k, None)
            return
        guards: list = []
        tainted = sizes_differ
        seen = [False]

        def real(a: Any) -> Any:
            if isinstance(a, torch.Tensor):
                e = self.vals.get(id(a))
                if e is None:
                    raise LookupError
                seen[0] = True
                guards.extend(e[1])
                nonlocal tainted
                tainted = tainted or e[2]
                return e[0]
            if isinstance(a, torch.device):
                return torch.device("cpu")
            if isinstance(a, (list, tuple)):
                return type(a)(real(e) for e in a)
            return a

        try:
            rargs = tuple(real(a) for a in args)
            rkwargs = {n: real(v) for n, v in kwargs.items()}
        except LookupError:
            self._note(k, None)
            return
        if not seen[0] and any(_has_tensor(a) for a in (*args, *kwargs.values())):
            self._note(k, None)
            return
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if not all(isinstance(o, torch.Tensor) and o.numel() <= _MAX_NUMEL for o in outs):
            self._note(k, None)
            return
        try:
            with torch.no_grad():
                r = func(*rargs, **rkwargs)
        except Exception:  # noqa: BLE001 - eager would raise where the graph runs: not known
            self._note(k, None)
            return
        routs = r if isinstance(r, (tuple, list)) else (r,)
        if len(routs) != len(outs):
            self._note(k, None)
            return
        values = tuple(o.tolist() for o in routs)
        if self.shadow is not None and (k >= len(self.shadow) or self.shadow[k] != values):
            tainted = True
        self._note(k, values)
        deps = tuple(dict.fromkeys(guards, None)) if len(guards) < 64 else tuple(guards)
        for m, v in zip(outs, routs):
            self.vals[id(m)] = (v, deps, tainted)

    def _note(self, k: int, values: Any) -> None:
        while len(self.trace) < k:
            self.trace.append(None)
        if len(self.trace) == k:
            self.trace.append(values)
        else:
            self.trace[k] = values

    def value(self, meta: Any) -> torch.Tensor | None:
        """The value of `meta` for Python to read (adding its guards), or None
        when it is not known (or depends on a dynamic size: a mismatch)."""
        e = self.vals.get(id(meta)) if isinstance(meta, torch.Tensor) else None
        if e is None:
            return None
        if e[2]:
            self.tainted_read = "a tensor value read by Python depends on a dynamic size"
            return None
        for node, snap in e[1]:
            if node not in self._guarded:
                self._guarded.add(node)
                self._guard(node, snap)
        return e[0]

    def scalar(self, meta: Any, conv: str) -> Any:
        """`bool`/`int`/`float`/`index`/`item` of a known 1-element tensor, None otherwise."""
        v = self.vals.get(id(meta)) if isinstance(meta, torch.Tensor) else None
        if v is None or v[0].numel() != 1:
            return None
        if conv == "index" and (v[0].is_floating_point() or v[0].dim() != 0):
            return None  # eager raises TypeError: not modelled here
        t = self.value(meta)
        if t is None:
            return None
        return {"bool": bool, "int": int, "float": float, "index": int, "item": torch.Tensor.item}[conv](t)
