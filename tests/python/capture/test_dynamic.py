"""Automatic dynamic shapes: after the first recompile caused by a changed size
the changing dims become symbolic; dynamic=True makes dims symbolic at once."""

import torch
import torch.nn.functional as F

import pytest

import xacc
from harness import check, compare_call
from xacc._C import capture as xacc_C
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


def test_size_feeding_view_is_symbolic():
    # The view's sizes come from a dynamic dim: a symbolic size of the graph
    # (aten.sym_size.int), so one recompile covers every batch size.
    c = check(view_batch, batches(2, 3, 5, 7), calls=4, max_recompiles=1)
    assert c["graphs"] == 2, c
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert "aten.sym_size.int" in g.graph and "list.make" in g.graph, g.graph


def branch_on_size(x):
    if x.shape[0] > 4:
        return x * 2
    return x - 1


def test_branch_on_size_specializes():
    check(branch_on_size, batches(2, 3, 5, 7), calls=4, max_recompiles=3)


def expand_to_batch(x, p):
    b = x.shape[0]
    if b != p.shape[0]:  # transformers' masking_utils: position ids expanded to the batch
        p = p.expand(b, -1)
    if x.shape[1] <= 64:
        x = x * 2
    return x + p


def test_branch_on_size_relation_is_a_guard():
    # Comparisons of a dynamic size with a constant or another size become
    # guards on the relation: one recompile, and the dims stay symbolic.
    jf = jit(expand_to_batch)
    for n in (2, 3, 4, 5):
        x, p = torch.randn(n, 8), torch.randn(1, 8)
        compare_call(expand_to_batch, jf, (x, p,))
    assert counters()["recompiles"] == 1, counters()
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert "[s0, 8]" in g.graph, g.graph
    # Equal batches: one symbol for both, the branch is not taken (no new guard).
    jf2 = jit(expand_to_batch)
    for n in (2, 3, 4):
        x, p = torch.randn(n, 8), torch.randn(n, 8)
        compare_call(expand_to_batch, jf2, (x, p,))
    assert counters()["recompiles"] == 2, counters()


def relation_two_symbols(x, y):
    if x.shape[0] < y.shape[0]:
        return x.sum(0) + y.sum(0)
    return x.sum(0) - y.sum(0)


def test_relation_between_two_dynamic_sizes_is_guarded():
    jf = jit(relation_two_symbols)
    for n, m in ((2, 5), (3, 7), (4, 9)):
        x, y = torch.randn(n, 4), torch.randn(m, 4)
        compare_call(relation_two_symbols, jf, (x, y,))
    assert counters()["recompiles"] == 1, counters()
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert any("L['x'].size(0) < L['y'].size(0) (s0 < s1)" in s for s in g.guards), g.guards
    # The relation no longer holds: the guard fails, and the other arm runs.
    x, y = torch.randn(6, 4), torch.randn(3, 4)
    compare_call(relation_two_symbols, jf, (x, y,))
    assert counters()["recompiles"] == 2, counters()
    ex = xacc.explain(relation_two_symbols)
    ex(torch.randn(2, 4), torch.randn(5, 4))
    ex.again(torch.randn(3, 4), torch.randn(7, 4))
    out = ex.again(torch.randn(6, 4), torch.randn(3, 4))
    assert any(r.endswith("L['x'].size(0) < L['y'].size(0) (s0 < s1)") for r in out.recompiles), out.recompiles


def test_size_one_is_not_dynamic():
    jf = jit(mlp)
    for n in (2, 3, 5):
        x = torch.randn(n, 4)
        compare_call(mlp, jf, (x,))
    x = torch.randn(1, 4)  # a 1-sized dim broadcasts differently: recompiles
    compare_call(mlp, jf, (x,))
    assert counters()["recompiles"] == 2


