"""Cold start vs warm start (docs/aot.md), two ways, for each example model and device:

  via cache: `python -m xjit --cache DIR examples/MODEL.py`: a cold process
             (empty cache directory, empty kernel disk cache) then a warm one
             (same script, same directory); the parts come from xjit's summary;
  via load:  a process that runs `xacc.aot(model, example input, PATH)` (cold)
             then one that runs `xacc.load(PATH, model)` and calls it twice
             (warm), with an empty kernel disk cache (benchmarks/aot/child.py).

Compile time of a process = capture (translation, passes, graph preparation)
+ installing stored entries + kernel compiles or kernel loads from the disk
cache. One run each. Criterion (issue 9): warm compile time <= 25% of cold
compile time, for every row.

    PYTHONPATH=$PWD python benchmarks/aot/run.py [--models mlp,tiny_gpt] [--devices cpu,xpu0]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(script: Path, device: str, cache: str, kernels: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               XACC_CACHE_DIR=kernels)
    env.pop("XACC_LOG", None)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "xjit", "--cache", cache, "--device", device, str(script)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{script.name} --device {device} failed:\n{p.stderr[-3000:]}")
    err = p.stderr

    def num(pattern: str) -> float:
        m = re.search(pattern, err)
        return float(m.group(1)) if m else 0.0

    r = {
        "wall": wall,
        "capture_ms": num(r"capture time: ([\d.]+) ms"),
        "install_ms": num(r"\(([\d.]+) ms installing\)"),
        "kernel_ms": num(r"kernels: \d+ compiled, \d+ loaded from the disk cache \(([\d.]+) ms\)"),
        "kernels_compiled": num(r"kernels: (\d+) compiled"),
        "kernels_loaded": num(r"(\d+) loaded from the disk cache"),
        "frames": num(r"frames captured: (\d+)"),
        "installed": num(r"stored entries: (\d+) installed"),
        "stdout": p.stdout,
    }
    r["compile_ms"] = r["capture_ms"] + r["install_ms"] + r["kernel_ms"]
    return r


def _child(mode: str, model: str, device: str, path: str, kernels: str) -> dict[str, float]:
    import json

    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               XACC_CACHE_DIR=kernels)
    env.pop("XACC_LOG", None)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, str(Path(__file__).with_name("child.py")), mode, model, device, path],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise SystemExit(f"child {mode} {model} {device} failed:\n{p.stderr[-3000:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["wall"] = time.perf_counter() - t0
    r["compile_ms"] = r["capture_ms"] + r["install_ms"] + r["kernel_ms"]
    if not r["equal"]:
        raise SystemExit(f"{model} {device}: xacc.load result differs from eager")
    return r


def _row(rows: list, model: str, device: str, via: str, cold: dict, warm: dict) -> None:
    ratio = warm["compile_ms"] / cold["compile_ms"] if cold["compile_ms"] else float("inf")
    rows.append((model, device, via, ratio))
    print(f"{model:9} {device:5} {via:6} {cold['compile_ms']:9.1f} {warm['compile_ms']:9.1f} {ratio:6.3f}   "
          f"{cold['capture_ms']:.1f}/{cold['install_ms']:.1f}/{cold['kernel_ms']:.1f}"
          f"  |  {warm['capture_ms']:.1f}/{warm['install_ms']:.1f}/{warm['kernel_ms']:.1f}"
          f"   {cold['frames']:.0f}/{warm['frames']:.0f}"
          f"   {cold['kernels_compiled']:.0f}/{warm['kernels_compiled']:.0f}"
          f"   {cold['wall']:.2f}/{warm['wall']:.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mlp,tiny_gpt")
    ap.add_argument("--devices", default="cpu,xpu0")
    ap.add_argument("--via", default="cache,load", help="cache (xjit --cache), load (xacc.aot/xacc.load)")
    ns = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from xacc._C import capture

    rows = []
    print(f"{'model':9} {'device':5} {'via':6} {'cold ms':>9} {'warm ms':>9} {'ratio':>6}   "
          f"cold: capture/install/kernels ms  |  warm: same   frames compiled cold/warm   "
          f"kernels compiled cold/warm   wall s cold/warm")
    for model in ns.models.split(","):
        for device in ns.devices.split(","):
            if device != "cpu" and not capture.device_available(device):
                print(f"{model:10} {device:6} skipped: no MLIR backend in this build")
                continue
            script = ROOT / "examples" / f"{model}.py"
            if "cache" in ns.via:
                with tempfile.TemporaryDirectory(prefix="xacc-aot-bench-") as tmp:
                    cache, kernels = os.path.join(tmp, "cache"), os.path.join(tmp, "kernels")
                    cold = _run(script, device, cache, kernels)
                    warm = _run(script, device, cache, kernels)
                if cold["stdout"] != warm["stdout"]:
                    raise SystemExit(f"{model} {device}: warm output differs:\n{cold['stdout']}\n{warm['stdout']}")
                _row(rows, model, device, "cache", cold, warm)
            if "load" in ns.via:
                with tempfile.TemporaryDirectory(prefix="xacc-aot-bench-") as tmp:
                    path = os.path.join(tmp, f"{model}.xacc")
                    cold = _child("build", model, device, path, os.path.join(tmp, "k1"))
                    warm = _child("load", model, device, path, os.path.join(tmp, "k2"))
                _row(rows, model, device, "load", cold, warm)
    ok = bool(rows) and all(r[3] <= 0.25 for r in rows)
    worst = max((r[3] for r in rows), default=float("nan"))
    print(f"criterion (warm start compile time <= 25% of cold start, every model/device): "
          f"{'PASS' if ok else 'FAIL'} (worst ratio {worst:.3f})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
