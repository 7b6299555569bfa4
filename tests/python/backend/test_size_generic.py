"""Size-generic kernels (Note [Size-generic kernels], csrc/lib/backend/mlir/SizeGeneric.cpp).

A region whose inputs change size, because the graph declares dims dynamic or
because regions of one skeleton (the unrolled steps of a loop) meet at other
sizes, runs one kernel with symbolic extents instead of one kernel per size.
It must give eager PyTorch's results at every size, and a region whose kernel
depends on a size in a way the IR cannot say symbolically (mean's 1/n) keeps
its per-size kernels.
"""
from __future__ import annotations

import pytest
import torch

_C = pytest.importorskip("xacc._C")
pytestmark = pytest.mark.skipif(not getattr(_C, "has_mlir", False), reason="built without the MLIR backend")


def compile_graph(text):
    return _C.mlir.compile(text, parallel=False)


def kernels(e):
    s = e.stats()
    assert s["region_fallback_runs"] == 0 and not s["fallback_reasons"], s
    return s["kernels_compiled"] + s["disk_cache_hits"]


DYN_CHAIN = """graph @g(%x: tensor<f32, [?, ?, 32], cpu>, %b: tensor<f32, [32], cpu>) -> tensor<f32, [?, ?, 32], cpu> {
  %0 = aten.add.Tensor(%x, %b) : tensor<f32, [?, ?, 32], cpu>
  %1 = aten.gelu(%0) : tensor<f32, [?, ?, 32], cpu>
  %2 = aten.mul.Tensor(%1, %x) : tensor<f32, [?, ?, 32], cpu>
  return %2
}
"""


def test_dynamic_dims_compile_one_kernel_for_all_sizes():
    e = compile_graph(DYN_CHAIN)
    b = torch.randn(32)
    for n, t in [(2, 3), (2, 5), (3, 17), (1, 9), (4, 64), (2, 2)]:
        x = torch.randn(n, t, 32)
        (y,) = e(x, b)
        torch.testing.assert_close(y, torch.nn.functional.gelu(x + b) * x)
    # one generic kernel; the call with a size-1 batch needs a kernel of its
    # own (a size-1 dim broadcasts, so it is never symbolic)
    assert kernels(e) == 2, e.stats()
    assert e.stats()["kernel_launches"] == 6


def test_non_contiguous_and_broadcast_inputs():
    g = """graph @g(%x: tensor<f32, [?, ?], cpu>, %y: tensor<f32, [?, 1], cpu>) -> tensor<f32, [?, ?], cpu> {
  %0 = aten.sub.Tensor(%x, %y) : tensor<f32, [?, ?], cpu>
  %1 = aten.tanh(%0) : tensor<f32, [?, ?], cpu>
  return %1
}
"""
    e = compile_graph(g)
    for r, c in [(5, 7), (9, 4), (33, 65)]:
        x = torch.randn(c, r).t()  # transposed: strided
        y = torch.randn(r, 1)
        (out,) = e(x, y)
        torch.testing.assert_close(out, torch.tanh(x - y))
    assert kernels(e) == 1, e.stats()


def test_softmax_over_a_dynamic_dim_and_int_bool_dtypes():
    g = """graph @g(%x: tensor<f32, [?, ?], cpu>, %m: tensor<bool, [?, ?], cpu>, %i: tensor<i64, [?, ?], cpu>) -> (tensor<f32, [?, ?], cpu>, tensor<i64, [?, ?], cpu>) {
  %0 = aten.masked_fill.Scalar(%x, %m) {value = -1.0e4} : tensor<f32, [?, ?], cpu>
  %1 = aten._softmax(%0) {dim = 1, half_to_float = false} : tensor<f32, [?, ?], cpu>
  %2 = aten.add.Tensor(%i, %i) : tensor<i64, [?, ?], cpu>
  return %1, %2
}
"""
    e = compile_graph(g)
    for r, c in [(3, 5), (6, 11), (2, 40)]:
        x, m, i = torch.randn(r, c), torch.rand(r, c) > 0.5, torch.randint(-9, 9, (r, c))
        s, ii = e(x, m, i)
        torch.testing.assert_close(s, torch.softmax(x.masked_fill(m, -1.0e4), 1))
        assert torch.equal(ii, i + i)
    assert kernels(e) == 1, e.stats()


