"""`xacc.debug.compare`: the same computation three ways - plain Python, the
rewritten bytecode with graphs on the ATen executor (device "cpu"), and the
compiled target (device "xpu0") - with per-output max abs/rel differences, and
for every captured graph whose outputs diverge from the reference interpreter,
the first node whose value diverges, found by bisecting over prefixes of the
graph (prefix k returns every value of nodes 0..k, so "some value diverges" is
monotone in k).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from xacc._src.config import debug
from xacc._src.debug.executors import (GraphExecutor, InterpExecutor, executor_for, flatten,
                                       graph_header)
from xacc._src.export.camel import _split_top, split_header
from xacc._src.export.record import Recorder, snapshot


# -- value differences ----------------------------------------------------------------

@dataclass
class Diff:
    path: str
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""

    def __str__(self) -> str:
        s = f"{self.path}: max abs {self.max_abs:.3g}, max rel {self.max_rel:.3g}"
        return s + ("" if self.ok else " DIVERGES") + (f" ({self.note})" if self.note else "")


def diff_values(a: Any, b: Any, path: str, atol: float, rtol: float) -> Diff:
    """How far `b` is from the reference `a`."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return Diff(path, math.inf, math.inf, False, f"{type(a).__name__} vs {type(b).__name__}")
        if a.shape != b.shape:
            return Diff(path, math.inf, math.inf, False, f"shape {list(a.shape)} vs {list(b.shape)}")
        if a.numel() == 0:
            return Diff(path, 0.0, 0.0, True)
        x, y = a.detach().double(), b.detach().double()
        if a.dtype.is_complex:
            x, y = torch.view_as_real(a.detach()).double(), torch.view_as_real(b.detach()).double()
        same_nan = torch.isnan(x) == torch.isnan(y)
        err = (x - y).abs().nan_to_num(0.0)
        rel = (err / x.abs().clamp_min(1e-12)).nan_to_num(0.0)  # relative to the reference
        max_abs, max_rel = float(err.max()), float(rel.max())
        ok = bool(same_nan.all()) and bool((err <= atol + rtol * x.abs().nan_to_num(0.0)).all())
        return Diff(path, max_abs, max_rel, ok)
    if isinstance(a, (bool, int, float)) and isinstance(b, (bool, int, float)):
        err = abs(float(a) - float(b))
        if math.isnan(err):
            ok = math.isnan(float(a)) and math.isnan(float(b))
            return Diff(path, 0.0 if ok else math.inf, 0.0 if ok else math.inf, ok)
        rel = err / max(abs(float(a)), 1e-12)
        return Diff(path, err, rel, err <= atol + rtol * abs(float(a)))
    ok = a == b
    return Diff(path, 0.0 if ok else math.inf, 0.0 if ok else math.inf, bool(ok), "" if ok else f"{a!r} vs {b!r}")


def diff_outputs(ref: Any, got: Any, atol: float, rtol: float) -> list[Diff]:
    fa, fb = flatten(ref), flatten(got)
    if len(fa) != len(fb):
        return [Diff("out", math.inf, math.inf, False, f"{len(fa)} vs {len(fb)} output values")]
    return [diff_values(x, y, p, atol, rtol) for (p, x), (_, y) in zip(fa, fb)]


# -- prefixes of a graph -----------------------------------------------------------------

@dataclass
class _Node:
    text: str  # the node's lines (regions included)
    results: list[tuple[str, str]]  # (value, type) of its results
    op: str


_DEF = re.compile(r"^\s*(?P<res>%[\w.]+(?:\s*,\s*%[\w.]+)*)\s*=\s*(?P<op>[\w.]+)")


def _result_types(line: str, n: int) -> list[str]:
    # the text after the last top-level " : " is the type (a parenthesised list for several results)
    depth, cut = 0, -1
    for i, ch in enumerate(line):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif ch == ":" and depth == 0 and line[i - 1:i + 2] == " : ":
            cut = i
    t = line[cut + 1:].strip() if cut >= 0 else ""
    t = re.sub(r"\s*loc\(.*\)$", "", t).rstrip("{").strip()
    if n > 1 and t.startswith("(") and t.endswith(")"):
        return _split_top(t[1:-1])
    return [t] * n if n == 1 else _split_top(t)


