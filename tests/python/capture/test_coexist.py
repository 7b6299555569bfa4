"""xacc.jit and torch.compile in one process: both frame hooks and both co_extra
users must coexist. Each scenario runs in a child process so a crash (the
original bug: our co_extra free function dereferenced the null slot of code
objects only Dynamo had annotated, during the GC after a Dynamo compile) fails
the test instead of killing the test run."""

import os
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import gc, torch, xacc

@xacc.jit
def xf(x):
    return torch.sin(x) + 1

def tf(x):
    return torch.cos(x) * 2

x = torch.randn(4)
"""

SCENARIOS = {
    # The reported crash: xacc first, then torch.compile (Dynamo GCs after compiling).
    "xacc_then_dynamo": """
        assert torch.allclose(xf(x), torch.sin(x) + 1)
        c = torch.compile(tf, backend="eager")
        assert torch.allclose(c(x), torch.cos(x) * 2)
        gc.collect()
    """,
    "dynamo_then_xacc": """
        c = torch.compile(tf, backend="eager")
        assert torch.allclose(c(x), torch.cos(x) * 2)
        assert torch.allclose(xf(x), torch.sin(x) + 1)
        gc.collect()
    """,
    # Both keep working, interleaved, with code objects annotated by both and
    # freed afterwards (fresh functions each round).
    "interleaved_and_freed": """
        for i in range(4):
            ns = {}
            exec("def h(x):\\n    return torch.tanh(x) * %d" % (i + 1), {"torch": torch}, ns)
            h = ns["h"]
            assert torch.allclose(xacc.jit(h)(x), torch.tanh(x) * (i + 1))
            assert torch.allclose(torch.compile(h, backend="eager")(x), torch.tanh(x) * (i + 1))
            assert torch.allclose(xf(x), torch.sin(x) + 1)
            del h, ns
            torch._dynamo.reset()
            gc.collect()
    """,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_with_torch_compile(name):
    src = PRELUDE + textwrap.dedent(SCENARIOS[name]) + "\nprint('OK')\n"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-X", "dev", "-c", src], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, f"rc={r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    assert r.stdout.strip().endswith("OK")
