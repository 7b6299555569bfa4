"""The bucket split of a GIR graph (Note [Bucket split] in
csrc/include/xacc/passes/GraphSplit.h, xacc._C.capture.split_buckets), without
processes: where the cuts fall for given parameter sizes and caps, what each
piece reads and returns, that the pieces chained compute the graph's results,
and the cuts it must not make (a list crossing, effects)."""

from __future__ import annotations

import torch

import xacc.ir
from xacc._C import capture as C

MLP = """
graph @mlp(%x: tensor<f32, [4, 8], cpu>, %w1: tensor<f32, [8, 8], cpu>, %w2: tensor<f32, [8, 8], cpu>) -> tensor<f32, [], cpu> {
  %h = aten.mm(%x, %w1) : tensor<f32, [4, 8], cpu>
  %r = aten.relu(%h) : tensor<f32, [4, 8], cpu>
  %y = aten.mm(%r, %w2) : tensor<f32, [4, 8], cpu>
  %s = aten.sum(%y) : tensor<f32, [], cpu>
  return %s
}
"""


def _split(text: str, sizes: list[int], caps: list[int]):
    return C.split_buckets(xacc.ir.parse(text)._impl, sizes, caps)


def _chain(pieces, results, inputs):
    outs = []
    for module, sources in pieces:
        g = C.compile_module(module)
        outs.append(g(*[inputs[i] if p < 0 else outs[p][i] for p, i in sources]))
    return [inputs[i] if p < 0 else outs[p][i] for p, i in results]


def test_cut_where_the_last_bucket_fills():
    pieces, results, why = _split(MLP, [0, 256, 256], [256, 1 << 20])
    assert why == "" and len(pieces) == 2
    # piece 0: mm(x, w1), relu -> r; piece 1: w2 and r -> sum(mm(r, w2))
    assert [list(map(tuple, s)) for _, s in pieces] == [[(-1, 0), (-1, 1)], [(-1, 2), (0, 0)]]
    assert [tuple(r) for r in results] == [(1, 0)]
    assert "aten.relu" in str(xacc.ir.Module(pieces[0][0])) and "aten.sum" in str(xacc.ir.Module(pieces[1][0]))
    x, w1, w2 = torch.randn(4, 8), torch.randn(8, 8), torch.randn(8, 8)
    (got,) = _chain(pieces, results, [x, w1, w2])
    torch.testing.assert_close(got, (torch.relu(x @ w1) @ w2).sum())


def test_one_bucket_is_not_split():
    assert _split(MLP, [0, 256, 256], [1 << 20])[2] == "one bucket"
    assert _split(MLP, [0, 0, 0], [1])[2] == "one bucket"


LIST = """
graph @f(%x: tensor<f32, [4, 8], cpu>, %w1: tensor<f32, [8, 8], cpu>, %w2: tensor<f32, [8, 8], cpu>) -> tensor<f32, [], cpu> {
  %a = arith.const() {value = 1} : i64
  %h = aten.mm(%x, %w1) : tensor<f32, [4, 8], cpu>
  %l = list.make(%a, %a) : list<i64>
  %y = aten.mm(%h, %w2) : tensor<f32, [4, 8], cpu>
  %v = aten.view(%y, %l) : tensor<f32, [1, 1], cpu>
  %s = aten.sum(%y) : tensor<f32, [], cpu>
  return %s
}
"""


def test_no_cut_across_a_list():
    # The cap is reached at mm(h, w2), but the list %l made before it is read
    # after it: the cut moves up to before list.make; the constant %a is not
    # cut off, the piece that reads it recomputes it.
    pieces, results, why = _split(LIST, [0, 256, 256], [256, 1 << 20])
    assert why == "" and len(pieces) == 2
    first, second = (str(xacc.ir.Module(m)) for m, _ in pieces)
    assert "list.make" not in first and "arith.const" not in first, first
    assert "list.make" in second and "arith.const" in second and "aten.view" in second, second
    assert [list(map(tuple, s)) for _, s in pieces] == [[(-1, 0), (-1, 1)], [(-1, 2), (0, 0)]]


EFFECTS = """
graph @g(%t: !token, %x: tensor<f32, [4, 8], cpu>, %w: tensor<f32, [8, 8], cpu>) -> (tensor<f32, [], cpu>, !token) {
  %h = aten.mm(%x, %w) : tensor<f32, [4, 8], cpu>
  %j = effect.join(%t) : !token
  %s = aten.sum(%h) : tensor<f32, [], cpu>
  return %s, %j
}
"""


def test_graph_with_effects_is_not_split():
    assert _split(EFFECTS, [0, 0, 256], [1, 1])[2] == "the graph has effects"
