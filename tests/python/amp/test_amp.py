"""precision="auto" (docs/mixed-precision.md): the amp pass's placement seen
from Python, outputs within tolerance of eager float32 on cpu and xpu0, region
back-out (all regions with a tiny tolerance, exactly the bad one otherwise),
graph outputs keeping the user's dtype, the precision report, the cache
guard that keeps float32 and auto entries apart, and option errors."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn.functional as F

import xacc
from xacc import ir
from xacc._C import capture as C
from xacc._src.amp import rel_error
from xacc._src.capture import convert

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DEVICES = ["cpu"] + (["xpu0"] if C.device_available("xpu0") else [])


@pytest.fixture(autouse=True)
def fresh_cache():
    from xacc.jit import reset
    reset()
    yield
    reset()


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 128)
        self.fc3 = torch.nn.Linear(128, 32)
        self.ln = torch.nn.LayerNorm(32)

    def forward(self, x):
        h = F.gelu(self.fc1(x))
        h = torch.relu(self.fc2(h))
        return torch.log_softmax(self.ln(self.fc3(h)), dim=-1)


def mlp_and_input(seed=0):
    torch.manual_seed(seed)
    return MLP().eval(), torch.randn(32, 64)


def graphs_of_last_compile():
    return [ev.graph for ev in convert.EVENTS if ev.graph]


def test_pass_placement_from_python():
    m = ir.parse(textwrap.dedent("""\
        graph @f(%x: tensor<f32, [4, 8], cpu>, %w: tensor<f32, [8, 8], cpu>) -> tensor<f32, [4, 8], cpu> {
          %0 = aten.mm.default(%x, %w) : tensor<f32, [4, 8], cpu>
          %1 = aten.relu.default(%0) : tensor<f32, [4, 8], cpu>
          %2 = aten.mm.default(%1, %w) : tensor<f32, [4, 8], cpu>
          %3 = aten._softmax.default(%2) {dim = 1, half_to_float = false} : tensor<f32, [4, 8], cpu>
          return %3
        }"""))
    regions = m._impl.amp_regions("f")
    assert [r["ops"] for r in regions["regions"]] == [["aten.mm.default", "aten.relu.default"], ["aten.mm.default"]]
    assert regions["kept_f32"] == ["aten._softmax.default"]
    stats = m.run_passes("amp", verify_each=True)
    assert stats["amp.regions-bf16"] == 2 and stats["amp.casts-inserted"] == 3
    text = m.print(False)
    assert "aten.relu.default(%" in text and ": tensor<bf16, [4, 8], cpu>" in text
    assert "aten._softmax.default(%" in text.split("_to_copy")[-1]  # softmax reads the cast back to f32
    assert text.rstrip().splitlines()[0].endswith("-> tensor<f32, [4, 8], cpu> {")
    m2 = ir.parse(m.print(True))  # the rewritten graph parses back and verifies
    m2.verify()
    with pytest.raises(xacc.CompileError, match="option exclude"):
        ir.parse(m.print(True)).run_passes("amp", options={"exclude": "x"})


@pytest.mark.parametrize("device", DEVICES)
def test_outputs_within_tolerance(device):
    model, x = mlp_and_input()
    ref = model(x)
    f = xacc.jit(model, device=device, precision="auto")
    with torch.no_grad():
        y = f(x)
        y2 = f(x)  # the installed graph; no second measurement
    assert y.dtype == torch.float32 and y.shape == ref.shape
    err = rel_error(ref, y)
    assert 0 < err <= 1e-2, err  # not bit-equal: something really ran in bfloat16
    assert torch.equal(y, y2)
    (rep,) = xacc.precision_report(f)
    assert rep.device == device and rep.checked and rep.rounds == 1
    assert [r.precision for r in rep.regions] == ["bfloat16"] * 3
    assert all(r.error is not None and r.error <= 1e-2 for r in rep.regions)
    assert rep.max_output_error <= 1e-2
    assert "aten.native_layer_norm.default" in rep.kept_f32 and "aten._log_softmax.default" in rep.kept_f32
    (graph,) = graphs_of_last_compile()
    assert "tensor<bf16" in graph and 'dtype = "bf16"' in graph


@pytest.mark.parametrize("device", DEVICES)
def test_tiny_tolerance_backs_everything_out(device):
    model, x = mlp_and_input()
    f = xacc.jit(model, device=device, precision="auto", tolerance=1e-7)
    with torch.no_grad():
        y = f(x)
        ref = xacc.jit(model, device=device)(x)
    (rep,) = xacc.precision_report(f)
    assert rep.checked and [r.precision for r in rep.regions] == ["float32"] * 3
    assert all(r.backed_out and r.error_at_back_out > 1e-7 for r in rep.regions)
    assert rep.rounds == 4  # one measurement per back-out, plus the all-float32 one
    assert rep.max_output_error == 0.0
    assert torch.equal(y, ref)
    graph = [ev.graph for ev in convert.EVENTS if ev.precision is rep][0]
    assert "bf16" not in graph


class TwoHeads(torch.nn.Module):
    """Head `a` is benign in bfloat16; head `b` reads x + 256, where bfloat16's
    spacing is 2, through weights whose rows sum to zero: its exact result is
    W @ x, which bfloat16 destroys."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 16, bias=False)
        with torch.no_grad():
            self.b.weight -= self.b.weight.mean(dim=1, keepdim=True)

    def forward(self, x):
        return self.a(x), self.b(x + 256.0)


