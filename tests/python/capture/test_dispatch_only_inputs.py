"""Graph inputs whose values are not their memory (Note [Tensors read as memory]
in csrc/lib/backend/mlir/ExecutableImpl.h), and exceptions while a captured graph
runs.

A frame that functorch calls under torch.vmap (transformers' mask functions,
through sdpa_mask) is captured like any other and gets vmap's BatchedTensors:
tensors without storage whose logical sizes are not their memory's. An xpu
region kernel read their memory, and the c10::Error that threw left the
eval-frame hook (CPython calls it from C), so the process aborted in
t5gemma2 and unlimited_ocr on xpu0. A negative view (`z.conj().imag`) read as
memory gave silently wrong values. Such inputs run through ATen, and no
exception from a graph run escapes to std::terminate."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from harness import check
from xacc._C import capture as C
from xacc.jit import counters, jit

ROOT = Path(__file__).resolve().parents[3]
DEVICES = ["cpu", pytest.param("xpu0", marks=pytest.mark.skipif(not C.device_available("xpu0"),
                                                              reason="built without the MLIR backend"))]

# Run in a child: before the fix this aborted the interpreter (exit -6).
_VMAP_CHILD = textwrap.dedent("""
    import torch
    from xacc.jit import counters, jit

    def mask(q, kv):  # a mask function of transformers' masking_utils, reduced
        return (q >= kv) & (kv >= 0) | (q - kv < 3)

    def fn(n):
        idx = torch.arange(n)
        return torch.vmap(torch.vmap(mask, in_dims=(None, 0)), in_dims=(0, None))(idx, idx)

    jf = jit(fn, device=DEVICE)
    for n in (5, 6, 5):
        ref, got = fn(n), jf(n)
        assert got.dtype == ref.dtype and torch.equal(got, ref), (n, ref, got)
    c = counters()
    assert c["internal_errors"] == 0, c
    print(c["graphs"])
""")


@pytest.mark.parametrize("device", DEVICES)
def test_frame_called_under_vmap_gets_eager_values(device):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _VMAP_CHILD.replace("DEVICE", repr(device))], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    assert int(out.stdout.split()[-1]) >= 1, out.stdout


@pytest.mark.parametrize("device", DEVICES)
def test_negative_view_input_is_read_through_aten(device):
    # `z.conj().imag` is a view with the negative bit: its memory holds +Im(z).
    # (Not through harness.check: its clone of a view rebuilds it from `_base`.)
    def f(x, y):
        return torch.sigmoid(x * 2.0 + y).tanh()

    jf = jit(f, device=device)
    for i in range(3):
        x, y = torch.randn(64, 32, dtype=torch.cfloat).conj().imag, torch.randn(64, 32)
        assert x.is_neg()
        torch.testing.assert_close(jf(x, y), f(x, y), rtol=1e-5, atol=1e-6)
    c = counters()
    assert c["graphs"] == 1 and c["breaks"] == 0 and c["internal_errors"] == 0, c


@pytest.mark.parametrize("device", DEVICES)
def test_negative_view_made_in_the_graph(device):
    def f(z, y):
        return torch.sigmoid(z.conj().imag * 2.0 + y).tanh()

    check(f, lambda i: (torch.randn(64, 32, dtype=torch.cfloat), torch.randn(64, 32)), graphs=1, breaks=0,
          device=device)


# A graph whose number parameter gets a tensor: the ATen executor's
# IValue::toScalar throws std::runtime_error outside any op. Before, it left
# CompiledGraph::run with the GIL released and the interpreter aborted.
_ESCAPE_CHILD = textwrap.dedent("""
    import torch
    import xacc
    from xacc._C import capture as C

    g = C.compile_gir('''graph @g(%x: tensor<f32, [3], cpu>, %s: f64) -> tensor<f32, [3], cpu> {
      %0 = aten.mul.Tensor(%x, %s) : tensor<f32, [3], cpu>
      return %0
    }
    ''')
    x = torch.ones(3)
    assert torch.equal(g(x, 2.0)[0], x * 2)
    try:
        g(x, torch.ones(3))
    except xacc.BackendError as e:
        print("BackendError:", e)
    print(g(x, 3.0)[0].tolist())  # and the interpreter goes on
""")


def test_exception_escaping_a_backend_is_a_backend_error():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _ESCAPE_CHILD], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    lines = out.stdout.splitlines()
    assert lines[0].startswith("BackendError: xacc: the 'cpu' backend failed while running a captured graph"), lines
    assert "IValue is not a Scalar" in lines[0], lines
    assert lines[1] == "[3.0, 3.0, 3.0]", lines
