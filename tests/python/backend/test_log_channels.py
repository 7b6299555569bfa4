"""XACC_LOG for the C++ writers (support/Log.h): one parser with Python's grammar,
so `+mlir` (debug level, which includes info), `+all` and whitespace around an
item turn on every C++ writer of the channel, as they turn on the Python logger.
The tensor half of the MLIR backend once parsed XACC_LOG by hand and ignored
`+mlir`. Each spec runs in a fresh process: C++ reads XACC_LOG once."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = r"""
import torch
import xacc._C as C
e = C.mlir.compile('''graph @g(%x: tensor<f32, [4, 8], cpu>) -> tensor<f32, [4, 8], cpu> {
  %0 = aten.relu(%x) : tensor<f32, [4, 8], cpu>
  %1 = aten.mul.Tensor(%0, %x) : tensor<f32, [4, 8], cpu>
  return %1
}''')
x = torch.randn(4, 8)
(y,) = e(x)
torch.testing.assert_close(y, torch.relu(x) * x)
"""


def channel_lines(spec: str, cache: Path) -> dict[str, list[str]]:
    env = dict(os.environ, XACC_LOG=spec, XACC_CACHE_DIR=str(cache),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    out: dict[str, list[str]] = {"mlir": [], "cache": []}
    for ln in p.stderr.splitlines():
        for ch in out:
            if ln.startswith(f"[xacc:{ch}] "):
                out[ch].append(ln)
    return out


@pytest.mark.parametrize("spec", ["mlir", "+mlir", " mlir , graphs", "+all"])
def test_every_mlir_writer_follows_the_spec(spec, tmp_path):
    got = channel_lines(spec, tmp_path / "cache")
    assert any("compiled" in ln for ln in got["mlir"]), (spec, got)
    assert bool(got["cache"]) == (spec == "+all"), (spec, got)


def test_cache_channel_at_debug_level(tmp_path):
    got = channel_lines("+cache", tmp_path / "cache")
    assert got["cache"] and not got["mlir"], got