def test_only_the_bad_region_is_backed_out():
    torch.manual_seed(1)
    model, x = TwoHeads(), torch.randn(8, 16)
    f = xacc.jit(model, precision="auto")
    with torch.no_grad():
        ya, yb = f(x)
        ra, rb = model(x)
    (rep,) = xacc.precision_report(f)
    by_op = {tuple(r.ops): r for r in rep.regions}
    assert len(rep.regions) == 2
    bad = [r for r in rep.regions if r.backed_out]
    assert len(bad) == 1 and bad[0].error_at_back_out > 0.1, str(rep)
    good = [r for r in rep.regions if not r.backed_out]
    assert good[0].precision == "bfloat16" and good[0].error <= 1e-2, by_op
    assert 0 < rel_error(ra, ya) <= 1e-2
    assert rel_error(rb, yb) <= 1e-5  # float32 again
    # The decision is kept: later calls run the same graph.
    with torch.no_grad():
        assert torch.equal(f(x)[1], yb)
    assert len(xacc.precision_report(f)) == 1


def test_outputs_keep_user_dtype():
    torch.manual_seed(0)
    w32, w64 = torch.randn(8, 8), torch.randn(8, 8, dtype=torch.float64)

    def f(x, y):
        return x @ w32, (y @ w64).sum(), (x @ w32).argmax(dim=1)

    g = xacc.jit(f, precision="auto")
    x, y = torch.randn(4, 8), torch.randn(4, 8, dtype=torch.float64)
    a, s, i = g(x, y)
    ea, es, ei = f(x, y)
    assert (a.dtype, s.dtype, i.dtype) == (torch.float32, torch.float64, torch.int64)
    assert rel_error(ea, a) <= 1e-2 and torch.equal(es, s)
    (rep,) = xacc.precision_report(g)
    assert all("float64" not in str(r) for r in rep.regions)


def test_float32_and_auto_entries_do_not_mix():
    model, x = mlp_and_input()
    auto = xacc.jit(model, precision="auto")
    plain = xacc.jit(model)
    with torch.no_grad():
        ya = auto(x)
        yp = plain(x)
        ya2 = auto(x)
        ref = model(x)
    assert torch.equal(yp, ref) or rel_error(ref, yp) < 1e-6
    assert not torch.equal(ya, yp)
    assert torch.equal(ya, ya2)
    guards = [g for ev in convert.EVENTS for g in ev.guards if ".precision" in g]
    assert any("'auto:0.01'" in g for g in guards) and any("'float32'" in g for g in guards)


def test_report_in_explain_and_str():
    model, x = mlp_and_input()
    with torch.no_grad():
        out = xacc.explain(model, precision="auto")(x)
    (rep,) = out.precision
    text = str(out)
    assert "Precision:" in text and "3/3 region(s) in bfloat16" in text
    assert "region 0: bfloat16" in text and "addmm, gelu" in text
    assert "float32 by policy: native_layer_norm, _log_softmax" in text


