"""Note [Lazy backend modules]: `import xacc` and captures on cpu map no LLVM or
MLIR library; the xpu backend's capture module (xacc._C_xpu) is imported the
first time an xpu device is named and registers the "xpu" backend then, still
without LLVM; the compiler (xacc._C_mlir, with libLLVM and libMLIR) is loaded
when a kernel misses the cache (Note [Kernel shared objects]), and everything
works as before. Each scenario runs in a fresh interpreter and reads its own
/proc/self/maps."""

import os
import subprocess
import sys
import textwrap

import pytest

from xacc import _C

PRELUDE = """
import sys

def heavy():
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = path.rsplit("/", 1)[-1]
            if name.startswith(("libLLVM", "libMLIR")):
                libs.add(name)
    return sorted(libs)
"""


def run(body: str, **env_extra: str) -> str:
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, f"rc={r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    return r.stdout


def test_import_and_cpu_capture_map_no_llvm():
    out = run("""
        import xacc
        import xacc._C
        assert heavy() == [], heavy()
        assert isinstance(xacc._C.has_mlir, bool)  # known without loading the module
        import torch
        f = xacc.jit(lambda x: torch.sin(x) * 2 + 1)
        x = torch.randn(16)
        for _ in range(3):
            assert torch.equal(f(x), torch.sin(x) * 2 + 1)
        assert xacc._C.capture.stats()["compiles"] >= 1, xacc._C.capture.stats()
        assert heavy() == [], heavy()
        assert "xacc._C_mlir" not in sys.modules
        print("OK")
    """)
    assert out.strip().endswith("OK")


@pytest.mark.skipif(not _C.has_mlir, reason="built without the MLIR backend")
def test_xpu_device_loads_the_compiler_on_a_miss():
    out = run("""
        import torch
        import xacc
        from xacc._C import capture as C
        assert "xpu" not in [b["target"] for b in C.backends()]
        f = xacc.jit(lambda x: torch.cos(x) * 2, device="xpu0")
        assert "xacc._C_xpu" in sys.modules
        assert "xpu" in [b["target"] for b in C.backends()]
        assert heavy() == [], heavy()  # nothing compiled yet
        x = torch.randn(32)
        assert torch.allclose(f(x), torch.cos(x) * 2, atol=1e-6)
        # No cache: the kernel was compiled, by the compiler loaded for it.
        assert any(n.startswith("libMLIR") for n in heavy()), heavy()
        assert "xacc._C_mlir" not in sys.modules  # loaded by the backend, not imported
        assert xacc._C.mlir is sys.modules["xacc._C_mlir"]
        assert xacc._C.mlir.kernel_totals()["compiled"] >= 1  # the counters of the capture backend
        assert xacc._C.mlir.kernel_totals() == xacc._C.xpu.kernel_totals()
        print("OK")
    """, XACC_CACHE_DIR="off")
    assert out.strip().endswith("OK")


@pytest.mark.skipif(not _C.has_mlir, reason="built without the MLIR backend")
def test_mlir_attribute_loads_the_module():
    out = run("""
        from xacc import _C
        assert "xacc._C_mlir" not in sys.modules and heavy() == []
        assert _C.mlir.available() in (True, False)
        assert "xacc._C_mlir" in sys.modules and heavy() != []
        from xacc._C import capture as C
        assert C.device_available("xpu0")
        try:
            _C.no_such_attribute
        except AttributeError as e:
            assert "no_such_attribute" in str(e)
        else:
            raise AssertionError("no AttributeError")
        print("OK")
    """)
    assert out.strip().endswith("OK")
