"""Pointwise chains through the xpu backend: achieved GB/s against a plain tensor
copy (x.clone()) measured in the same process run. One run, ratios.

    python benchmarks/backend/pointwise.py [--build build-mlir] [--runs 20]

Each case is a chain of N elementwise ops on a [rows, 1024] f32 tensor plus a
broadcast [1024] bias; bytes moved = inputs + outputs. Runs xacc-mlir --bench,
which also times the same graph on the ATen path (one eager kernel per op).
"""
import argparse
import os
import re
import subprocess
import tempfile

OPS = ["aten.add.Tensor({x}, %b)", "aten.relu({x})", "aten.mul.Tensor({x}, %b)", "aten.sigmoid({x})",
       "aten.sub.Tensor({x}, %b)", "aten.tanh({x})", "aten.neg({x})", "aten.exp({x})",
       "aten.abs({x})", "aten.gelu({x})"]


def chain(n, rows):
    t = f"tensor<f32, [{rows}, 1024], cpu>"
    lines = [f"graph @chain(%x: {t}, %b: tensor<f32, [1024], cpu>) -> {t} {{"]
    prev = "%x"
    for i in range(n):
        lines.append(f"  %{i} = {OPS[i % len(OPS)].format(x=prev)} : {t}")
        prev = f"%{i}"
    lines.append(f"  return {prev}\n}}\n")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.environ.get("XACC_BUILD_DIR", "build-mlir"))
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    tool = os.path.join(args.build, "bin", "xacc-mlir")
    print(f"{'ops':>4} {'elements':>10} {'xpu GB/s':>9} {'aten GB/s':>10} {'clone GB/s':>11} "
          f"{'xpu/clone':>10} {'xpu/aten speedup':>17}")
    for n in (5, 10, 20):
        for rows in (1024, 4096, 16384):
            with tempfile.NamedTemporaryFile("w", suffix=".gir", delete=False) as f:
                f.write(chain(n, rows))
            out = subprocess.run([tool, f.name, "--run", "--bench", str(args.runs)], capture_output=True,
                                 text=True).stdout
            os.unlink(f.name)
            m = re.search(r"xpu ([\d.]+) ms ([\d.]+) GB/s \| aten ([\d.]+) ms ([\d.]+) GB/s \| "
                          r"clone [\d.]+ ms ([\d.]+) GB/s \| xpu/clone ([\d.]+)", out)
            if not m or "PASS" not in out:
                print(f"{n:>4} {rows * 1024:>10} failed: {out.strip()[-200:]}")
                continue
            xms, xgb, ams, agb, cgb, ratio = map(float, m.groups())
            print(f"{n:>4} {rows * 1024:>10} {xgb:>9.2f} {agb:>10.2f} {cgb:>11.2f} {ratio:>10.2f} "
                  f"{ams / xms:>17.1f}")


if __name__ == "__main__":
    main()
