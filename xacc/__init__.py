"""xacc: an AI compiler frontend.

* ``xacc.ir`` — the graph IR (GIR): parse, print, verify, passes, interpreter.
* ``xacc.jit`` — capture PyTorch functions and modules (the XJIT frame hook);
  ``xacc.explain`` — what was captured, where it broke and why;
  ``xacc.precision_report`` — with ``precision="auto"``, what ran in bfloat16 and the measured error;
  ``xacc.export`` — every artifact of a capture written to a directory with an index.html;
  ``xacc.debug.compare`` — plain Python vs ATen executor vs compiled target, first divergent node;
  ``xacc.pgo`` — profile-guided optimization (``xacc.jit(fn, pgo=True)``).
* ``xacc.aot`` / ``xacc.load`` — one artifact file with a function's or module's compiled entries,
  loaded in another process with no capture or compile (docs/aot.md).
* errors — ``XaccError`` and its subclasses; every user-visible failure is one.

The public API is the explicit list in ``__all__``; everything else is private.
"""

from __future__ import annotations

from xacc.errors import (ArtifactError, BackendError, CompileError, ConfigError, ExecutionError, Unsupported,
                         XaccError)
from xacc import debug, pgo
from xacc._src.export import export
from xacc.explain import explain
from xacc.jit import jit
from xacc._src.amp import reports_of as precision_report
from xacc._src.aot.api import aot, load

__version__ = "0.1.0"

__all__ = [
    "jit",
    "explain",
    "precision_report",
    "export",
    "debug",
    "aot",
    "load",
    "pgo",
    "XaccError",
    "CompileError",
    "ExecutionError",
    "BackendError",
    "Unsupported",
    "ArtifactError",
    "ConfigError",
    "__version__",
]
