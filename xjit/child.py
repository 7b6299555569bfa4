"""`python -m xjit` in the interpreters its program starts (issue 25).

Note [xjit in child interpreters]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Distributed training runs the model in worker processes: torch.multiprocessing
.spawn and multiprocessing's spawn/forkserver start a fresh `python -c ...`,
torchrun starts `python -u train.py` per rank. The frame hook lives in an
interpreter, so each of those must install it itself. How they learn to:

* `python -m xjit` sets XACC_XJIT to its own options (shell syntax) and puts
  xjit/_boot first on PYTHONPATH. Every child interpreter inherits the
  environment, and site.py imports `sitecustomize` at start-up: ours (it chains
  to any other sitecustomize on the path first) calls xjit.__main__.start_worker, which does
  what `python -m xjit` does before running a script -- device erasure, the
  hook with the same options, the summary at exit -- and turns capture on for
  the rest of the interpreter's life.
* Why not patch the launchers instead (multiprocessing.spawn.get_command_line,
  torchrun's worker command)? Each launcher builds its command differently and
  privately (torchrun's agent, elastic restarts, forkserver, a user's own
  subprocess.Popen([sys.executable, ...])); the environment is the one thing
  all of them pass on unchanged. PYTHONSTARTUP runs only for interactive
  sessions, and a `.pth` file would have to be installed into site-packages.
* Only interpreters whose environment still holds both run under xjit: a
  launcher that scrubs the environment or runs `python -I`/`-E`/`-S` starts
  plain workers (they still run correctly, uncaptured).
* Forked workers (fork start method, forkserver's children) inherit the hook
  but leave through os._exit, which skips atexit: a multiprocessing after-fork
  callback registers the summary as a multiprocessing finalizer there too
  (printed once either way). A worker forked by the program's own interpreter
  (`python -m xjit script.py` using the fork start method) becomes a worker the
  same way (watch_forks): its counters and compile records start empty, so its
  summary counts its own work only; the compiled graphs it inherited stay.

The summary is per rank: its header names the rank (the default process
group's rank when the script joined one, else $RANK), and it is written to
stderr in one write so that two ranks' summaries do not interleave line by line.
`--export DIR` writes DIR/rank<r> per worker. --pgo is not passed on (one
profile file, many writers)."""

from __future__ import annotations

import os
import shlex
import sys

from xacc._src.config import E

ENV = E.XJIT
BOOT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")
STARTED = False  # this interpreter runs under xjit since start-up (XACC_XJIT; __main__.start_worker)
REPORT = None  # () -> the worker's summary text, or None when it has nothing to say (set by start_worker)
_printed = False


def option_argv(ns: object) -> list[str]:
    """The xjit options of `ns` (parsed by __main__'s parser) as command-line words."""
    out = ["--device", ns.device, "--hot-calls", str(ns.hot_calls), "--precision", ns.precision,
           "--tolerance", repr(ns.tolerance), "--atol", repr(ns.atol), "--rtol", repr(ns.rtol)]
    for flag in ("explain", "fullgraph", "compare"):
        if getattr(ns, flag):
            out.append("--" + flag)
    for opt in ("backend", "export", "cache"):
        if getattr(ns, opt):
            out += ["--" + opt, getattr(ns, opt)]
    return out


def propagate(ns: object) -> None:
    """Makes every interpreter this one starts from now on run under xjit with ns's options."""
    os.environ[ENV] = shlex.join(option_argv(ns))
    path = os.environ.get("PYTHONPATH", "")
    if BOOT_DIR not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = BOOT_DIR + (os.pathsep + path if path else "")


def rank() -> int | None:
    """This worker's rank: the default process group's, the one it joined
    (device_dist records it), else $RANK; None outside distributed runs."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank()
    except Exception:  # noqa: BLE001 - a half torn-down group: use what was recorded
        pass
    from xacc._src.capture import device_dist
    if device_dist.STATE["rank"] is not None:
        return device_dist.STATE["rank"]
    r = os.environ.get("RANK")
    return int(r) if r and r.isdigit() else None


def after_start() -> None:
    """Called once the worker's hook is installed: its summary at its exit."""
    global STARTED
    STARTED = True
    import atexit
    import multiprocessing.util as mp_util
    atexit.register(finish)
    mp_util.register_after_fork(sys.modules[__name__], _after_fork)


def watch_forks(on_fork: object, report: object) -> None:
    """Makes multiprocessing children forked from this interpreter (not a
    worker itself) workers: `on_fork()` in the child right after the fork,
    `report()` (its summary) at its exit."""
    global _FORK
    import multiprocessing.util as mp_util
    _FORK = (on_fork, report)
    mp_util.register_after_fork(sys.modules[__name__], _forked)


_FORK = None


def _forked(module: object) -> None:
    global STARTED, REPORT, _printed
    if STARTED:  # a worker's own fork: after_start's callback does it
        return
    on_fork, report = _FORK
    on_fork()
    STARTED, REPORT, _printed = True, report, False
    _after_fork(module)


def _after_fork(_module: object) -> None:
    import multiprocessing.util as mp_util
    mp_util.Finalize(None, finish, exitpriority=-100)


def finish(text: str | None = None) -> None:
    """Writes this worker's summary (once): atexit in a spawned interpreter, a
    multiprocessing finalizer in a forked one."""
    global _printed
    if _printed:
        return
    _printed = True
    if text is None:
        text = REPORT()
        if text is None:
            return
    data = (text if text.endswith("\n") else text + "\n").encode(errors="replace")
    try:
        sys.stderr.flush()
        os.write(2, data)
    except OSError:
        pass
