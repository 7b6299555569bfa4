"""Graph executors for comparisons: one interface, `run(gir, inputs) -> outputs`,
over GIR text and Python values (tensors, numbers), token parameters and results
left out. Compare runs the same graph (or a prefix of it) on two executors.

  interp - the GIR reference interpreter (xacc.ir): the oracle;
  aten   - the ATen executor, what the `cpu` target runs captured graphs on;
  xpuN   - the MLIR backend (with ATen for the nodes it does not lower), what
           XJIT runs graphs captured for `xpuN` on.

`executor_for(device)` is the one place that maps a jit device to the executor
its captured graphs run on (CompiledGraph::create with that device).
"""

from __future__ import annotations

from typing import Any, Protocol

from xacc._C import capture as C



class GraphExecutor(Protocol):
    name: str

    def run(self, gir: str, inputs: list) -> list: ...


def graph_header(gir: str) -> tuple[str, list[str]]:
    """(graph name, parameter types) of the first graph in `gir`."""
    from xacc._src.export.camel import split_header
    for line in gir.splitlines():
        h = split_header(line)
        if h is not None:
            return h[0], [t for _, t in h[1]]
    raise ValueError("no graph header in GIR text")


class InterpExecutor:
    name = "interp"

    def run(self, gir: str, inputs: list) -> list:
        from xacc import ir
        name, params = graph_header(gir)
        it = iter(inputs)
        args = [None if t == "!token" else next(it) for t in params]
        return list(ir.parse(gir, verify=False).interpret(name, *args))


class DeviceExecutor:
    """A graph prepared the way XJIT prepares it for `device`."""

    def __init__(self, device: str) -> None:
        self.device = device
        from xacc._src.capture.device import backend_of
        b = backend_of(device)
        self.name = b["name"] if b is None or not b["native_code"] else f"{device} ({b['name']}: {b['description']})"

    def run(self, gir: str, inputs: list) -> list:
        name, _ = graph_header(gir)
        return list(C.compile_gir(gir, name, device=self.device)(*inputs))


def AtenExecutor() -> DeviceExecutor:  # noqa: N802 - reads like the class it returns
    return DeviceExecutor("cpu")


def executor_for(device: str) -> GraphExecutor:
    """The executor that graphs captured for `device` run on; raises
    xacc.BackendError when this build cannot run `device`."""
    from xacc._src.capture.device import check_device
    check_device(device)
    return DeviceExecutor(device)


def flatten(v: Any, path: str = "") -> list[tuple[str, Any]]:
    """Leaves of a nested output (tensors and scalars) with their paths."""
    if isinstance(v, (list, tuple)):
        out = []
        for i, e in enumerate(v):
            out += flatten(e, f"{path}[{i}]")
        return out
    if isinstance(v, dict):
        out = []
        for k, e in v.items():
            out += flatten(e, f"{path}[{k!r}]")
        return out
    return [(path or "out", v)]
