"""Training through captured graphs (Note [Training graphs] in
csrc/include/xacc/passes/Autodiff.h, Note [Training runner] in CacheEntry.h).

When a graph is captured with grad mode on and some of its floating tensor
inputs require grad, the GIR autodiff builds a joint forward+backward graph,
which is split at the cotangents into a forward graph (results, then the
residuals the backward reads) and a backward graph (the saved inputs, one
cotangent per differentiable result, the residuals -> one gradient per input
that requires grad). Both are compiled for the capture's device (ATen executor
on cpu, MLIR kernels on xpuN) and wrapped in a `torch.autograd.Function`: the
cache entry calls it instead of its graph, so `loss.backward()` runs the
compiled backward. Residuals are saved, never recomputed (see the Note).

Effects (in-place ops such as a BatchNorm's counter update) stay in the forward
graph and run once; one on a value that needs a gradient has no rule. A graph
with an op that has no derivative rule or a device that cannot compile the split graphs keeps the previous behaviour: the
graph replays on ATen ops with eager autograd recording history (the xpu
executable runs such graphs' regions on ATen too); the reason is logged on the
`training` channel and counted (`training_fallbacks`).

A graph that runs inside a DistributedDataParallel forward and reads its
parameters is split at the gradient-bucket boundaries first (Note [Bucket
split] in csrc/include/xacc/passes/GraphSplit.h, ddp_split.py): each piece gets
its own compiled forward and backward and autograd.Function, chained by the
values that cross the cuts, so the backward of the last piece hands its
parameters' gradients to DDP's hooks, and their bucket's all-reduce starts,
before the earlier pieces' backwards run.
"""

from __future__ import annotations

from typing import Any

import torch

from xacc._C import capture as C
from xacc._src.capture import ddp_split
from xacc._src.capture.config import log

# Counters merged into xacc.jit.counters(): graphs compiled with a backward,
# graphs that fell back to replay, runs of compiled forwards and backwards.
# Graphs split at DDP bucket boundaries and their pieces (Note [Bucket split]).
# Training graphs run by the Python autograd.Function rather than the C++
# runner (a non-tensor result; Note [Native training runner]).
COUNTERS: dict[str, int] = {"training_graphs": 0, "training_fallbacks": 0,
                            "compiled_forward_runs": 0, "compiled_backward_runs": 0,
                            "ddp_split_graphs": 0, "ddp_split_pieces": 0, "python_runners": 0}
# (function, reason) of every fallback, newest last (tests and explain read it).
FALLBACKS: list[tuple[str, str]] = []
# Training graphs run through C++ (Note [Native training runner] in
# csrc/python/training_runner.cpp); tests set it False to compare with the
# Python autograd.Function, which is kept for graphs with non-tensor results.
NATIVE_RUNNER = True


def counters() -> dict[str, int]:
    """COUNTERS with the C++ runners' runs added (Note [Native training runner])."""
    out = dict(COUNTERS)
    fwd, bwd = C.training_runner_runs()
    out["compiled_forward_runs"] += fwd
    out["compiled_backward_runs"] += bwd
    return out


def reset() -> None:
    for k in COUNTERS:
        COUNTERS[k] = 0
    C.reset_training_runner_runs()
    FALLBACKS.clear()


def _wrt(inputs: list[Any] | None) -> list[int]:
    if not inputs or not torch.is_grad_enabled():
        return []
    return [i for i, v in enumerate(inputs)
            if isinstance(v, torch.Tensor) and v.requires_grad and (v.is_floating_point() or v.is_complex())]