def test_non_contiguous_input_recompiles_correctly():
    jf = jit(mlp)
    for n in (2, 3, 5):
        x = torch.randn(n, 4)
        compare_call(mlp, jf, (x,))
    x = torch.randn(4, 6).t()[:, :4].contiguous().t().t()
    x = torch.randn(4, 6).t()[:, :4]  # (6, 4), not contiguous
    compare_call(mlp, jf, (x,))
    assert counters()["internal_errors"] == 0


def test_dynamic_false_never_dynamic():
    c = check(mlp, batches(2, 3, 5, 7), calls=4, max_recompiles=3, dynamic=False)
    assert c["graphs"] == 4


# -- symbolic sizes: sizes read by Python flow into ATen int arguments ----------------------------

class Attention(torch.nn.Module):
    """Written like transformers' attention: sizes from x.shape, view/transpose/reshape."""

    def __init__(self, c=16, h=4):
        super().__init__()
        self.h, self.d = h, c // h
        self.qkv = torch.nn.Linear(c, 3 * c)
        self.o = torch.nn.Linear(c, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=-1)
        q = q.view(b, t, self.h, self.d).transpose(1, 2)
        k = k.view(b, t, self.h, self.d).transpose(1, 2)
        v = v.view(b, t, self.h, self.d).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.d ** -0.5
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return self.o(y)


def test_attention_batch_sizes_one_recompile():
    torch.manual_seed(0)
    m = Attention().eval()
    c = check(m, lambda i: (torch.randn((2, 3, 4, 5)[i], 6, 16),), calls=4, max_recompiles=1)
    assert c["graphs"] == 2, c


def test_attention_batch_and_sequence_one_recompile():
    torch.manual_seed(0)
    m = Attention().eval()
    shapes = [(2, 6), (3, 7), (4, 5), (2, 9), (5, 3)]
    c = check(m, lambda i: (torch.randn(*shapes[i], 16),), calls=5, max_recompiles=1)
    assert c["graphs"] == 2, c
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert "tensor<f32, [s0, s1, 16], cpu>" in g.graph, g.graph


def test_attention_dynamic_true_no_recompile():
    torch.manual_seed(0)
    m = Attention().eval()
    shapes = [(2, 6), (3, 7), (4, 5)]
    c = check(m, lambda i: (torch.randn(*shapes[i], 16),), calls=3, max_recompiles=0, dynamic=True)
    assert c["graphs"] == 1, c


def factories(x):
    b, t = x.shape[0], x.size(1)
    pos = torch.arange(t).expand(b, -1)
    z = x.new_zeros(b, t) + torch.full((b, 1), 2.0)
    return x + pos + z + torch.ones(len(x), t) * (t - 1)


def test_sizes_in_factories_and_expand():
    c = check(factories, lambda i: (torch.randn(2 + i, 3 + 2 * i),), calls=4, max_recompiles=1)
    assert c["graphs"] == 2, c


def flatten_heads(x):
    # reshape of a non-viewable tensor: ATen gets the product b*t, which no
    # Python code computed: it becomes -1 of the view.
    y = x.transpose(0, 1).reshape(-1, x.shape[-1])
    return y * 2, y.shape[0] * 1.0


def test_reshape_with_computed_product():
    c = check(flatten_heads, lambda i: (torch.randn(2 + i, 3 + i, 4),), calls=4, max_recompiles=1)
    assert c["graphs"] == 2, c


