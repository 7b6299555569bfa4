"""Automatic mixed precision for captured graphs (`xacc.jit(..., precision="auto")`).

The `amp` pass (csrc/lib/passes/MixedPrecision.cpp) puts matmul/linear/conv
regions and the pointwise chains between them in bfloat16. Before a graph is
installed, `compile_graph` checks that choice on the inputs of the call being
compiled (the profiled inputs): it runs the float32 graph and the mixed graph
on them, both with every region's outputs appended (pass option probe=true),
and measures

    error(ref, y) = max|y - ref| / max(max|ref|, 1e-30)      (float64, per tensor)

for each region (over its outputs) and each graph output. While a region's
error or an output's error is above the tolerance, the region with the largest
error is backed out to float32 (pass option exclude=...), the mixed graph is
rebuilt and measured again. The decision is kept with the cache entry: later
calls run the installed graph without measuring. The per-graph outcome is a
`PrecisionReport` (xacc.precision_report, xacc.explain, xjit --explain).

Graphs with side effects or random ops are not measured (a second run would
repeat the effects or draw other numbers) and stay float32, as do graphs whose
inputs cannot be re-read from the frame.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import torch

DEFAULT_TOLERANCE = 1e-2
PRECISIONS = ("float32", "auto")
_RANDOM_OPS = ("aten.rand", "aten.randn", "aten.randint", "aten.bernoulli", "aten.native_dropout",
               "aten.dropout", "aten.normal", "aten.uniform", "aten.multinomial")


class _Mode:
    """The mode key of the innermost active xacc.jit call (set by
    convert.push_options; Options.mode_key): the device when it is not cpu, the
    precision and, for auto, the tolerance. Every cache entry is guarded on it
    (`K[..].precision == 'xpu0/auto:0.01'`), so entries compiled under other
    settings never stand in for each other: the same function under
    xacc.jit(f) and then xacc.jit(f, device="xpu0") gets an entry per device.
    (Entries once went unguarded until the first non-default option appeared;
    a cpu entry compiled before that then ran a later xpu0 call on cpu. The
    guard costs about 30 ns a call.) Process-wide, not per thread."""

    __slots__ = ("precision",)

    def __init__(self) -> None:
        self.precision = "float32"


MODE = _Mode()


def guard_precision(ctx: Any) -> None:
    """Adds the mode guard to the entry being built (see _Mode)."""
    node = ctx.tree.node(ctx.const_node(MODE), "A", 0, "precision")
    ctx.tree.leaf_equals(node, MODE.precision)


@dataclass
class RegionReport:
    id: int
    ops: list[str]
    loc: str  # source location of the region's anchor (matmul/linear/conv)
    precision: str  # "bfloat16" or "float32"
    error: float | None  # measured relative error of the region's outputs (last measurement)
    backed_out: bool = False
    error_at_back_out: float | None = None


@dataclass
class PrecisionReport:
    """What one captured graph runs in which precision."""

    function: str
    device: str
    tolerance: float
    regions: list[RegionReport] = field(default_factory=list)
    kept_f32: list[str] = field(default_factory=list)  # ops float32 by policy
    output_errors: list[float] = field(default_factory=list)  # per graph output, final graph
    checked: bool = False
    rounds: int = 0  # mixed graphs measured
    note: str = ""
    seconds: float = 0.0  # time spent measuring

    @property
    def bf16_regions(self) -> list[RegionReport]:
        return [r for r in self.regions if r.precision == "bfloat16"]

    @property
    def backed_out(self) -> list[RegionReport]:
        return [r for r in self.regions if r.backed_out]

    @property
    def max_output_error(self) -> float:
        return max(self.output_errors, default=0.0)

    def __str__(self) -> str:
        lines = [f"precision of {self.function} on {self.device} (tolerance {self.tolerance:g}): "
                 f"{len(self.bf16_regions)}/{len(self.regions)} region(s) in bfloat16, "
                 f"{len(self.backed_out)} backed out"
                 + (f"; max output error {self.max_output_error:.3g}" if self.checked else "")
                 + (f" [{self.note}]" if self.note else "")]
        for r in self.regions:
            err = "not measured" if r.error is None else f"error {r.error:.3g}"
            extra = f"; backed out at error {r.error_at_back_out:.3g}" if r.backed_out else ""
            ops = ", ".join(_short(o) for o in r.ops)
            lines.append(f"  region {r.id}: {r.precision:8s} {err}{extra}: {ops}"
                         + (f" at {r.loc}" if r.loc else ""))
        if self.kept_f32:
            counts: dict[str, int] = {}
            for o in self.kept_f32:
                counts[_short(o)] = counts.get(_short(o), 0) + 1
            lines.append("  float32 by policy: "
                         + ", ".join(f"{k} x{v}" if v > 1 else k for k, v in counts.items()))
        return "\n".join(lines)


def _short(op: str) -> str:
    s = op.removeprefix("aten.")
    return s.rsplit(".", 1)[0] if s.endswith((".default", ".Tensor", ".int", ".Scalar")) else s


def rel_error(ref: Any, got: Any) -> float:
    """max|got - ref| / max|ref| over one output (see the module docstring)."""
    if isinstance(ref, torch.Tensor) and isinstance(got, torch.Tensor):
        if ref.shape != got.shape:
            return math.inf
        if ref.numel() == 0:
            return 0.0
        x, y = ref.detach().double(), got.detach().double()
        nan_x, nan_y = torch.isnan(x), torch.isnan(y)
        if not torch.equal(nan_x, nan_y):
            return math.inf
        x, y = x.masked_fill(nan_x, 0.0), y.masked_fill(nan_y, 0.0)
        inf = torch.isinf(x) | torch.isinf(y)
        if inf.any():
            if not torch.equal(x[inf], y[inf]):
                return math.inf
            x, y = x.masked_fill(inf, 0.0), y.masked_fill(inf, 0.0)
        scale = float(x.abs().max())
        return float((x - y).abs().max()) / max(scale, 1e-30)
    if isinstance(ref, (tuple, list)) and isinstance(got, (tuple, list)) and len(ref) == len(got):
        return max((rel_error(a, b) for a, b in zip(ref, got)), default=0.0)
    if isinstance(ref, (int, float)) and isinstance(got, (int, float)):
        return abs(float(got) - float(ref)) / max(abs(float(ref)), 1e-30)
    return 0.0 if ref == got else math.inf


def _variant(module: Any, exclude: set[int] | str, probe: bool) -> Any:
    """A copy of `module` through the amp pass (an xacc._C.Module: no text in between)."""
    m = module.clone()
    ex = exclude if isinstance(exclude, str) else "+".join(str(i) for i in sorted(exclude))
    opts = {"probe": "true" if probe else "false"}
    if ex:
        opts["exclude"] = ex
    m.run_passes("amp", options=opts)
    return m


def compile_graph(builder: Any, device: str, tolerance: float, inputs: list | None,
                  function: str, has_effects: bool) -> tuple[Any, PrecisionReport]:
    """Runs the amp pass on `builder`'s graph (already through the standard
    passes), backs regions out until the error on `inputs` is within
    `tolerance`, and returns (the CompiledGraph for `device`, its report)."""
    t0 = time.perf_counter()
    module = builder.module()
    name = module.graph_names[0]
    rep = PrecisionReport(function=function, device=device, tolerance=tolerance)
    info = module.amp_regions(name)
    rep.kept_f32 = list(info["kept_f32"])
    regions = info["regions"]
    rep.regions = [RegionReport(r["id"], list(r["ops"]), r["locs"][0] if r["locs"] else "",
                                "bfloat16", None) for r in regions]
    if not regions:
        rep.note = "no matmul/linear/conv region"
        return builder.compile(device=device), rep
    reason = ""
    if has_effects:
        reason = "graph has side effects: not measured, kept float32"
    elif any(op.startswith(_RANDOM_OPS) for op in module.op_names):
        reason = "graph draws random numbers: not measured, kept float32"
    elif inputs is None:
        reason = "inputs of the call could not be re-read: not measured, kept float32"
    if reason:
        for r in rep.regions:
            r.precision = "float32"
        rep.note = reason
        return builder.compile(device=device), rep

    try:
        excluded = _measure(module, name, device, inputs, tolerance, regions, rep)
    except Exception as e:  # noqa: BLE001 - a graph that cannot run mixed runs float32
        for r in rep.regions:
            r.precision, r.error, r.backed_out, r.error_at_back_out = "float32", None, False, None
        rep.output_errors, rep.rounds = [], 0
        first = str(e).splitlines()[0] if str(e) else ""
        rep.note = f"mixed graph failed ({type(e).__name__}: {first}); kept float32"
        rep.seconds = time.perf_counter() - t0
        return builder.compile(device=device), rep
    rep.checked = True
    exclude = "+".join(str(i) for i in sorted(excluded))
    builder.run_passes("amp", {"exclude": exclude} if exclude else {})
    rep.seconds = time.perf_counter() - t0
    return builder.compile(device=device), rep


def _measure(module: Any, name: str, device: str, inputs: list, tolerance: float, regions: list,
             rep: PrecisionReport) -> set[int]:
    """The back-out loop (module docstring); returns the region ids kept float32."""
    from xacc._C import capture as C
    ref = list(C.compile_module(_variant(module, "all", True), name, device=device)(*inputs))
    n_out = len(ref) - sum(r["num_outputs"] for r in regions)
    excluded: set[int] = set()
    while True:
        rep.rounds += 1
        got = list(C.compile_module(_variant(module, excluded, True), name, device=device)(*inputs))
        rep.output_errors = [rel_error(a, b) for a, b in zip(ref[:n_out], got[:n_out])]
        off = n_out
        errors: dict[int, float] = {}
        for r in regions:
            k = r["num_outputs"]
            pairs = zip(ref[off:off + k], got[off:off + k])
            errors[r["id"]] = max((rel_error(a, b) for a, b in pairs), default=0.0)
            off += k
        for rr in rep.regions:
            if rr.id not in excluded:
                rr.error = errors[rr.id]
        live = [i for i in errors if i not in excluded]
        bad = [i for i in live if errors[i] > tolerance]
        if not bad and rep.max_output_error <= tolerance:
            break
        if not live:
            break
        worst = max(bad or live, key=lambda i: errors[i])
        excluded.add(worst)
        rr = rep.regions[worst]
        rr.backed_out, rr.precision, rr.error_at_back_out = True, "float32", errors[worst]
    return excluded


def check_options(precision: str, tolerance: float) -> None:
    """Raises ValueError for a precision or tolerance xacc.jit cannot use."""
    if precision not in PRECISIONS:
        names = ", ".join(map(repr, PRECISIONS))
        raise ValueError(f"xacc.jit: precision must be one of {names}, not {precision!r}")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (tolerance >= 0.0) \
            or math.isinf(tolerance):
        raise ValueError(f"xacc.jit: tolerance must be a finite number >= 0, not {tolerance!r}")


def reports_of(fn: Any) -> list[PrecisionReport]:
    """The precision reports of the graphs compiled for `fn` (an xacc.jit result)."""
    opts = getattr(fn, "_xacc_opts", None)
    if opts is None:
        raise TypeError("xacc.precision_report expects a function or module returned by xacc.jit, "
                        f"got {type(fn).__name__}")
    return list(opts.reports)