def split_graph(gir: str) -> tuple[list[str], list[_Node], str]:
    """(lines before the first node, top-level nodes, header line) of the first graph."""
    lines = gir.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("graph @"))
    pre = lines[:start]
    header = lines[start]
    nodes: list[_Node] = []
    i = start + 1
    while i < len(lines):
        ln = lines[i]
        s = ln.strip()
        if s.startswith("return") or s == "}":
            break
        m = _DEF.match(ln)
        block = [ln]
        depth = ln.count("{") - ln.count("}") if ln.rstrip().endswith("{") else 0
        while depth > 0 and i + 1 < len(lines):
            i += 1
            block.append(lines[i])
            depth += lines[i].count("{") - lines[i].count("}")
        if m:
            res = [r.strip() for r in m.group("res").split(",")]
            nodes.append(_Node("\n".join(block), list(zip(res, _result_types(ln, len(res)))), m.group("op")))
        else:
            nodes.append(_Node("\n".join(block), [], s.split("(", 1)[0]))
        i += 1
    return pre, nodes, header


def prefix_graph(gir: str, k: int) -> tuple[str, list[tuple[int, str]]]:
    """GIR of the graph cut after top-level node k, returning every non-token value
    of nodes 0..k; and for each returned value the index of its node."""
    _, nodes, header = split_graph(gir)
    outs: list[tuple[str, str, int]] = []
    for j, n in enumerate(nodes[:k + 1]):
        for v, t in n.results:
            if t and t != "!token":
                outs.append((v, t, j))
    name, params = split_header(header)
    head = (f"graph @{name}(" + ", ".join(f"{p}: {t}" for p, t in params) + ") -> ("
            + ", ".join(t for _, t, _ in outs) + ") {")
    body = [n.text for n in nodes[:k + 1]]
    text = "\n".join([head, *body, "  return " + ", ".join(v for v, _, _ in outs), "}"]) + "\n"
    return text, [(j, v) for v, _, j in outs]


# -- per-graph comparison ----------------------------------------------------------------

@dataclass
class NodeDivergence:
    index: int  # top-level node index in the graph
    op: str
    text: str  # the node's GIR line
    diff: Diff

    def __str__(self) -> str:
        first = self.text.strip().splitlines()[0]
        return f"node {self.index} ({self.op}): {first}\n      {self.diff}"


@dataclass
class GraphComparison:
    label: str  # function#entry
    graph: str  # GIR text
    executor: str
    diffs: list[Diff] = field(default_factory=list)
    first_divergent: NodeDivergence | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and all(d.ok for d in self.diffs)

    @property
    def worst(self) -> float:
        return max((d.max_abs for d in self.diffs), default=math.inf if self.error else 0.0)


def _prefix_values(ex: GraphExecutor, gir: str, k: int, inputs: list) -> tuple[list, list[tuple[int, str]]]:
    text, owners = prefix_graph(gir, k)
    return ex.run(text, list(inputs)), owners


def first_divergent_node(gir: str, inputs: list, ex: GraphExecutor, ref: GraphExecutor, atol: float,
                         rtol: float) -> NodeDivergence | None:
    """Bisects over prefixes for the first top-level node whose value on `ex`
    differs from `ref` beyond tolerance."""
    _, nodes, _ = split_graph(gir)

    def diverging(k: int) -> tuple[int, Diff] | None:
        a, owners = _prefix_values(ref, gir, k, inputs)
        b, _ = _prefix_values(ex, gir, k, inputs)
        for (j, v), x, y in zip(owners, a, b):
            d = diff_values(x, y, v, atol, rtol)
            if not d.ok:
                return j, d
        return None

    lo, hi = 0, len(nodes) - 1
    if hi < 0 or diverging(hi) is None:
        return None
    while lo < hi:  # invariant: prefix hi diverges
        mid = (lo + hi) // 2
        debug("backend", "compare: bisect [%d, %d], prefix %d", lo, hi, mid)
        if diverging(mid) is not None:
            hi = mid
        else:
            lo = mid + 1
    j, d = diverging(lo)
    n = nodes[j]
    return NodeDivergence(j, n.op, n.text, d)


def compare_graph(label: str, gir: str, inputs: list, outputs: list | None, ex: GraphExecutor, atol: float,
                  rtol: float) -> GraphComparison:
    """`outputs` (what the run produced) or, when None, `ex` re-running the graph,
    against the reference interpreter on the same inputs."""
    gc = GraphComparison(label, gir, ex.name)
    ref = InterpExecutor()
    try:
        expected = ref.run(gir, list(snapshot(inputs)))
        got = outputs if outputs is not None else ex.run(gir, list(snapshot(inputs)))
        gc.diffs = diff_outputs(list(expected), list(got), atol, rtol)
        if not gc.ok:
            gc.first_divergent = first_divergent_node(gir, list(snapshot(inputs)), ex, ref, atol, rtol)
    except Exception as e:  # noqa: BLE001 - reported, never raised
        gc.error = f"{type(e).__name__}: {e}"
    return gc