def build(module: Any, inputs: list[Any] | None, device: str, name: str,
          has_effects: bool) -> tuple[Any, Any, int] | None:
    """(runner, forward CompiledGraph, number of the captured graph's results
    the forward returns before its residuals) for a graph whose inputs require grad
    under grad mode; None when the graph needs no backward or cannot have a
    compiled one (logged)."""
    wrt = _wrt(inputs)
    if not wrt:
        return None
    if not has_effects:
        plan = ddp_split.bucket_plan(inputs)
        split = _build_split(module, len(inputs), wrt, plan, device, name) if plan else None
        if split is not None:
            return split
    try:
        tg = C.training_graphs(module, wrt, device, forward_only=not has_effects)
    except Exception as e:  # noqa: BLE001 - CompileError (no rule), ValueError (device)
        msg = str(e).strip().splitlines()
        return _fallback(name, msg[0] if msg else type(e).__name__)
    if tg is None:
        # No result depends on an input that requires grad (the work ran under
        # no_grad or on detached values) and nothing is written in place: eager
        # records no history, so the forward graph alone is exact, and no
        # backward is built or compiled.
        log("training", "%s: no result requires grad; forward graph only", name)
        return None
    fwd, bwd, n_results, n_res, saved, cot, req = tg
    runner = _make_runner(fwd, bwd, len(inputs), wrt, n_results, n_res, saved, cot, req, name)
    COUNTERS["training_graphs"] += 1
    log("training", "%s: compiled forward (%d nodes, %d residuals) and backward (%d nodes) for %d of %d inputs on %s",
        name, fwd.num_nodes, n_res, bwd.num_nodes, len(wrt), len(inputs), device)
    return runner, fwd, n_results


def _build_split(module: Any, n_inputs: int, wrt: list[int], plan: tuple[list[int], list[int]],
                 device: str, name: str) -> tuple[Any, Any, int] | None:
    """The runner of the graph split at DDP's bucket boundaries (Note [Bucket
    split]); None when it is not split (one bucket, no clean cut, a piece
    without a compiled backward): the caller compiles it whole."""
    pieces, results, why = C.split_buckets(module, plan[0], plan[1])
    if not pieces:
        log("training", "%s: not split at DDP buckets: %s", name, why)
        return None
    wrt_set = set(wrt)
    steps: list[tuple[Any, tuple]] = []
    grads: list[list[bool] | None] = []  # per piece, per result: it requires grad (None: none does)
    try:
        for k, (piece, sources) in enumerate(pieces):
            pw = [j for j, (p, i) in enumerate(sources)
                  if (i in wrt_set if p < 0 else grads[p] is not None and grads[p][i])]
            tg = C.training_graphs(piece, pw, device, forward_only=True) if pw else None
            if tg is not None:
                fwd, bwd, n_results, n_res, saved, cot, req = tg
                run = _make_runner(fwd, bwd, len(sources), pw, n_results, n_res, saved, cot, req,
                                   f"{name}#{k}")
                grads.append([c and r for c, r in zip(cot, req)])
            else:  # reads nothing that requires grad, or no result depends on it
                g = C.compile_module(piece, device=device)
                run = lambda *a, g=g: tuple(g(*a))  # noqa: E731
                grads.append(None)
            steps.append((run, tuple(tuple(s) for s in sources)))
    except Exception as e:  # noqa: BLE001 - CompileError (no rule), ValueError (device)
        msg = str(e).strip().splitlines()
        log("training", "%s: not split at DDP buckets: %s", name, msg[0] if msg else type(e).__name__)
        return None
    out_sources = tuple(tuple(s) for s in results)

    def runner(*inputs: Any) -> tuple:
        outs: list[tuple] = []
        for run, sources in steps:
            outs.append(run(*[inputs[i] if p < 0 else outs[p][i] for p, i in sources]))
        return tuple(inputs[i] if p < 0 else outs[p][i] for p, i in out_sources)

    runner.pieces = len(steps)
    COUNTERS["training_graphs"] += 1
    COUNTERS["ddp_split_graphs"] += 1
    COUNTERS["ddp_split_pieces"] += len(steps)
    log("training", "%s: split at DDP bucket boundaries (caps %s bytes) into %d pieces, each with a compiled "
        "forward and backward, for %d of %d inputs on %s", name, plan[1], len(steps), len(wrt), n_inputs, device)
    # What the cache entry reports (id, nodes, inputs, device; the graph tap's
    # id): the captured graph itself, not prepared for any backend (the runner
    # runs the pieces); its plan names the split.
    plan_text = f"split at DDP buckets into {len(steps)} pieces, each compiled for {device}"
    return runner, C.unprepared_module(module, device, plan_text), len(out_sources)


def _fallback(name: str, why: str) -> None:
    COUNTERS["training_fallbacks"] += 1
    FALLBACKS.append((name, why))
    log("training", "%s: no compiled backward, the graph replays with eager autograd: %s", name, why)
    return None


