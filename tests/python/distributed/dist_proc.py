"""Helpers of the distributed tests: real processes (2 ranks over gloo on the
loopback interface), a free port per launch, a time bound per launch after which
the whole process group of the launch is killed (no worker outlives its test),
and the per-rank summaries of `python -m xjit` read back from stderr."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
TIMEOUT = 600  # seconds per launch: 2 ranks importing torch on a loaded 2-core machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args: list[str], timeout: int = TIMEOUT, env: dict | None = None,
        relaunch_hang: bool = True) -> subprocess.CompletedProcess:
    """Runs `python args...` from the repository root, in a session of its own;
    on timeout has every process write its thread stacks, kills the session
    (launcher and workers), and relaunches once (`relaunch_hang`) with the stacks
    as a warning; a second timeout fails the test with them."""
    e = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
             MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), OMP_NUM_THREADS="1")
    e.pop("XACC_XJIT", None)
    e.update(env or {})
    for attempt in (1, 2):
        p = subprocess.Popen([sys.executable, *args], cwd=ROOT, env=e, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # Note [A launch that hangs]: CI's 3.12 suite hung in one launch twice
            # with nothing on stderr (session 23; ddp_split.py xacc in session 26,
            # stop 46); session 23's was traced to a deadlock inside
            # ~ProcessGroupGloo (docs/distributed.md). 20 direct launches of
            # ddp_split.py xacc on 3.12 quiet, 19 with two busy processes beside
            # them and 15 on 3.11 all ended in 5-11 s. The stacks say where each
            # process waited; the relaunch keeps one rare hang from failing the
            # suite, and a second one in a row still fails it.
            out, err = _stacks_then_kill(p)
            what = (f"python {' '.join(args)} ran past {timeout} s:\nstdout: {out[-2000:]}\n"
                    f"stderr (with every process's thread stacks): {err[-20000:]}")
            if attempt == 2 or not relaunch_hang:
                raise AssertionError(what) from None
            warnings.warn(f"relaunched after a hang: {what}", stacklevel=2)
            e["MASTER_PORT"] = str(free_port())
            continue
        # The scripts end through scripts/teardown.py (Note [Gloo group at exit]): a
        # group alive at the interpreter's exit fails the run, except where a script
        # declares it (FSDP2, plain PyTorch's). Only such a run, if it also ended in
        # gloo's exit abort, is made again, once; any other exit status fails at once.
        if p.returncode == 0 or attempt == 2 or GROUP_AT_EXIT not in err or GLOO_EXIT_ABORT not in err:
            break
        e["MASTER_PORT"] = str(free_port())
    assert p.returncode == 0, f"python {' '.join(args)} exited with {p.returncode}:\n{err[-4000:]}"
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def _stacks_then_kill(p: subprocess.Popen) -> tuple[str, str]:
    """A launch past its bound: every process of its session writes its threads'
    Python stacks (scripts/teardown.py registers STACK_SIGNAL), then the session
    is killed; returns what the launch wrote."""
    try:
        os.killpg(p.pid, STACK_SIGNAL)
        time.sleep(5)  # the dumps are written by each process's own faulthandler
    except ProcessLookupError:
        pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return p.communicate()


STACK_SIGNAL = signal.SIGUSR1  # = teardown.STACK_SIGNAL
GLOO_EXIT_ABORT = "terminate called without an active exception"
GROUP_AT_EXIT = "process group threads still run at the interpreter's exit"  # = teardown.GROUP_AT_EXIT


def torchrun(script: str, *args: str) -> list[str]:
    return ["-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", str(free_port()),
            str(SCRIPTS / script), *args]


_HEADER = re.compile(r"^== xjit summary(?: \((.*)\))? ==$", re.M)


def summaries(stderr: str) -> list[tuple[str, str]]:
    """(label, block) of every xjit summary on stderr, in order: the label is
    "rank R, pid P", "worker pid P", or "" for the launching interpreter."""
    marks = list(_HEADER.finditer(stderr))
    return [(m.group(1) or "", stderr[m.start():marks[i + 1].start() if i + 1 < len(marks) else len(stderr)])
            for i, m in enumerate(marks)]


def rank_summaries(stderr: str) -> dict[int, str]:
    """rank -> that rank's summary block."""
    out: dict[int, str] = {}
    for label, block in summaries(stderr):
        m = re.fullmatch(r"rank (\d+), pid \d+", label)
        if m:
            assert int(m.group(1)) not in out, f"two summaries for rank {m.group(1)}:\n{stderr[-4000:]}"
            out[int(m.group(1))] = block
    return out


def graphs(summary: str) -> int:
    m = re.search(r"^graphs: (\d+)$", summary, re.M)
    assert m, summary
    return int(m.group(1))


def max_param_diff(a_path: str, b_path: str) -> float:
    a, b = torch.load(a_path), torch.load(b_path)
    assert sorted(a) == sorted(b)
    return max((a[k] - b[k]).abs().max().item() for k in a)
