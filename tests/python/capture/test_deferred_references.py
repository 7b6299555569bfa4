"""Note [References of modules imported later] (polyfill_registry.py): the
references of torch.distributed._functional_collectives are registered once the
program imports that module, not by xacc (importing it cost ~0.1 s of the first
translation of every `python -m xjit` run). A capture does not import it; a
program that imports it after xacc's references were loaded still gets
`funcol.all_reduce` as graph nodes (fullgraph=True: a break would raise), equal
to eager. Also the first capture's other lazy import: Python meta kernels do
not import torch._dynamo. Each scenario runs in a fresh interpreter (the point
is what sys.modules holds)."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch.distributed as dist

FUNCOL = "torch.distributed._functional_collectives"


def run(body: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True,
                       timeout=600, env=env)
    assert r.returncode == 0, f"rc={r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr[-4000:]}"
    return r.stdout


def test_a_capture_does_not_import_the_functional_collectives():
    out = run(f"""
        import sys
        import torch
        import xacc
        from xacc.jit import counters
        f = xacc.jit(lambda x: torch.sin(x) * 2)
        x = torch.randn(8)
        for _ in range(3):
            assert torch.equal(f(x), torch.sin(x) * 2)
        assert counters()["graphs"] == 1, counters()
        import xacc._src.capture.polyfills  # the references are loaded
        print("funcol imported:", {FUNCOL!r} in sys.modules)
    """)
    assert "funcol imported: False" in out, out


def test_python_meta_kernels_do_not_import_dynamo():
    """Note [Meta kernels and torch._dynamo] (recorder.py): the wrappers of the
    Python meta kernels a capture runs get a function that imports nothing."""
    out = run("""
        import sys
        import torch
        import xacc
        def f(x, y):
            return torch.logaddexp(x, y).clamp(min=0.5) + torch.special.xlogy(x.abs(), y.abs() + 1)
        g = xacc.jit(f)
        x, y = torch.randn(8), torch.randn(8)
        for _ in range(3):
            assert torch.allclose(g(x, y), f(x, y))
        print("dynamo imported:", "torch._dynamo" in sys.modules)
    """)
    assert "dynamo imported: False" in out, out


@pytest.mark.skipif(not dist.is_available(), reason="torch built without torch.distributed")
def test_functional_all_reduce_imported_after_the_references():
    out = run(f"""
        import socket
        import sys
        import torch
        import torch.distributed as dist
        import xacc
        from xacc.jit import counters, reset

        g = xacc.jit(lambda x: torch.cos(x) + 1)  # a first translation loads the references
        x = torch.randn(4, 8)
        g(x); g(x)
        import xacc._src.capture.polyfills
        assert {FUNCOL!r} not in sys.modules

        import torch.distributed._functional_collectives as funcol  # imported after them
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{{port}}", rank=0, world_size=1)
        try:
            def functional(x, w, group):
                return torch.tanh(funcol.all_reduce(x @ w, "sum", group)) + 1

            w = torch.randn(8, 6)
            name = dist.group.WORLD.group_name
            eager = functional(x, w, name)
            eager = eager.wait() if hasattr(eager, "wait") else eager
            reset()
            f = xacc.jit(functional, fullgraph=True)  # a graph break raises
            got = [f(x, w, name) for _ in range(2)]
            print("graphs", counters()["graphs"], "diff", max((r - eager).abs().max().item() for r in got))
        finally:
            dist.destroy_process_group()
    """)
    graphs, diff = out.split()[1], float(out.split()[3])
    assert graphs == "1" and diff <= 1e-6, out