def size_arith(x):
    n = x.shape[0]
    return x.view(n // 2, 2 * x.shape[1]), n * 3 - 1


def test_size_arithmetic_and_size_outputs():
    # n // 2, 2 * t and a size returned to Python are computed at run time.
    c = check(size_arith, lambda i: (torch.randn(2 * (2 + i), 3),), calls=4, max_recompiles=1)
    assert c["graphs"] == 2, c


def loop_over_size(x):
    out = x
    for _ in range(x.shape[0]):
        out = out + 1
    return out


def test_size_used_as_python_number_stays_static():
    # range(size) unrolls per size: the frame compiles static, and explain says why.
    c = check(loop_over_size, batches(2, 3, 5, 7), calls=4, max_recompiles=3)
    assert c["graphs"] == 4, c
    ex = xacc.explain(loop_over_size)
    ex(torch.randn(2, 4))
    out = ex.again(torch.randn(3, 4))
    assert out.recompiles and "size=[2, 4]" in out.recompiles[0], out.recompiles
    assert len(out.dynamic) == 1 and "dynamic shapes not used: GB022" in out.dynamic[0], out.dynamic
    assert "test_dynamic.py:" in out.dynamic[0] and "Dynamic Shapes:" in str(out)


def shared(x, y):
    return torch.cat([x.sum(1), y * y.shape[0]])


def test_dims_sharing_a_symbol_are_guarded_equal():
    jf = jit(shared)
    for n in (2, 3, 4):
        x, y = torch.randn(n, 4), torch.randn(n)
        compare_call(shared, jf, (x, y,))
    assert counters()["recompiles"] == 1
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert any("size(0) == " in s and "(both are s0)" in s for s in g.guards), g.guards
    x, y = torch.randn(5, 4), torch.randn(3)  # no longer equal: another graph
    compare_call(shared, jf, (x, y,))
    assert counters()["recompiles"] == 2
    ex = xacc.explain(shared)
    ex(torch.randn(2, 4), torch.randn(2))
    assert ex.again(torch.randn(3, 4), torch.randn(3)).dynamic == ["shared: dynamic dims: L['x'][0]=s0, L['y'][0]=s0"]
    out = ex.again(torch.randn(5, 4), torch.randn(3))
    assert any(r.endswith(": L['x'].size(0) == L['y'].size(0) (both are s0)") for r in out.recompiles), out.recompiles


def test_parameters_stay_static_across_module_instances():
    # Two Linear modules of different shapes share Linear.forward: their
    # weights' and inputs' feature sizes differ between calls, which is no size
    # changing; each module's batch dim becomes dynamic on its own.
    torch.manual_seed(0)
    a, b = torch.nn.Linear(4, 6), torch.nn.Linear(6, 3)
    ja, jb = jit(a), jit(b)
    with torch.no_grad():
        for n in (2, 3, 4, 5, 7):
            x = torch.randn(n, 4)
            torch.testing.assert_close(jb(ja(x)), b(a(x)))
    # b's first compile, then one recompile per module when the batch changes
    assert counters()["recompiles"] == 3, counters()
    dyn = [d for e in convert.EVENTS for d in e.dynamic]
    assert dyn == ["dynamic dims: L['input'][0]=s0"] * 2, dyn


@pytest.mark.skipif(not xacc_C.device_available("xpu0"), reason="no xpu0 target")
def test_attention_symbolic_sizes_on_xpu0():
    torch.manual_seed(0)
    m = Attention().eval()
    shapes = [(2, 6), (3, 6), (4, 6), (3, 7), (5, 9)]
    with torch.no_grad():
        c = check(m, lambda i: (torch.randn(*shapes[i], 16),), calls=5, max_recompiles=2, device="xpu0",
                  atol=1e-4)
    assert c["graphs"] == 3, c


def with_expanded(x, ids):
    return x + ids.float().sum(-1, keepdim=True)


def test_expanded_input_batch_dim_is_dynamic():
    # transformers passes token_type_ids as a buffer expanded to (batch, seq): stride 0.
    base = torch.arange(5)
    jf = jit(with_expanded)
    for n in (2, 3, 4, 6):
        x, ids = torch.randn(n, 5), base.expand(n, 5)
        compare_call(with_expanded, jf, (x, ids,))
    assert counters()["recompiles"] == 1 and counters()["graphs"] == 2, counters()
    g = [e for e in convert.EVENTS if e.outcome == "graph"][-1]
    assert any("size=[>=2, 5], stride=[0, 1]" in x for x in g.guards), g.guards
