"""`python -m xjit [--device D] examples/<model>.py` prints the same results as
the plain script (eager PyTorch), on the ATen executor (cpu) and on the MLIR
backend (xpu0). Real processes, real scripts."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# script -> the script whose eager run is the reference (the CUDA version of
# the tiny GPT cannot run eagerly without a GPU; it must match the CPU one).
EXAMPLES = {"mlp.py": "mlp.py", "tiny_gpt.py": "tiny_gpt.py", "tiny_gpt_cuda.py": "tiny_gpt.py",
            "numpy_mlp.py": "numpy_mlp.py"}


def _run(args):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def _has_xpu():
    from xacc._C import capture
    return capture.device_available("xpu0")


@pytest.mark.parametrize("device", ["cpu", "xpu0"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_matches_eager(example, device):
    if device.startswith("xpu") and not _has_xpu():
        pytest.skip("built without the MLIR backend")
    script = str(ROOT / "examples" / example)
    eager = _run([str(ROOT / "examples" / EXAMPLES[example])]).stdout
    got = _run(["-m", "xjit", "--device", device, script])
    assert got.stdout == eager, f"eager:\n{eager}\nxjit --device {device}:\n{got.stdout}\n{got.stderr[-2000:]}"
    assert "graphs: 0" not in got.stderr, got.stderr  # something was captured
    assert "internal errors (fell back to Python): 0" in got.stderr, got.stderr


def test_numpy_example_is_one_graph_without_numpy_breaks():
    """NumPy capture (issue 9): predict() mixes NumPy pre/post-processing with a
    torch model and is captured whole; the only breaks are the constructor's."""
    got = _run(["-m", "xjit", str(ROOT / "examples" / "numpy_mlp.py")])
    assert "graphs: 1" in got.stderr, got.stderr
    assert "GB021" not in got.stderr and "GB018" not in got.stderr, got.stderr