def _refuse_second_order(grads: tuple, name: str) -> tuple:
    """A compiled backward's gradients under create_graph=True, each given a
    node that raises when differentiated: the backward records no history (it
    reads residuals the forward computed without any), so a second backward
    through it must raise, not drop the second-order terms. The same as the C++
    runner's (Note [Native training runner])."""
    idx = [i for i, g in enumerate(grads) if isinstance(g, torch.Tensor)]
    if not idx:
        return grads
    err = torch._C._functions.DelayedError(
        f"xacc: trying to differentiate twice through a compiled backward ({name}), which records no history",
        len(idx))
    wrapped = err(*[grads[i].detach().requires_grad_() for i in idx])
    if len(idx) == 1:
        wrapped = (wrapped,)
    out = list(grads)
    for i, g in zip(idx, wrapped):
        out[i] = g
    return tuple(out)


def _make_runner(fwd: Any, bwd: Any, n_inputs: int, wrt: list[int], n_results: int, n_res: int,
                 saved: list[int], cot: list[bool], req: list[bool], name: str) -> Any:
    """The C++ runner (Note [Native training runner]), or this module's
    autograd.Function when some result is not a tensor."""
    if NATIVE_RUNNER:
        try:
            return C.TrainingRunner(fwd, bwd, n_inputs, wrt, n_results, saved, cot, req, name)
        except ValueError as e:
            log("training", "%s: Python runner: %s", name, e)
    COUNTERS["python_runners"] += 1
    return _python_runner(fwd, bwd, n_inputs, wrt, n_results, n_res, saved, cot, req, name)


def _python_runner(fwd: Any, bwd: Any, n_inputs: int, wrt: list[int], n_results: int, n_res: int,
                   saved: list[int], cot: list[bool], req: list[bool], name: str) -> Any:
    wrt_t = tuple(wrt)
    saved_t = tuple(saved)
    cot_idx = tuple(i for i, c in enumerate(cot) if c)

    class CompiledGraphFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, *inputs: Any) -> tuple:
            outs = fwd(*inputs)
            COUNTERS["compiled_forward_runs"] += 1
            results, residuals = outs[:n_results], outs[n_results:]
            tensors, others, layout = [], [], []
            for v in [inputs[i] for i in saved_t] + list(residuals):
                if isinstance(v, torch.Tensor):
                    layout.append((True, len(tensors)))
                    tensors.append(v)
                else:
                    layout.append((False, len(others)))
                    others.append(v)
            ctx.save_for_backward(*tensors)
            ctx.others = others
            ctx.layout = layout
            ctx.result_meta = [(r.shape, r.dtype, r.device) if isinstance(r, torch.Tensor) else None
                               for r in results]
            nondiff = [r for i, r in enumerate(results)
                       if isinstance(r, torch.Tensor) and not (cot[i] and req[i] and r.is_floating_point())]
            if nondiff:
                ctx.mark_non_differentiable(*nondiff)
            return tuple(results)

        @staticmethod
        def backward(ctx: Any, *grads: Any) -> tuple:
            if not torch.is_grad_enabled():
                return _backward(ctx, grads)
            with torch.no_grad():  # create_graph=True
                d = _backward(ctx, grads)
            return _refuse_second_order(d, name)

    def _backward(ctx: Any, grads: tuple) -> tuple:
        tensors = ctx.saved_tensors
        vals = [tensors[k] if is_t else ctx.others[k] for is_t, k in ctx.layout]
        n_saved = len(saved_t)
        cots = []
        for i in cot_idx:
            g = grads[i]
            if g is None:
                meta = ctx.result_meta[i]
                g = torch.zeros(meta[0], dtype=meta[1], device=meta[2]) if meta else 0.0
            elif isinstance(g, torch.Tensor) and not g.is_contiguous():
                g = g.contiguous()
            cots.append(g)
        d = bwd(*vals[:n_saved], *cots, *vals[n_saved:])
        COUNTERS["compiled_backward_runs"] += 1
        out: list[Any] = [None] * n_inputs
        for j, i in enumerate(wrt_t):
            out[i] = d[j]
        return tuple(out)

    CompiledGraphFunction.__name__ = CompiledGraphFunction.__qualname__ = f"CompiledGraphFunction[{name}]"

    def runner(*inputs: Any) -> tuple:
        if not torch.is_grad_enabled():  # guards key entries on grad mode; kept for direct calls
            r = fwd(*inputs)
            return tuple(r[:n_results])
        return CompiledGraphFunction.apply(*inputs)

    runner.forward_graph = fwd
    runner.backward_graph = bwd
    return runner
