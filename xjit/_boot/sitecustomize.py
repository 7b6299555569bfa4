"""Start-up of Python interpreters launched under `python -m xjit` (Note [xjit in
child interpreters], xjit/child.py). `python -m xjit` puts this directory first
on PYTHONPATH and sets XACC_XJIT to its options; every interpreter started from
it (multiprocessing spawn and forkserver, torch.multiprocessing.spawn, torchrun's
workers, a subprocess running python) imports this module at start-up (site.py)
and installs the frame hook with those options. Any other sitecustomize on the
path (a distribution's, a virtual environment's) still runs, first, as Python
would have run it; the hook is installed after it."""


def _chain() -> None:
    import importlib.machinery  # not imported by importlib.util on 3.13
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


def _start() -> None:
    import os
    import sys

    # The name is spelled here, not read from xacc's table (Note [Environment
    # names]): this runs in every child interpreter before xacc may be imported.
    if not os.environ.get("XACC_XJIT"):
        return
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if root not in sys.path:
        sys.path.append(root)  # last: the interpreter's own imports keep their order
    try:
        from xjit.__main__ import start_worker
        start_worker(os.environ["XACC_XJIT"])
    except Exception as e:  # noqa: BLE001 - the program still runs, as plain Python, and says why
        print(f"xjit: worker {os.getpid()} runs without capture: {type(e).__name__}: {e}", file=sys.stderr)


_chain()
_start()
