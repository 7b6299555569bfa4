"""MKL chooses its vector-math (VML) kernels when xacc is imported, on the importing
thread (Note [MKL's first vector-math call], csrc/lib/backend/aten/AtenOps.cpp).

ATen computes tanh, exp, erf, ... of contiguous float tensors with MKL's VML, in
chunks of 2048 elements over the thread pool, and MKL picks the kernels lazily in
the process's first VML call. When that first call ran on two threads at once, one
thread's chunk could come from the AVX2 low-accuracy kernel (tanh off by up to
5.2e-5 relative): a graph that ran the process's first tanh then differed from eager
(tests/python/pgo/test_pgo.py::test_region_left_to_aten_on_xpu, about 1 process in
25-100). The race itself cannot be forced, so this checks its precondition is gone,
deterministically: MKL reads MKL_ENABLE_INSTRUCTIONS once, when it chooses; a process
that imports xacc and only then changes the variable must get the kernels of the
value it had at import.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="libtorch built without MKL")

SCRIPT = r"""
import os, sys, torch
torch.set_num_threads(1)
if sys.argv[1] == "xacc":
    import xacc
elif sys.argv[1] == "xacc-in-mode":
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        seen = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        import xacc
    assert not [f for f in Log.seen if f.startswith(("aten.exp", "aten.ones"))], Log.seen
os.environ["MKL_ENABLE_INSTRUCTIONS"] = sys.argv[2]
torch.manual_seed(0)
x = torch.randn(1 << 16) * 3
torch.save(torch.tanh(x), sys.argv[3])
"""


def tanh_in_child(tmp_path: Path, mode: str, isa: str) -> torch.Tensor:
    out = tmp_path / f"{mode}-{isa}.pt"
    env = dict(os.environ, MKL_ENABLE_INSTRUCTIONS="AVX2",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", SCRIPT, mode, isa, str(out)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return torch.load(out)


def test_mkl_chooses_vml_kernels_when_xacc_is_imported(tmp_path):
    avx2 = tanh_in_child(tmp_path, "torch", "AVX2")
    # Without xacc, the variable is read at the first tanh, after the change.
    avx512 = tanh_in_child(tmp_path, "torch", "AVX512")
    if torch.equal(avx2, avx512):
        pytest.skip("MKL's AVX2 and AVX-512 tanh agree here (no AVX-512): the choice cannot be observed")
    with_xacc = tanh_in_child(tmp_path, "xacc", "AVX512")
    differ = int((with_xacc != avx2).sum())
    assert differ == 0, f"{differ} of {avx2.numel()} tanh values are not AVX2's: MKL chose after `import xacc`"
    # Imported under a Python dispatch mode: the mode does not see the call,
    # which still reaches MKL.
    in_mode = tanh_in_child(tmp_path, "xacc-in-mode", "AVX512")
    assert torch.equal(in_mode, avx2)
