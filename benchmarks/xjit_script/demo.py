"""`make run`: the demo under `python -m xjit` (its output and the capture
summary, as a user sees them), then the same model under plain python, timed
in this run: wall time and peak memory of each whole process.

examples/tiny_gpt_cuda.py is written for CUDA and cannot run under plain
python on a machine without a GPU, so plain python runs examples/tiny_gpt.py,
the same script with the device calls removed (test_xjit_examples checks that
both print the same tokens).

    python benchmarks/xjit_script/demo.py [--device cpu|xpu0]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import ROOT, run_once  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ns = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "xjit", "--device", ns.device, "examples/tiny_gpt_cuda.py"]
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=ROOT, env=env)  # output straight to the terminal
    _, status, usage = os.wait4(p.pid, 0)
    xjit_wall, xjit_mem = time.perf_counter() - t0, usage.ru_maxrss / 1024
    xjit_cpu = usage.ru_utime + usage.ru_stime
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        return rc
    wall, cpu, mem, _, rc = run_once([sys.executable, "examples/tiny_gpt.py"], ROOT)
    if rc != 0:
        print(f"plain python examples/tiny_gpt.py failed (exit status {rc})", file=sys.stderr)
        return rc
    print("\n== plain python, same model, measured in this run ==", file=sys.stderr)
    print(f"python examples/tiny_gpt.py: {wall:.2f} s (CPU {cpu:.2f} s), peak memory {mem:.0f} MiB", file=sys.stderr)
    print(f"python -m xjit --device {ns.device} examples/tiny_gpt_cuda.py: {xjit_wall:.2f} s "
          f"({xjit_wall / wall:.2f}x; CPU {xjit_cpu:.2f} s, {xjit_cpu / cpu:.2f}x), peak memory {xjit_mem:.0f} MiB ({xjit_mem / mem:.2f}x)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
