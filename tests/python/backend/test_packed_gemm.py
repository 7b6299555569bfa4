"""addmm/mm on a packed weight (Note [Packed GEMM weights], csrc/lib/backend/mlir/
Executable.cpp): a parameter weight (f32, requires_grad, grad mode off) of at least
2^20 elements, multiplied by 2 to 128 rows, runs as MKL's packed GEMM on a copy
packed the second time the same weight is seen; any change to the weight (in-place
op, write through `.data`, another tensor) runs ATen's addmm again until it is
packed anew. stats(): 'weights_packed' and 'packed_gemm_runs'. Opt-in: only with
XACC_PACK_WEIGHTS=1 when the graph is compiled (no gain measured with torch 2.13,
a second copy of every packed weight).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

_C = pytest.importorskip("xacc._C")
pytestmark = [
    pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend"),
    pytest.mark.skipif(not hasattr(torch.ops.mkl, "_mkl_linear"), reason="libtorch without MKL"),
]

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def packing_on(monkeypatch):
    """Packing is opt-in; the tests of what it does turn it on (read at compile)."""
    monkeypatch.setenv("XACC_PACK_WEIGHTS", "1")


def addmm_gir(m, k, n):
    return (f"graph @g(%b: tensor<f32, [{n}], cpu>, %x: tensor<f32, [{m}, {k}], cpu>, "
            f"%w: tensor<f32, [{k}, {n}], cpu>) -> tensor<f32, [{m}, {n}], cpu> {{\n"
            f"  %0 = aten.addmm.default(%b, %x, %w) : tensor<f32, [{m}, {n}], cpu>\n"
            f"  return %0\n}}\n")


def weights(k, n):
    w = torch.nn.Parameter(torch.randn(k, n) / k ** 0.5)
    b = torch.nn.Parameter(torch.randn(n))
    return w, b


def check(exe, b, x, w, packed_runs, packs):
    with torch.no_grad():
        (y,) = exe.run([b, x, w])
        ref = torch.addmm(b, x, w)
    torch.testing.assert_close(y, ref, rtol=1e-4, atol=2e-4)
    s = exe.stats()
    assert (s["packed_gemm_runs"], s["weights_packed"]) == (packed_runs, packs), s


def test_addmm_packs_a_parameter_on_second_sight_and_repacks_after_changes():
    w, b = weights(1024, 1024)
    x = torch.randn(32, 1024)
    exe = _C.mlir.compile(addmm_gir(32, 1024, 1024))
    check(exe, b, x, w, 0, 0)            # first sight: ATen
    check(exe, b, x, w, 1, 1)            # packed
    check(exe, b, torch.randn(32, 1024), w, 2, 1)  # new activations, same packed weight
    with torch.no_grad():
        w.mul_(0.5)                      # in place: version counter bumps
    check(exe, b, x, w, 2, 1)
    check(exe, b, x, w, 3, 2)
    w.data.copy_(torch.randn(1024, 1024))  # .data: own version counter; sampled values differ
    check(exe, b, x, w, 3, 2)
    check(exe, b, x, w, 4, 3)
    w2, _ = weights(1024, 1024)          # another tensor
    check(exe, b, x, w2, 4, 3)
    check(exe, b, x, w2, 5, 4)


def test_mm_of_a_transposed_parameter_is_packed():
    # GPT-2's LM head: mm(h, wte.weight.t()).
    emb = torch.nn.Parameter(torch.randn(4096, 512))
    h = torch.randn(16, 512)
    gir = ("graph @g(%h: tensor<f32, [16, 512], cpu>, %e: tensor<f32, [4096, 512], cpu>) -> "
           "tensor<f32, [16, 4096], cpu> {\n  %0 = aten.t.default(%e) : tensor<f32, [512, 4096], cpu>\n"
           "  %1 = aten.mm.default(%h, %0) : tensor<f32, [16, 4096], cpu>\n  return %1\n}\n")
    exe = _C.mlir.compile(gir)
    with torch.no_grad():
        for _ in range(3):
            (y,) = exe.run([h, emb])
            torch.testing.assert_close(y, h @ emb.t(), rtol=1e-4, atol=2e-4)
    s = exe.stats()
    assert (s["packed_gemm_runs"], s["weights_packed"]) == (2, 1), s


@pytest.mark.parametrize("case", ["grad mode", "plain tensor", "small weight", "many rows", "one row"])
def test_not_packed(case):
    # "one row": a decode step's GEMV reads W once either way; a packed copy
    # would only double the weight's memory.
    m, k, n = {"many rows": (256, 1024, 1024), "one row": (1, 1024, 1024)}.get(case, (32, 1024, 1024))
    if case == "small weight":
        k, n = 256, 512
    w, b = weights(k, n)
    if case == "plain tensor":
        w = w.detach()
    x = torch.randn(m, k)
    exe = _C.mlir.compile(addmm_gir(m, k, n))
    for _ in range(3):
        if case == "grad mode":
            (y,) = exe.run([b, x, w])
            y.sum().backward()           # autograd still flows through ATen's addmm
            assert w.grad is not None
            w.grad = None
            continue
        check(exe, b, x, w, 0, 0)
    assert exe.stats()["packed_gemm_runs"] == 0


def test_env_switch_turns_packing_off():
    code = ("import torch, xacc._C as C\n"
            f"g = {addmm_gir(32, 1024, 1024)!r}\n"
            "w = torch.nn.Parameter(torch.randn(1024, 1024)); b = torch.randn(1024); x = torch.randn(32, 1024)\n"
            "e = C.mlir.compile(g)\n"
            "with torch.no_grad():\n"
            "    for _ in range(3): e.run([b, x, w])\n"
            "print(e.stats()['packed_gemm_runs'], e.stats()['weights_packed'])\n")
    env = dict(os.environ, XACC_PACK_WEIGHTS="0", PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "0"], out.stdout


def test_packing_is_off_by_default(monkeypatch):
    # A packable addmm (parameter of 2^20 elements, 32 rows) compiled with the
    # variable unset runs ATen's addmm every time and keeps no packed copy.
    monkeypatch.delenv("XACC_PACK_WEIGHTS", raising=False)
    w, b = weights(1024, 1024)
    x = torch.randn(32, 1024)
    exe = _C.mlir.compile(addmm_gir(32, 1024, 1024))
    for _ in range(3):
        check(exe, b, x, w, 0, 0)
