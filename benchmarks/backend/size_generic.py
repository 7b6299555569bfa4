"""Size-generic kernels (Note [Size-generic kernels]) against per-size ones:
the same 5-op chain compiled for a static [4, T, 64] and for [4, ?, 64], both
on one thread (parallel=False), timed interleaved, best of 15 rounds.

    PYTHONPATH=. python benchmarks/backend/size_generic.py
"""
import torch, time, xacc._C as C
torch.set_num_threads(1)
def g(dims, op_chain):
    t = f"tensor<f32, [{dims}], cpu>"
    lines = [f"graph @g(%x: {t}, %b: tensor<f32, [64], cpu>) -> {t} {{"]
    prev = "%x"
    for i, op in enumerate(op_chain):
        lines.append(f"  %{i} = {op.format(x=prev)} : {t}"); prev = f"%{i}"
    lines.append(f"  return {prev}\n}}\n")
    return "\n".join(lines)
chains = {"arith5": ["aten.add.Tensor({x}, %b)", "aten.relu({x})", "aten.mul.Tensor({x}, %b)", "aten.sub.Tensor({x}, %b)", "aten.neg({x})"],
          "mixed5": ["aten.add.Tensor({x}, %b)", "aten.sigmoid({x})", "aten.mul.Tensor({x}, %b)", "aten.tanh({x})", "aten.gelu({x})"]}
for name, ch in chains.items():
    for T in (7, 100, 1000, 4000):
        x, b = torch.randn(4, T, 64), torch.randn(64)
        es = C.mlir.compile(g(f"4, {T}, 64", ch), parallel=False)
        ed = C.mlir.compile(g("4, ?, 64", ch), parallel=False)
        torch.testing.assert_close(es(x, b)[0], ed(x, b)[0])
        best = [1e9, 1e9]
        n = max(1, 20000 // T)
        for _ in range(15):
            for i, e in enumerate((es, ed)):
                t0 = time.perf_counter()
                for _ in range(n): e(x, b)
                best[i] = min(best[i], (time.perf_counter() - t0) / n)
        print(f"{name} [4,{T},64]: static {best[0]*1e6:8.1f} us  generic {best[1]*1e6:8.1f} us  generic/static {best[1]/best[0]:.3f}", flush=True)
