"""xacc.debug.compare: the three paths agree on the capture corpus, and with a
deliberately wrong lowering (XACC_TEST_FAULT_OP) the report names the faulty
node as the first divergent one."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import xacc
from corpus import CASES
from xacc._src.debug.compare import diff_values, prefix_graph, split_graph


def test_corpus_three_paths_agree():
    for name, (fn, make_args, _) in CASES.items():
        torch.manual_seed(0)
        rep = xacc.debug.compare(fn, *make_args())
        assert [p.name for p in rep.paths] == ["python", "aten", "xpu0"]
        assert rep.ok, f"{name}:\n{rep}"
        for p in rep.paths[1:]:
            assert p.diffs, name  # every output compared
            assert all(d.max_abs == 0 or d.ok for d in p.diffs)
            assert p.graphs, name  # every path captured at least one graph


def chain(x, y):
    a = torch.relu(x) + y
    b = torch.sigmoid(a) * 3
    c = torch.tanh(b) - a
    return c.sum(dim=0), a


@pytest.mark.parametrize("op,index", [("aten.sigmoid.default", 2), ("aten.tanh.default", 4),
                                      ("aten.relu.default", 0)])
def test_fault_injection_names_first_divergent_node(monkeypatch, op, index):
    monkeypatch.setenv("XACC_TEST_FAULT_OP", op)
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    rep = xacc.debug.compare(chain, x, y)
    assert not rep.ok
    for name in ("aten", "xpu0"):
        p = rep.path(name)
        assert any(not d.ok for d in p.diffs), str(rep)
        (g,) = p.graphs
        assert g.first_divergent is not None, str(rep)
        assert g.first_divergent.op == op and g.first_divergent.index == index, str(rep)
        assert g.first_divergent.diff.max_abs == pytest.approx(1.0, abs=1e-5)
    assert f"first divergent node {index} ({op})" in str(rep)
    assert "mlir" in rep.path("xpu0").executor  # the backend registered for xpu (Note [Backend interface])


def test_xpu0_fault_is_in_the_mlir_lowering(monkeypatch):
    """On xpu0 the faulty op runs inside an MLIR kernel (not on the ATen fallback):
    the divergence comes from the deliberately wrong lowering."""
    from xacc._C import capture as C
    from xacc._src.debug.executors import DeviceExecutor, InterpExecutor
    gir = xacc.explain(chain)(torch.randn(3, 4), torch.randn(3, 4)).graphs[0]
    plan = C.compile_gir(gir, device="xpu0").describe()
    assert "region" in plan and "aten.tanh.default" in plan.split("fallback")[0], plan
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    ok = DeviceExecutor("xpu0").run(gir, [x, y])
    monkeypatch.setenv("XACC_TEST_FAULT_OP", "aten.tanh.default")
    bad = DeviceExecutor("xpu0").run(gir, [x, y])
    ref = InterpExecutor().run(gir, [x, y])
    torch.testing.assert_close(ok[0], ref[0])
    torch.testing.assert_close(bad[0], ref[0] + 3.0)  # tanh(b) + 1, summed over 3 rows


def test_no_fault_without_the_switch(monkeypatch):
    monkeypatch.delenv("XACC_TEST_FAULT_OP", raising=False)
    rep = xacc.debug.compare(chain, torch.randn(3, 4), torch.randn(3, 4))
    assert rep.ok and rep.first_divergent is None, str(rep)


def test_fault_in_a_graph_after_a_break(monkeypatch):
    monkeypatch.setenv("XACC_TEST_FAULT_OP", "aten.cos.default")
    fn, make_args, _ = CASES["break_twice"]
    rep = xacc.debug.compare(fn, *make_args())
    bad = [g for g in rep.path("aten").graphs if g.first_divergent is not None]
    assert len(bad) == 1 and bad[0].first_divergent.op == "aten.cos.default", str(rep)
    assert [g.ok for g in rep.path("aten").graphs].count(True) == 2


def test_prefix_graphs_cover_every_node():
    ex = xacc.explain(chain)(torch.randn(3, 4), torch.randn(3, 4))
    gir = ex.graphs[0]
    _, nodes, _ = split_graph(gir)
    assert [n.op for n in nodes][:3] == ["aten.relu.default", "aten.add.Tensor", "aten.sigmoid.default"]
    text, owners = prefix_graph(gir, len(nodes) - 1)
    assert [j for j, _ in owners] == list(range(len(nodes)))
    m = xacc.ir.parse(text)  # a prefix is a valid graph
    assert len(m.interpret(m.graph_names[0], torch.randn(3, 4), torch.randn(3, 4))) == len(nodes)


def test_diff_values():
    a = torch.tensor([1.0, 2.0, float("nan")])
    assert diff_values(a, a.clone(), "x", 1e-5, 1e-4).ok
    d = diff_values(a, a + torch.tensor([0.0, 0.5, 0.0]), "x", 1e-5, 1e-4)
    assert not d.ok and d.max_abs == pytest.approx(0.5) and d.max_rel == pytest.approx(0.5 / 2.0)
    assert not diff_values(a, a[:2], "x", 1e-5, 1e-4).ok
    assert diff_values(3, 3.0, "n", 0, 0).ok and not diff_values(3, 4, "n", 0.5, 0).ok


def test_python_error_is_reported_not_raised():
    def bad(x):
        return x @ torch.randn(5, 5)

    rep = xacc.debug.compare(bad, torch.randn(2, 3))
    assert "RuntimeError" in rep.path("python").error
    assert not rep.ok


def test_module_outputs_compared():
    lin = torch.nn.Linear(4, 3)
    rep = xacc.debug.compare(lambda x: F.gelu(lin(x)), torch.randn(2, 4))
    assert rep.ok, str(rep)