def test_graph_without_regions_and_with_effects():
    def pointwise(x):
        return torch.relu(x) * 2

    g = xacc.jit(pointwise, precision="auto")
    x = torch.randn(4, 4)
    assert torch.equal(g(x), pointwise(x))
    (rep,) = xacc.precision_report(g)
    assert rep.regions == [] and "no matmul" in rep.note

    w = torch.randn(4, 4)

    def effect(x, buf):
        buf.add_(1.0)
        return x @ w

    h = xacc.jit(effect, precision="auto")
    buf = torch.zeros(2)
    y = h(x, buf)
    assert torch.equal(buf, torch.ones(2))  # the effect ran once, not once per measurement
    assert torch.equal(y, x @ w)
    reps = xacc.precision_report(h)
    assert reps and all(r.bf16_regions == [] for r in reps)


def test_bad_options():
    with pytest.raises(ValueError, match="precision must be one of"):
        xacc.jit(lambda x: x, precision="half")
    with pytest.raises(ValueError, match="tolerance must be a finite number"):
        xacc.jit(lambda x: x, precision="auto", tolerance=-1.0)
    with pytest.raises(TypeError, match="returned by xacc.jit"):
        xacc.precision_report(lambda x: x)


@pytest.mark.skipif("xpu0" not in DEVICES, reason="built without the MLIR backend")
def test_xpu0_fuses_casts_into_pointwise_kernels():
    model, x = mlp_and_input()
    f = xacc.jit(model, device="xpu0", precision="auto")
    with torch.no_grad():
        f(x)
    plans = [e["plan"] for e in C.entries(MLP.forward.__code__)]
    text = "\n".join(plans)
    # gelu and the casts around it are one MLIR kernel; no cast falls back to ATen.
    assert any("aten.gelu.default" in ln and "aten._to_copy.default" in ln for ln in text.splitlines()), text
    assert "fallback: aten._to_copy" not in text, text


def test_xjit_cli_precision_auto(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(textwrap.dedent("""\
        import torch
        torch.manual_seed(0)
        m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
        with torch.no_grad():
            print(m(torch.randn(4, 32)).shape)
        """))
    env = dict(os.environ, PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-m", "xjit", "--hot-calls", "1", "--precision", "auto", "--explain", str(script)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "torch.Size([4, 8])" in r.stdout
    assert "precision of Sequential.forward on cpu (tolerance 0.01): 2/2 region(s) in bfloat16" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "xjit", "--precision", "auto", "--tolerance", "-1", str(script)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 2 and "tolerance must be a finite number" in r.stderr


def test_backward_matches_torch_autocast():
    """The accuracy check covers forward outputs; gradients through bfloat16
    regions are those of torch.autocast(bfloat16) for the same ops."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    x, t = torch.randn(32, 64), torch.randint(0, 10, (32,))
    f = xacc.jit(m, precision="auto")
    F.cross_entropy(f(x), t).backward()
    ours = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = m(x)
    F.cross_entropy(out.float(), t).backward()
    theirs = [p.grad.clone() for p in m.parameters()]
    assert all(rel_error(b, a) <= 1e-6 for a, b in zip(ours, theirs))
    (rep,) = xacc.precision_report(f)
    assert len(rep.bf16_regions) == 2


def test_a_mixed_graph_that_fails_runs_float32(monkeypatch):
    from xacc._src import amp

    def broken(text, exclude, probe):
        raise xacc.CompileError("no bfloat16 kernel for this op")

    monkeypatch.setattr(amp, "_variant", broken)
    model, x = mlp_and_input()
    f = xacc.jit(model, precision="auto")
    with torch.no_grad():
        y = f(x)
        ref = xacc.jit(model)(x)
    assert torch.equal(y, ref)
    (rep,) = xacc.precision_report(f)
    assert not rep.checked and "mixed graph failed (CompileError" in rep.note
    assert [r.precision for r in rep.regions] == ["float32"] * 3
    assert convert.COUNTERS["internal_errors"] == 0
