"""Runs a script as plain python does, with torch.compile on its model: the
first nn.Module the script calls (its top-level model; the modules that model
calls inside are part of what is compiled) is compiled in place with
`Module.compile()` just before that call, and every later call of it runs the
compiled module. Nothing else in the script changes. The torch.compile anchor
of run.py (`--compiled`):

    python benchmarks/xjit_script/compiled.py [--backend NAME] SCRIPT.py [ARGS...]

--backend: torch.compile's backend (default inductor; the test uses "eager").
"""

from __future__ import annotations

import os
import runpy
import sys

import torch


def compile_first_module(backend: str) -> None:
    original = torch.nn.Module.__call__

    def first_call(self, *args, **kwargs):
        # Restored before anything else, so no later call (nested or not) sees this hook.
        torch.nn.Module.__call__ = original
        self.compile(backend=backend)
        return self(*args, **kwargs)

    torch.nn.Module.__call__ = first_call


def main() -> None:
    args = sys.argv[1:]
    backend = "inductor"
    if args[:1] == ["--backend"] and len(args) >= 2:
        backend, args = args[1], args[2:]
    if not args:
        sys.exit(__doc__)
    sys.argv = args
    sys.path[0] = os.path.dirname(os.path.abspath(args[0]))  # as `python SCRIPT.py` sets it
    compile_first_module(backend)
    runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