def test_a_kernel_that_depends_on_a_size_stays_per_size():
    # a view at offset n - 1 (the last element of the dynamic dim) has no
    # symbolic form: each size gets its own kernel, and the results stay right
    g = """graph @g(%x: tensor<f32, [4, ?], cpu>) -> tensor<f32, [4], cpu> {
  %0 = aten.select.int(%x) {dim = 1, index = -1} : tensor<f32, [4], cpu>
  %1 = aten.exp(%0) : tensor<f32, [4], cpu>
  return %1
}
"""
    e = compile_graph(g)
    for c in [3, 8, 13]:
        x = torch.randn(4, c)
        (y,) = e(x)
        torch.testing.assert_close(y, x[:, -1].exp())
    assert kernels(e) == 3, e.stats()


def test_regions_of_one_skeleton_share_a_generic_kernel():
    # The unrolled steps of a loop are regions of one skeleton at other sizes
    # (here three graphs; generic kernels are shared process-wide). The first
    # size gets its own kernel, the second derives the generic one, the third
    # reuses it without compiling. The constant makes the skeleton this test's.
    def graph(t):
        ty = f"tensor<f32, [2, {t}, 16], cpu>"
        return (f"graph @g(%x: {ty}) -> {ty} {{\n  %a = aten.sigmoid(%x) : {ty}\n"
                f"  %b = aten.mul.Tensor(%a, %x) : {ty}\n"
                f"  %c = aten.add.Scalar(%b) {{other = 0.318309886}} : {ty}\n  return %c\n}}\n")
    stats = []
    for t in (4, 5, 6):
        e = compile_graph(graph(t))
        x = torch.randn(2, t, 16)
        torch.testing.assert_close(e(x)[0], torch.sigmoid(x) * x + 0.318309886)
        stats.append(e.stats())
    assert [kernels_of(s) for s in stats] == [1, 1, 0], stats
    assert stats[2]["memory_cache_hits"] >= 1, stats


def test_expand_to_literal_sizes_of_unrolled_steps():
    # A static graph expands to the sizes traced at each step; the generic
    # kernel derived at probe sizes keeps the input's dim there, and is used
    # only where it equals the step's own kernel.
    def graph(t):
        ty, ty1 = f"tensor<f32, [2, {t}, 8], cpu>", f"tensor<f32, [2, {t}, 1], cpu>"
        return (f"graph @g(%x: {ty1}, %y: {ty}) -> {ty} {{\n"
                f"  %e = aten.expand.default(%x) {{size = [2, {t}, 8]}} : {ty}\n"
                f"  %s = aten.add.Tensor(%e, %y) : {ty}\n"
                f"  %r = aten.mul.Scalar(%s) {{other = 0.271828}} : {ty}\n  return %r\n}}\n")
    stats = []
    for t in (3, 7, 12):
        e = compile_graph(graph(t))
        x, y = torch.randn(2, t, 1), torch.randn(2, t, 8)
        torch.testing.assert_close(e(x, y)[0], (x.expand(2, t, 8) + y) * 0.271828)
        stats.append(e.stats())
    assert [kernels_of(s) for s in stats] == [1, 1, 0], stats


def kernels_of(s):
    assert s["region_fallback_runs"] == 0 and not s["fallback_reasons"], s
    return s["kernels_compiled"] + s["disk_cache_hits"]


def test_large_sizes_get_split_per_size_kernels():
    if torch.get_num_threads() < 2:
        pytest.skip("one thread: nothing is split")
    e = _C.mlir.compile(DYN_CHAIN)  # parallel=True
    b = torch.randn(32)
    for t in (3, 5):
        x = torch.randn(2, t, 32)
        torch.testing.assert_close(e(x, b)[0], torch.nn.functional.gelu(x + b) * x)
    x = torch.randn(64, 4096, 32)  # large enough to be split over threads
    torch.testing.assert_close(e(x, b)[0], torch.nn.functional.gelu(x + b) * x)
    s = e.stats()
    # the small sizes run the generic kernel (compiled here or by an earlier
    # test: the cache is process-wide), the large one a split per-size kernel
    assert s["split_runs"] >= 1 and kernels(e) <= 2 and s["kernel_launches"] >= 3, s


