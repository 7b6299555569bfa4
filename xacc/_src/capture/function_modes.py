"""The host's half of Note [Function modes in the frame]
(csrc/lib/capture/translate/TranslateModes.cpp): which `__torch_function__`
call eager would make for a torch call while a TorchFunctionMode the frame
entered is on the stack.

`probe(rec, fn, args, kwargs)` makes the call on the metas, as the recorder
makes every call, with a probe mode pushed. Torch itself decides whether and
how the call reaches `__torch_function__` (Tensor.add for `t + 1`, a getset's
`__get__` for `t.shape`, Tensor.__len__ for `len(t)`, nothing for a functorch
primitive), so what the probe sees at the outermost call is exactly what
eager's mode would get; it stops the call there, before anything ran. Torch
calls made by the capture's own machinery further in (meta kernels, the
recorder reading a result's dtype and shape, decompositions) are not the
program's: the probe lets them through unseen. A call the probe meets further
in from library Python code that did not ask the mode first (eager would hand
the mode that inner call, not the outer one) is a break: the translator does
not follow such a function's body here.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from xacc._src.capture.breaks import GraphBreak

_OVERRIDES = os.path.normcase(os.path.abspath(sys.modules["torch.overrides"].__file__))
_CAPTURE_DIR = os.path.normcase(os.path.dirname(os.path.abspath(__file__)))


class _Seen(BaseException):
    """The outermost __torch_function__ call (a BaseException: it passes the
    recorder's handlers, which turn exceptions into breaks)."""

    def __init__(self, func: Any, types: Any, args: Any, kwargs: Any) -> None:
        super().__init__()
        self.call = (func, types, args, kwargs)


def _file(frame: Any) -> str:
    return os.path.normcase(os.path.abspath(frame.f_code.co_filename))


class _Probe(TorchFunctionMode):
    def __init__(self, runner: Any, fn: Any) -> None:
        super().__init__()
        self.runner = runner  # the code object of the frame that calls fn (Recorder.call)
        self.fn_code = getattr(fn, "__code__", None)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        between = []
        f = sys._getframe(1)
        while f is not None and f.f_code is not self.runner:
            if _file(f) != _OVERRIDES:  # handle_torch_function & co.
                between.append(f)
            f = f.f_back
        if f is None:
            raise GraphBreak("GB023", "a TorchFunctionMode call outside the traced call")
        # The call itself: made from C (nothing between), or a Python function
        # that hands the mode itself (Tensor.__len__) or the call it was given.
        if not between or (len(between) == 1 and between[0].f_code in (self.fn_code, getattr(func, "__code__", None))):
            raise _Seen(func, types, args, kwargs)
        if any(_file(b).startswith(_CAPTURE_DIR) for b in between):
            # The capture's own reads and meta runs, not the program's calls.
            return func(*args, **(kwargs or {}))
        raise GraphBreak("GB023", f"{getattr(func, '__name__', func)} called under a TorchFunctionMode from "
                                  "library code the translator does not follow")


def probe(rec: Any, fn: Any, args: tuple, kwargs: dict) -> tuple:
    """("mode", func, types, args, kwargs) as eager's mode would get them, or
    ("ran", result) when the call reached no __torch_function__ (then it was
    recorded, as a call without a mode is)."""
    from xacc._src.capture.recorder import Recorder
    try:
        with _Probe(Recorder.call.__code__, fn):
            out = rec.call(fn, args, kwargs)
    except _Seen as seen:
        return ("mode",) + seen.call
    return ("ran", out)
