"""The graph IR (GIR) from Python: parse, print, verify, run passes, interpret.

    >>> import xacc.ir as ir
    >>> m = ir.parse('graph @main() -> i64 {\\n  %0 = arith.const() {value = 2} : i64\\n  return %0\\n}')
    >>> m.interpret("main")
    [2]
"""

from __future__ import annotations

from typing import Any

from xacc import _C
from xacc.errors import CompileError, ExecutionError


class Module:
    """A GIR module: named graphs. Wraps the C++ module; every method that can fail
    raises CompileError/ExecutionError with located diagnostics."""

    def __init__(self, impl: Any) -> None:
        self._impl = impl

    def __str__(self) -> str:
        return self._impl.print(True)

    def print(self, locations: bool = True) -> str:
        return self._impl.print(locations)

    def verify(self) -> None:
        self._impl.verify()

    def run_passes(self, pipeline: str | list[str], verify_each: bool = False,
                   options: dict[str, str] | None = None) -> dict[str, int]:
        """Runs the passes; `options` are the pipeline's `key=value` pass options
        (as `xacc-opt --pass-option`). Returns the passes' statistics."""
        if not isinstance(pipeline, str):
            pipeline = ",".join(pipeline)
        return dict(self._impl.run_passes(pipeline, verify_each, dict(options or {})))

    def to_dot(self) -> str:
        return self._impl.to_dot()

    def interpret(self, graph: str = "main", *args: Any, capture_output: bool = False):
        results, printed = self._impl.interpret(graph, list(args))
        return (results, printed) if capture_output else results

    def grad(self, graph: str = "main", wrt: list[str | int] | None = None, seed: str = "ones",
             name: str | None = None) -> str:
        """Reverse-mode autodiff: adds a graph (default ``<graph>_grad``) with the same
        parameters that returns the original results followed by one gradient per
        ``wrt`` parameter (names or indices; default: every float/floating-tensor
        parameter). ``seed="ones"`` seeds each differentiable result with ones;
        ``seed="param"`` adds one cotangent parameter per differentiable result.
        Returns the new graph's name; unsupported ops raise CompileError naming the
        op and its location."""
        if seed not in ("ones", "param"):
            raise ValueError("seed must be 'ones' or 'param'")
        return self._impl.grad(graph, list(wrt or []), seed == "param", name or "")

    @property
    def graph_names(self) -> list[str]:
        return list(self._impl.graph_names)

    @property
    def num_nodes(self) -> int:
        return self._impl.num_nodes


def parse(text: str, filename: str = "<string>", verify: bool = True) -> Module:
    """Parse GIR text (and verify it unless verify=False)."""
    m = Module(_C.parse(text, filename))
    if verify:
        m.verify()
    return m


def parse_file(path: str, verify: bool = True) -> Module:
    with open(path, encoding="utf-8") as f:
        return parse(f.read(), path, verify)


def grad(module: Module, graph: str = "main", wrt: list[str | int] | None = None, seed: str = "ones",
         name: str | None = None) -> str:
    """``module.grad(...)``: see Module.grad."""
    return module.grad(graph, wrt, seed, name)


def ops() -> list[tuple[str, str]]:
    """Registered ops with their one-line summaries."""
    return list(_C.ops())


def passes() -> list[tuple[str, str]]:
    """Available passes with their descriptions."""
    return list(_C.passes())


__all__ = ["Module", "grad", "parse", "parse_file", "ops", "passes", "CompileError", "ExecutionError"]