# Op families through size-generic kernels: (GIR op with {x} the input, the
# result's dims, eager function, input domain, whether one kernel serves all
# sizes).
FAMILIES = [
    ("aten.exp({x})", "?, ?", torch.exp, "any", True),
    ("aten.log({x})", "?, ?", torch.log, "pos", True),
    ("aten.sqrt({x})", "?, ?", torch.sqrt, "pos", True),
    ("aten.tanh({x})", "?, ?", torch.tanh, "any", True),
    ("aten.sigmoid({x})", "?, ?", torch.sigmoid, "any", True),
    ("aten.gelu({x})", "?, ?", torch.nn.functional.gelu, "any", True),
    ("aten.silu({x})", "?, ?", torch.nn.functional.silu, "any", True),
    ("aten.hardswish.default({x})", "?, ?", torch.nn.functional.hardswish, "any", True),
    ("aten.leaky_relu.default({x}) {{negative_slope = 0.2}}", "?, ?",
     lambda x: torch.nn.functional.leaky_relu(x, 0.2), "any", True),
    ("aten.amax.default({x}) {{dim = [1], keepdim = true}}", "?, 1", lambda x: x.amax(1, keepdim=True), "any", True),
    ("aten.amin.default({x}) {{dim = [0], keepdim = false}}", "?", lambda x: x.amin(0), "any", True),
    ("aten.sum.dim_IntList({x}) {{dim = [1], keepdim = false}}", "?", lambda x: x.sum(1), "any", True),
    ("aten._log_softmax.default({x}) {{dim = 1, half_to_float = false}}", "?, ?",
     lambda x: torch.log_softmax(x, 1), "any", True),
    ("aten._softmax.default({x}) {{dim = 0, half_to_float = false}}", "?, ?", lambda x: torch.softmax(x, 0), "any",
     True),
    # the count n (mean) and n - 1 (unbiased var) of a dynamic dim are
    # symbolic constants
    ("aten.mean.dim({x}) {{dim = [1], keepdim = true}}", "?, 1", lambda x: x.mean(1, keepdim=True), "any", True),
    ("aten.var.dim({x}) {{dim = [0], keepdim = false}}", "?", lambda x: x.var(0), "any", True),
    # n * m (a mean over both dynamic dims) is not: one kernel per size, still right
    ("aten.mean.default({x})", "", lambda x: x.mean(), "any", False),
    # normalised over the static dim: generic over the rows
    ("aten.layer_norm.default({x}) {{normalized_shape = [16]}}", "?, 16",
     lambda x: torch.nn.functional.layer_norm(x, (16,)), "any", True),
]


@pytest.mark.parametrize("op,out,fn,domain,generic", FAMILIES, ids=[f[0].split("(")[0] for f in FAMILIES])
def test_op_families_at_many_sizes(op, out, fn, domain, generic):
    static_last = out.endswith("16")
    out_ty = f"tensor<f32, [{out}], cpu>"
    ty = "[?, 16]" if static_last else "[?, ?]"
    g = (f"graph @g(%x: tensor<f32, {ty}, cpu>) -> {out_ty} {{\n"
         f"  %0 = {op.format(x='%x')} : {out_ty}\n  return %0\n}}\n")
    e = compile_graph(g)
    sizes = [(3, 16), (6, 16), (9, 16), (40, 16)] if static_last else [(3, 5), (6, 17), (2, 64), (11, 3)]
    for r, c in sizes:
        x = torch.randn(r, c)
        if domain == "pos":
            x = x.abs() + 0.1
        (y,) = e(x)
        torch.testing.assert_close(y, fn(x), rtol=2e-5, atol=2e-5)
    # a generic kernel may come from an earlier test (they are process-wide)
    n = kernels(e)
    assert (n <= 1) if generic else (n >= 2), e.stats()
