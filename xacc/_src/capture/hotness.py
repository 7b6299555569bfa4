"""Note [Hot frames]: which frames whole-script mode translates.

`python -m xjit` hooks every call of every user function. Translating a frame
costs milliseconds to seconds; it pays only when the frame runs again. So under
a policy of `hot_calls = N > 1` (xjit's default is 2; `xacc.jit` keeps N = 1,
translation on the first call) a frame is translated at its N-th call, and is
left alone, running as plain Python, before that. Frames that can never pay are
left alone for good (the hook then skips them at no cost):
  * a constructor (`__init__`, `__new__`, `__post_init__`, or a method whose
    `self` is an nn.Module whose Module.__init__ has not run yet): it stores
    attributes on a new object once; translating it gives breaks, no graph;
  * a frame whose arguments carry no tensor and no module (script mains,
    argument parsing, data-loading glue): nothing in it can be a graph input.
A frame whose translation gave no graph is marked skip by convert._skip and is
not translated again; with `xjit --cache` that negative result is stored and
later processes skip the frame too (aot/store.py, note_skip).

Leaving a frame alone never changes results: it runs exactly as plain Python.
The decision reads only the call count and the arguments' types, so it costs
one dictionary update per hook miss (hits never reach Python).

LEFT_ALONE records each frame left alone, with why, for explain and the xjit
summary (the "set-up code"); translated frames carry the call number at which
they were translated in CompileEvent.calls.
"""

from __future__ import annotations

import threading
import types
import weakref
from dataclasses import dataclass
from typing import Any

import torch

# The reasons a frame is left alone (explain prints them).
FIRST_CALLS = "ran fewer times than the hot-call threshold"
CONSTRUCTOR = "constructor: set-up code that runs once per object"
NO_TENSORS = "no tensor or module among its arguments"

_CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__", "__init_subclass__", "__set_name__"})


@dataclass
class ColdFrame:
    """A frame left alone (runs as plain Python)."""

    function: str
    filename: str
    lineno: int
    reason: str
    calls: int = 1  # calls seen by the hook while it was left alone
    permanent: bool = False  # marked skip: later calls no longer reach the callback


# (qualname, filename, first line) -> ColdFrame: names, not code objects, so a
# record never keeps a function alive (same rule as events.py).
LEFT_ALONE: dict[tuple, ColdFrame] = {}
_calls: "weakref.WeakKeyDictionary[types.CodeType, int]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def _key(code: types.CodeType) -> tuple:
    return (code.co_qualname, code.co_filename, code.co_firstlineno)


def _under_construction(a: Any) -> bool:
    # Module.__init__ creates _modules first (torch/nn/modules/module.py): a module
    # without it in its __dict__ is being built.
    return isinstance(a, torch.nn.Module) and "_modules" not in a.__dict__


def permanent_reason(code: types.CodeType, args: tuple, has_tensors: bool) -> str | None:
    """Why `code` can never pay for its translation, or None."""
    if code.co_name in _CONSTRUCTORS or (args and code.co_argcount and _under_construction(args[0])):
        return CONSTRUCTOR
    if not has_tensors:
        return NO_TENSORS
    return None


def note_call(code: types.CodeType, hot_calls: int) -> int | None:
    """Counts a hook miss of `code`; returns the call number when the frame is
    to be translated now, None when this call runs as plain Python."""
    with _lock:
        n = _calls.get(code, 0) + 1
        _calls[code] = n
    if n >= hot_calls:
        LEFT_ALONE.pop(_key(code), None)
        return n
    rec = LEFT_ALONE.get(_key(code))
    if rec is None:
        LEFT_ALONE[_key(code)] = ColdFrame(code.co_qualname, code.co_filename, code.co_firstlineno, FIRST_CALLS, n)
    else:
        rec.calls = n
    return None


def leave_alone(code: types.CodeType, reason: str) -> None:
    """Records a frame left alone for good (the caller marks it skip)."""
    with _lock:
        n = _calls.pop(code, 0) + 1
    LEFT_ALONE[_key(code)] = ColdFrame(code.co_qualname, code.co_filename, code.co_firstlineno, reason, n, True)


def clear() -> None:
    with _lock:
        _calls.clear()
    LEFT_ALONE.clear()
