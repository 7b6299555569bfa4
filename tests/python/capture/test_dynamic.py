"""Automatic dynamic shapes: after the first recompile caused by a changed size
the changing dims become symbolic; dynamic=True makes dims symbolic at once."""

import torch
import torch.nn.functional as F

from harness import check
from xacc._src.capture import convert
from xacc.jit import counters, jit

W = torch.randn(8, 4)
B = torch.randn(8)


def mlp(x):
    return F.relu(F.linear(x, W, B)).softmax(-1).sum(0)


def batches(*sizes, feat=4):
    return lambda i: (torch.randn(sizes[i], feat),)


def test_batch_sizes_one_recompile():
    c = check(mlp, batches(2, 3, 5, 7), calls=4, max_recompiles=1)
    assert c["graphs"] == 2, c


def test_dynamic_graph_has_symbolic_dims():
    check(mlp, batches(2, 3, 5, 7), calls=4, max_recompiles=1)
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert "tensor<f32, [s0, 4], cpu>" in g.graph, g.graph
    assert any("size=[>=2, 4]" in x and "contiguous" in x for x in g.guards), g.guards


def test_dynamic_true_no_recompile():
    c = check(mlp, batches(2, 3, 5, 7), calls=4, max_recompiles=0, dynamic=True)
    assert c["graphs"] == 1, c


def two_inputs(x, y):
    return (x * 2).sum(-1) + y


def test_shared_symbol_between_inputs():
    c = check(two_inputs, lambda i: (torch.randn(3 + i, 5), torch.randn(3 + i)), calls=4, max_recompiles=1)
    assert c["graphs"] == 2
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert "[s0, 5]" in g.graph and "[s0]" in g.graph, g.graph


def view_batch(x):
    return x.view(x.shape[0], 2, -1).sum(1)


def test_size_feeding_view_specializes():
    # The view's sizes come from a dynamic dim: the frame stays static (correct,
    # one graph per size, bounded by the recompile limit).
    c = check(view_batch, batches(2, 3, 5, 7), calls=4, max_recompiles=3)
    assert c["graphs"] == 4


def branch_on_size(x):
    if x.shape[0] > 4:
        return x * 2
    return x - 1


def test_branch_on_size_specializes():
    check(branch_on_size, batches(2, 3, 5, 7), calls=4, max_recompiles=3)


def test_size_one_is_not_dynamic():
    jf = jit(mlp)
    for n in (2, 3, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(jf(x), mlp(x))
    x = torch.randn(1, 4)  # a 1-sized dim broadcasts differently: recompiles
    torch.testing.assert_close(jf(x), mlp(x))
    assert counters()["recompiles"] == 2


def test_non_contiguous_input_recompiles_correctly():
    jf = jit(mlp)
    for n in (2, 3, 5):
        x = torch.randn(n, 4)
        torch.testing.assert_close(jf(x), mlp(x))
    x = torch.randn(4, 6).t()[:, :4].contiguous().t().t()
    x = torch.randn(4, 6).t()[:, :4]  # (6, 4), not contiguous
    torch.testing.assert_close(jf(x), mlp(x))
    assert counters()["internal_errors"] == 0


def test_dynamic_false_never_dynamic():
    c = check(mlp, batches(2, 3, 5, 7), calls=4, max_recompiles=3, dynamic=False)
    assert c["graphs"] == 4
