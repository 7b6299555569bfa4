"""The call a break function makes for a draw of a global random generator
(Note [Global RNG draws at run time] in TranslateDraws.cpp).

`Draw(method, where, args, kwargs)()` is `method(*args, **kwargs)`, `method`
bound to the global generator the translator saw (`where` names it: module,
attribute, method name, e.g. ("numpy.random.mtrand", "_rand", "uniform")).
A bound method pickles a copy of its generator, so a Draw pickles (in an AOT
artifact) by `where`: loaded, it draws from the loading process's global
generator, as the frame does in eager.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable


class Draw:
    __slots__ = ("method", "where", "args", "kwargs")

    def __init__(self, method: Callable[..., Any], where: tuple, args: tuple, kwargs: dict) -> None:
        self.method, self.where, self.args, self.kwargs = method, where, args, kwargs

    def __call__(self) -> Any:
        return self.method(*self.args, **self.kwargs)

    def __reduce__(self) -> tuple:
        return (by_name, (self.where, self.args, self.kwargs))

    def __repr__(self) -> str:
        module, attr, name = self.where
        return f"<draw {module}.{attr}.{name}{self.args!r} {self.kwargs!r}>"


def by_name(where: tuple, args: tuple, kwargs: dict) -> Draw:
    module, attr, name = where
    return Draw(getattr(getattr(importlib.import_module(module), attr), name), where, args, kwargs)
