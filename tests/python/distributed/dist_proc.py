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
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
TIMEOUT = 600  # seconds per launch: 2 ranks importing torch on a loaded 2-core machine


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args: list[str], timeout: int = TIMEOUT, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs `python args...` from the repository root, in a session of its own;
    on timeout kills the session (launcher and workers) and fails the test."""
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
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            raise AssertionError(f"python {' '.join(args)} ran past {timeout} s:\nstdout: {out[-2000:]}\n"
                                 f"stderr: {err[-3000:]}") from None
        # The scripts end through scripts/teardown.py (Note [Gloo group at exit]): a
        # group alive at the interpreter's exit fails the run, except where a script
        # declares it (FSDP2, plain PyTorch's). Only such a run, if it also ended in
        # gloo's exit abort, is made again, once; any other exit status fails at once.
        if p.returncode == 0 or attempt == 2 or GROUP_AT_EXIT not in err or GLOO_EXIT_ABORT not in err:
            break
        e["MASTER_PORT"] = str(free_port())
    assert p.returncode == 0, f"python {' '.join(args)} exited with {p.returncode}:\n{err[-4000:]}"
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


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
