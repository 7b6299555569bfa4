"""`xacc.jit`: capture PyTorch functions and modules with the XJIT frame hook.

    @xacc.jit
    def f(x, y): ...

    model = xacc.jit(MyModel())          # nn.Module: calls go through the hook
    f = xacc.jit(f, fullgraph=True)      # graph breaks raise xacc.Unsupported

`xacc.jit` the attribute is the function `jit` (xacc/__init__.py imports it
from this module); this module re-exports the public names of its
implementation, xacc/_src/jit.py.
"""

from __future__ import annotations

from xacc._src.jit import CompiledModule, capture, check_device, counters, jit, reset

__all__ = ["jit", "capture", "reset", "counters", "CompiledModule", "check_device"]
