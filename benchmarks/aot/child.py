"""One process of benchmarks/aot/run.py's `xacc.aot` / `xacc.load` rows:

    python benchmarks/aot/child.py build|load MODEL DEVICE PATH

`build` captures the example model's forward on its example input with
xacc.aot and writes PATH; `load` loads PATH against a fresh model (same seed)
and calls it twice. Prints one JSON line: compile time parts (ms), frames the
translator compiled, kernels compiled / loaded, and whether the outputs equal
eager PyTorch.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT))


def model_and_input(name: str):
    import torch

    torch.manual_seed(0)
    if name == "mlp":
        import mlp

        return mlp.MLP().eval(), (torch.randn(256, 32),)
    if name == "tiny_gpt":
        import tiny_gpt

        return tiny_gpt.TinyGPT().eval(), (torch.randint(0, 64, (2, 16)),)
    raise SystemExit(f"unknown model {name}")


def main() -> None:
    mode, name, device, path = sys.argv[1:5]
    t_start = time.perf_counter()
    import torch

    import xacc
    from xacc import _C
    from xacc._src.aot import store
    from xacc.jit import counters

    model, inputs = model_and_input(name)
    with torch.no_grad():
        want = model(*inputs)
        t0 = time.perf_counter()
        if mode == "build":
            xacc.aot(model, inputs, path, device=device)
            got = None
        else:
            run = xacc.load(path, model)
            got = run(*inputs)
            got = run(*inputs)
        seconds = time.perf_counter() - t0
    c = counters()
    k = _C.mlir.kernel_totals() if getattr(_C, "has_mlir", False) else {"compiled": 0, "disk_hits": 0,
                                                                          "compile_seconds": 0.0}
    r = {"capture_ms": c["capture_seconds_us"] / 1e3, "install_ms": store.STATS["install_seconds_us"] / 1e3,
         "kernel_ms": k["compile_seconds"] * 1e3, "kernels_compiled": k["compiled"], "kernels_loaded": k["disk_hits"],
         "frames": c["frames"], "call_ms": seconds * 1e3, "wall": time.perf_counter() - t_start,
         "equal": True if got is None else bool(torch.allclose(got, want, rtol=1e-4, atol=1e-4))}
    print(json.dumps(r))


if __name__ == "__main__":
    main()
