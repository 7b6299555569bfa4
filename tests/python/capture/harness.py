"""Shared checks for the capture tests: run a function eagerly and under
xacc.jit over several calls with fresh inputs and compare everything the
caller can observe (results, mutated inputs), then the capture counters."""

from __future__ import annotations

from typing import Any, Callable

import torch

from xacc.jit import counters, jit


def clone(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        c = v.detach().clone()
        c.requires_grad_(v.requires_grad)
        return c
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*(clone(e) for e in v))
    if isinstance(v, (list, tuple)):
        return type(v)(clone(e) for e in v)
    if isinstance(v, dict):
        return {k: clone(e) for k, e in v.items()}
    return v


def same(a: Any, b: Any, atol: float = 1e-5) -> None:
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), f"expected a tensor, got {type(b).__name__}"
        assert a.shape == b.shape and a.dtype == b.dtype, f"{a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
        assert torch.allclose(a, b, atol=atol, rtol=1e-4, equal_nan=True), f"values differ:\n{a}\n{b}"
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{a!r} vs {b!r}"
        for x, y in zip(a, b):
            same(x, y, atol)
    elif isinstance(a, dict):
        assert type(b) is dict and a.keys() == b.keys()
        for k in a:
            same(a[k], b[k], atol)
    else:
        assert a == b, f"{a!r} != {b!r}"


def check(fn: Callable, make_args: Callable[[int], tuple], *, calls: int = 3, graphs: int | None = None,
          breaks: int | None = None, max_recompiles: int = 0, min_graphs: int | None = None,
          atol: float = 1e-5, **jit_kwargs: Any) -> dict:
    jfn = jit(fn, **jit_kwargs)
    for i in range(calls):
        torch.manual_seed(i)
        args = make_args(i)
        eargs, jargs = clone(args), clone(args)
        expected = fn(*eargs)
        got = jfn(*jargs)
        same(expected, got, atol)
        same(eargs, jargs, atol)  # inputs mutated the same way
    c = counters()
    assert c["internal_errors"] == 0, c
    if graphs is not None:
        assert c["graphs"] == graphs, c
    if min_graphs is not None:
        assert c["graphs"] >= min_graphs, c
    if breaks is not None:
        assert c["breaks"] == breaks, c
    assert c["recompiles"] <= max_recompiles, c
    return c


def r(*shape: int) -> Callable[[int], tuple]:
    return lambda i: (torch.randn(*shape),)


def r2(*shape: int) -> Callable[[int], tuple]:
    return lambda i: (torch.randn(*shape), torch.randn(*shape))
