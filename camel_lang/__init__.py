"""camel_lang: Camel modules from Python.

* ``camel_lang.load("m.cml")`` compiles a Camel module (and its imports) and
  returns a Python module object whose attributes are the module's exported
  functions. They take and return Python values: int, float, bool, str, lists
  (Camel arrays), tuples, dicts (Camel structs) and ``torch.Tensor`` (Camel
  tensors, passed without copies: the Camel function sees the same storage and
  autograd records what it does). Arguments are checked against the declared
  parameter types (an int is accepted where a float is declared).
* ``camel_lang.check(path)`` runs the front end only; ``camel_lang.run(path)``
  runs ``main`` and returns its exit status.
* ``import m`` finds ``m.cml`` on ``sys.path`` once ``camel_lang`` is imported
  (``install_import_hook()``; Python modules of the same name win).

Compile errors raise ``xacc.CompileError`` and Camel runtime errors
``xacc.ExecutionError``, both carrying located diagnostics. ``python -m
camel_lang ARGS`` runs the ``camel`` executable (``__main__.py``).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import types
from pathlib import Path
from typing import Any, Sequence

__all__ = ["load", "check", "run", "gir", "CamelModule", "CamelFunction", "install_import_hook",
           "uninstall_import_hook"]


def _camel() -> Any:
    # Imported on first use: `python -m camel_lang` only launches the executable
    # and must not pay for loading xacc._C (and libtorch).
    from xacc import _C

    if not hasattr(_C, "camel"):
        raise ImportError("xacc._C was built without the Camel front end and runtime")
    return _C.camel


class CamelFunction:
    """An exported Camel function (all overloads of one name)."""

    def __init__(self, program: Any, name: str, signatures: list[dict[str, Any]]) -> None:
        self._program = program
        self.__name__ = name
        self.__qualname__ = name
        self.signatures = signatures
        self.__doc__ = "\n".join(_signature_text(s) for s in signatures)

    def __call__(self, *args: Any, with_args: Sequence[Any] = ()) -> Any:
        """Calls the function; `with_args` are its with-arguments (`f<w1, w2>(...)`)."""
        return self._program.call(self.__name__, tuple(args), tuple(with_args))

    def __repr__(self) -> str:
        return f"<Camel function {self.__doc__.splitlines()[0]}>"


def _signature_text(s: dict[str, Any]) -> str:
    withs = ", ".join(f"{n}: {t}" for n, t in zip(s["with_params"], s["with_types"]))
    params = ", ".join(f"{n}: {t}" for n, t in zip(s["params"], s["param_types"]))
    return (f"with <{withs}> " if withs else "") + f"{s['name']}({params}): {s['result']}"


class CamelModule(types.ModuleType):
    """A loaded Camel module: one attribute per exported function."""

    def __init__(self, name: str, path: str, program: Any) -> None:
        super().__init__(name)
        self.__file__ = path
        self._program = program
        self._bind(program)

    def _bind(self, program: Any) -> None:
        self._program = program
        names: dict[str, list[dict[str, Any]]] = {}
        for e in program.exports:
            names.setdefault(e["name"], []).append(e)
        for name, sigs in names.items():
            setattr(self, name, CamelFunction(program, name, sigs))
        self.__all__ = sorted(names)

    def run_main(self) -> int:
        """Runs the module's `main` and returns its exit status."""
        return self._program.run_main()

    def __repr__(self) -> str:
        return f"<Camel module {self.__name__!r} from {self.__file__!r}>"


def _compile(path: str | os.PathLike[str], include_dirs: Sequence[str], passes: str | None,
             require_main: bool = False) -> Any:
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"no Camel module at {p!r}")
    kwargs: dict[str, Any] = {"include_dirs": [os.fspath(d) for d in include_dirs],
                              "require_main": require_main}
    if passes is not None:
        kwargs["passes"] = passes
    return _camel().compile(os.path.abspath(p), **kwargs)


def load(path: str | os.PathLike[str], *, name: str | None = None,
         include_dirs: Sequence[str] = (), passes: str | None = None) -> CamelModule:
    """Compiles the Camel module at `path` and returns it as a Python module.

    `passes` is the GIR pass pipeline (default: the `camel run` default;
    "none" runs none)."""
    program = _compile(path, include_dirs, passes)
    return CamelModule(name or Path(path).stem, os.path.abspath(os.fspath(path)), program)


def check(path: str | os.PathLike[str], *, include_dirs: Sequence[str] = ()) -> None:
    """Runs the front end on `path`; raises xacc.CompileError on errors."""
    _compile(path, include_dirs, "none")


def run(path: str | os.PathLike[str], *, include_dirs: Sequence[str] = ()) -> int:
    """Runs the program `path` (its `main`) in this process; returns the exit status."""
    return _compile(path, include_dirs, None, require_main=True).run_main()


def gir(module: CamelModule) -> str:
    """The lowered (and optimised) graph IR of a loaded module, as text."""
    return module._program.gir


# ---- import hook ---------------------------------------------------------------


class _CamelLoader(importlib.abc.Loader):
    def __init__(self, path: str) -> None:
        self.path = path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> CamelModule:
        return CamelModule(spec.name, self.path, _compile(self.path, (), None))

    def exec_module(self, module: types.ModuleType) -> None:
        pass  # compiled in create_module; Camel modules have no import-time effects


class CamelFinder(importlib.abc.MetaPathFinder):
    """Finds `<name>.cml` for `import name` on sys.path (or a package's __path__)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        leaf = fullname.rpartition(".")[2]
        for entry in (path if path is not None else sys.path):
            base = entry or os.getcwd()
            candidate = os.path.join(base, leaf + ".cml")
            if os.path.isfile(candidate):
                loader = _CamelLoader(os.path.abspath(candidate))
                return importlib.machinery.ModuleSpec(fullname, loader, origin=loader.path)
        return None


_FINDER = CamelFinder()


def install_import_hook() -> None:
    """Lets `import m` load `m.cml` (after Python's own finders)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


def uninstall_import_hook() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


install_import_hook()
