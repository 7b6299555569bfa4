"""Runs one fidelity case in its own process, eagerly or under xacc.jit.

A case is a script. Its functions are wrapped with `jit(...)`, which the
prelude defines as the identity when the process runs eagerly and as
`xacc.jit(f, device=DEVICE, ...)` when it runs jitted; each run is a fresh
interpreter, so nothing one run captured or cached reaches another. The tests
compare what the two processes show: stdout, stderr, exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The tree whose xacc and xjit the processes import (another checkout's, to
# check a case against it: XACC_FIDELITY_ROOT=/path/to/checkout).
ROOT = Path(os.environ.get("XACC_FIDELITY_ROOT") or Path(__file__).resolve().parents[3])

PRELUDE = '''\
import os as _os
_DEVICE = _os.environ.get("FIDELITY_DEVICE", "")
if _DEVICE:
    import xacc as _xacc

    def jit(f=None, **kw):
        return _xacc.jit(f, device=_DEVICE, **kw) if f is not None else lambda g: jit(g, **kw)
else:
    def jit(f=None, **kw):
        return f if f is not None else lambda g: g
'''


def env(device: str = "") -> dict:
    e = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
             FIDELITY_DEVICE=device, PYTHONDONTWRITEBYTECODE="1")
    e.pop("PYTHONBREAKPOINT", None)
    return e


def write(tmp: Path, body: str, name: str = "case.py") -> Path:
    p = tmp / name
    p.write_text(PRELUDE + body)
    return p


def run(script: Path, device: str = "", *, args: tuple = (), stdin: str | None = None,
        timeout: float = 600) -> subprocess.CompletedProcess:
    """`python script args` eagerly (device "") or with the prelude's jit on `device`."""
    return subprocess.run([sys.executable, str(script), *args], cwd=script.parent, env=env(device),
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def has_xpu() -> bool:
    from xacc._C import capture
    return capture.device_available("xpu0")


def devices() -> list:
    import pytest
    return ["cpu", pytest.param("xpu0", marks=pytest.mark.skipif(not has_xpu(), reason="no MLIR backend"))]


def same(eager: subprocess.CompletedProcess, jitted: subprocess.CompletedProcess, what: str = "") -> None:
    """The two runs are indistinguishable: stdout, stderr and exit status."""
    detail = (f"{what}\n--- eager (rc {eager.returncode}) ---\n{eager.stdout}{eager.stderr}"
              f"\n--- jitted (rc {jitted.returncode}) ---\n{jitted.stdout}{jitted.stderr}")
    assert jitted.stdout == eager.stdout, detail
    assert jitted.stderr == eager.stderr, detail
    assert jitted.returncode == eager.returncode, detail
