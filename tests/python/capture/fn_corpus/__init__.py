"""A corpus of small functions written the way PyTorch users write them
(issue 18, criterion 4): builtins, the standard library, containers, control
flow, strings, user classes, closures and generators, NumPy interop, torch
APIs, and mixtures. Each is compared with eager under xacc.jit, and its graph
breaks with torch.compile(backend="eager")'s (benchmarks/capture/corpus.py,
tests/python/capture/test_corpus.py).

A function joins the corpus by its `@case(...)` decorator in any module of this
package; `cases()` imports every module and returns what the decorators
registered (no list is kept by hand). The decorator's arguments describe the
call: an `Arg` (T, V, S, I, B, ...) is a fresh random tensor per call, anything
else is passed as a deep copy of the literal.
"""

from __future__ import annotations

import copy
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any, Callable

import torch


class Arg:
    """A fresh value per call (a random tensor); `make` reads torch's RNG."""

    def __init__(self, make: Callable[[], Any], label: str) -> None:
        self.make = make
        self.label = label

    def __repr__(self) -> str:
        return self.label


T = Arg(lambda: torch.randn(10, 10), "T")                     # 10x10 float
V = Arg(lambda: torch.randn(10), "V")                         # vector of 10
S = Arg(lambda: torch.randn(()), "S")                         # 0-d float
I = Arg(lambda: torch.randint(0, 10, (10, 10)), "I")          # 10x10 int64 in [0, 10)
IV = Arg(lambda: torch.randint(0, 10, (10,)), "IV")           # int64 vector
B = Arg(lambda: torch.randn(10, 10) > 0, "B")                 # 10x10 bool
P = Arg(lambda: torch.rand(10, 10) + 0.1, "P")                # 10x10 positive
T3 = Arg(lambda: torch.randn(2, 10, 10), "T3")                # batch of 2


@dataclass
class Case:
    name: str           # "<area>.<function>"
    area: str           # the module's name
    fn: Callable
    spec: tuple

    def make_args(self, seed: int) -> tuple:
        torch.manual_seed(seed)
        return tuple(a.make() if isinstance(a, Arg) else copy.deepcopy(a) for a in self.spec)


_CASES: dict[str, Case] = {}


def case(*spec: Any) -> Callable[[Callable], Callable]:
    """Registers the decorated function with the arguments `spec` describes."""
    def register(fn: Callable) -> Callable:
        area = fn.__module__.rsplit(".", 1)[-1]
        name = f"{area}.{fn.__name__}"
        assert name not in _CASES, f"two corpus functions named {name}"
        _CASES[name] = Case(name, area, fn, spec)
        return fn
    return register


def cases() -> list[Case]:
    """Every registered function, in module then definition order."""
    for m in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{m.name}")
    return list(_CASES.values())