# -- the three-way comparison of a function -----------------------------------------------

@dataclass
class PathResult:
    name: str  # python | aten | xpu0
    executor: str
    outputs: Any = None
    diffs: list[Diff] = field(default_factory=list)  # vs plain Python
    graphs: list[GraphComparison] = field(default_factory=list)
    error: str = ""
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and all(d.ok for d in self.diffs) and all(g.ok for g in self.graphs)


@dataclass
class CompareReport:
    paths: list[PathResult]
    atol: float
    rtol: float

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.paths)

    def path(self, name: str) -> PathResult:
        return next(p for p in self.paths if p.name == name)

    @property
    def first_divergent(self) -> NodeDivergence | None:
        for p in self.paths:
            for g in p.graphs:
                if g.first_divergent is not None:
                    return g.first_divergent
        return None

    def __str__(self) -> str:
        lines = [f"xacc.debug.compare (atol {self.atol:g}, rtol {self.rtol:g}): "
                 + ("all paths agree" if self.ok else "DIVERGENCE")]
        for p in self.paths:
            lines.append(f"  {p.name} [{p.executor}]" + (f" - {p.note}" if p.note else ""))
            if p.error:
                lines.append(f"    error: {p.error}")
            for d in p.diffs:
                lines.append(f"    {d}")
            for g in p.graphs:
                state = "ok" if g.ok else ("error: " + g.error if g.error else "diverges")
                lines.append(f"    graph {g.label}: {state}")
                if g.first_divergent is not None:
                    lines.append(f"      first divergent {g.first_divergent}")
        return "\n".join(lines)


def _clone_args(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        c = v.detach().clone()
        return c.requires_grad_(v.requires_grad)
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_clone_args(e) for e in v)
    if isinstance(v, dict):
        return {k: _clone_args(e) for k, e in v.items()}
    return v


def graph_comparisons(events: list, rec: Recorder, ex: GraphExecutor, atol: float,
                      rtol: float) -> list[GraphComparison]:
    out = []
    for ev in events:
        if not ev.graph or not ev.graph_id:
            continue
        call = rec.first(ev.graph_id)
        if call is None or call.outputs is None:
            continue
        out.append(compare_graph(f"{ev.function}#{ev.entry}", ev.graph, list(call.inputs),
                                 ev.graph_outputs(call.outputs), ex, atol, rtol))
    return out


def compare(fn: Callable, *args: Any, target: str = "xpu0", atol: float = 1e-5, rtol: float = 1e-4,
            **kwargs: Any) -> CompareReport:
    """Runs `fn(*args, **kwargs)` as plain Python, under xacc.jit(device="cpu") and
    under xacc.jit(device=target); see the module docstring."""
    from xacc._src.capture import convert
    from xacc._src.jit import jit, reset

    target_fn = getattr(fn, "_xacc_fn", fn)
    py = PathResult("python", "CPython")
    try:
        py.outputs = snapshot(target_fn(*_clone_args(args), **_clone_args(kwargs)))
    except Exception as e:  # noqa: BLE001
        py.error = f"{type(e).__name__}: {e}"
    paths = [py]
    for name, device in (("aten", "cpu"), (target, target)):
        try:
            ex = executor_for(device)
        except Exception as e:  # noqa: BLE001 - e.g. a build without the MLIR backend
            paths.append(PathResult(name, device, error=f"{type(e).__name__}: {e}"))
            continue
        p = PathResult(name, ex.name)
        reset()
        start = len(convert.EVENTS)
        try:
            with Recorder() as rec:
                p.outputs = snapshot(jit(target_fn, device=device)(*_clone_args(args), **_clone_args(kwargs)))
        except Exception as e:  # noqa: BLE001
            p.error = f"{type(e).__name__}: {e}"
        else:
            if not py.error:
                p.diffs = diff_outputs(py.outputs, p.outputs, atol, rtol)
            p.graphs = graph_comparisons(convert.EVENTS[start:], rec, ex, atol, rtol)
        paths.append(p)
    reset()
    return CompareReport(paths, atol, rtol)


__all__ = ["compare", "compare_graph", "CompareReport", "PathResult", "GraphComparison", "NodeDivergence", "Diff",
           "prefix_graph", "split_graph", "graph_comparisons", "first_divergent_node", "graph_header"]
