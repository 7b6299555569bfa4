"""Profile-guided optimization (docs/pgo.md): a profile is recorded by one process
and used by the next (tests/python/pgo/prog.py runs in child processes)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import xacc
from xacc._C import capture as C
from xacc.jit import counters

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
PROG = HERE / "prog.py"
has_xpu = C.device_available("xpu0")


def run(scenario: str, mode: str, profile: Path, device: str = "cpu", *extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("XACC_LOG", None)
    p = subprocess.run([sys.executable, str(PROG), scenario, mode, str(profile), device, *extra],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def frame(profile: Path, qualname: str) -> dict:
    data = json.loads(profile.read_text())
    found = [v for k, v in data["frames"].items() if k.endswith(f":{qualname}:{v['firstlineno']}")
             and v["file"] == str(PROG)]
    assert len(found) == 1, list(data["frames"])
    return found[0]


def test_profile_written_with_expected_fields(tmp_path):
    prof = tmp_path / "p.json"
    r = run("batches", "record", prof, "cpu", "4,4,6,8,8,8")
    assert r["equal"]
    data = json.loads(prof.read_text())
    assert data["format"] == "xacc-pgo" and data["version"] == 1
    assert data["torch_version"] and data["xacc_version"] == xacc.__version__
    fr = frame(prof, "scale_rows")
    assert fr["calls"] == 6
    assert fr["compiles"] >= 2 and fr["recompiles"] >= 1  # the batch size changed
    assert sum(g["calls"] for g in fr["graphs"].values()) == 6
    shapes = {tuple(s) for g in fr["graphs"].values() for i in g["inputs"] if i["name"] == "L['x']"
              for s in i["shapes"]}
    assert shapes == {(4, 8), (6, 8), (8, 8)}
    for g in fr["graphs"].values():
        assert g["device"] == "cpu" and g["outcome"] == "graph" and g["ops"] > 0 and g["compile_s"] > 0
        assert g["run"]["runs"] == g["calls"] and g["run"]["median_s"] > 0
        names = [i["name"] for i in g["inputs"]]
        assert "L['x']" in names and "L['w']" in names
        assert all(i["dtypes"] == ["float32"] for i in g["inputs"])
    # a valid profile by its own reader
    assert xacc.pgo.load(prof)["frames"]


def test_dynamic_dims_from_profile_no_recompile(tmp_path):
    prof = tmp_path / "p.json"
    run("batches", "record", prof, "cpu", "4,6,8,8,6,4")  # more calls than cold_calls
    # Without the profile, changing batch sizes recompile once (automatic dynamic shapes) ...
    base = run("batches", "record", tmp_path / "other.json", "cpu", "3,5,7,9,11")
    assert base["counters"]["recompiles"] >= 1
    # ... with it, dim 0 is dynamic from the first compile: one compile, no recompile.
    r = run("batches", "use", prof, "cpu", "3,5,7,9,11")
    assert r["equal"]
    assert r["counters"]["recompiles"] == 0 and r["counters"]["graphs"] == 1, r["counters"]
    notes = r["pgo"]["scale_rows"]
    assert any(n.startswith("PGO: dim 0 of L['x'] dynamic (seen 3 sizes: 4, 6, 8)") for n in notes), notes
    assert not r["warnings"]


def test_cold_tiny_graph_runs_eagerly(tmp_path):
    prof = tmp_path / "p.json"
    rec = run("cold", "record", prof, "cpu", "50")
    assert rec["counters"]["graphs"] == 2
    assert frame(prof, "tiny_calls_helper")["calls"] == 1
    assert frame(prof, "tiny")["calls"] == 50
    r = run("cold", "use", prof, "cpu", "50")
    assert r["equal"]
    # the cold frame (one call) runs eagerly, its callee is not compiled on its own;
    # the hot one (50 calls) is still compiled
    assert r["outcomes"]["tiny_calls_helper"] == "skip"
    assert "helper" not in r["outcomes"]
    assert r["outcomes"]["tiny"] == "graph"
    assert r["counters"]["graphs"] == 1
    assert any("runs eagerly: cold and tiny (1 call(s)" in n for n in r["pgo"]["tiny_calls_helper"])
    assert "tiny" not in r["pgo"]


@pytest.mark.skipif(not has_xpu, reason="built without the MLIR backend")
def test_region_left_to_aten_on_xpu(tmp_path):
    prof = tmp_path / "p.json"
    rec = run("regions", "record", prof, "xpu0", "6")
    assert rec["equal"]
    fr = frame(prof, "pointwise")
    (g,) = fr["graphs"].values()
    assert g["device"] == "xpu0" and g["regions"], g
    reg = g["regions"][0]
    assert reg["key"].startswith("r0:") and reg["ops"]
    assert reg["kernel"]["runs"] == 6 and reg["aten"]["runs"] == 6
    assert reg["kernel"]["median_s"] > 0 and reg["aten"]["median_s"] > 0
    # A profile that says the kernel is slower than ATen (edited from the real one):
    data = json.loads(prof.read_text())
    for f in data["frames"].values():
        for gg in f["graphs"].values():
            for r in gg.get("regions", []):
                r["kernel"]["median_s"] = r["aten"]["median_s"] * 10 + 1e-3
    prof.write_text(json.dumps(data))
    r = run("regions", "use", prof, "xpu0", "3")
    assert r["equal"]
    assert any(f"left to ATen: {reg['key']}" in p for p in r["plans"]), r["plans"]
    notes = r["pgo"]["pointwise"]
    assert any(n.startswith("PGO: region r0 (") and "left to ATen (mlir" in n for n in notes), notes
    # and a profile that says the kernel is faster keeps the region in MLIR
    for f in data["frames"].values():
        for gg in f["graphs"].values():
            for r0 in gg.get("regions", []):
                r0["kernel"]["median_s"] = r0["aten"]["median_s"] / 10
    prof.write_text(json.dumps(data))
    r = run("regions", "use", prof, "xpu0", "3")
    assert r["equal"] and not any("left to ATen" in p for p in r["plans"])
    assert "pointwise" not in r["pgo"]


@pytest.mark.parametrize("content, expect", [
    ("{not json", ":1:2: not valid JSON"),
    ("[1, 2]", "top level: expected a JSON object"),
    ('{"format": "xacc-pgo", "version": 99, "frames": {}}', "profile version 99 is not supported"),
    ('{"format": "other"}', "not an xacc PGO profile"),
    ('{"format": "xacc-pgo", "version": 1, "frames": {"a:f:1": {"calls": "many"}}}',
     'frames["a:f:1"].calls: expected an integer, got "many"'),
    ('{"format": "xacc-pgo", "version": 1, "frames": {"a:f:1": {"graphs": {"g": {"inputs": [{"name": "x", '
     '"shapes": [[2, "b"]]}]}}}}}', 'frames["a:f:1"].graphs["g"].inputs[0].shapes[0]: expected a list of integer'),
    (b"\xff\xfe\x00garbage", "not a text file"),
])
def test_malformed_profile_warns_with_file_name(tmp_path, content, expect):
    prof = tmp_path / "bad.json"
    if isinstance(content, bytes):
        prof.write_bytes(content)
    else:
        prof.write_text(content)
    with pytest.raises(xacc.pgo.ProfileError) as ei:
        xacc.pgo.load(prof)
    assert str(ei.value).startswith(str(prof)) and expect in str(ei.value), str(ei.value)
    assert isinstance(ei.value, xacc.XaccError)
    # compiling with it warns (naming the file) and goes on without PGO
    with pytest.warns(xacc.pgo.PGOWarning) as caught:
        f = xacc.jit(_double, pgo=xacc.pgo.Config(str(prof), "use"))
    assert len(caught) == 1 and str(caught[0].message).find(str(prof)) >= 0 and expect in str(caught[0].message)
    x = torch.randn(3, 4)
    assert torch.equal(f(x), _double(x))
    c = counters()
    assert c["internal_errors"] == 0 and c["graphs"] == 1, c


def _double(x):
    return torch.relu(x) * 2


def test_missing_profile_in_use_mode_warns(tmp_path):
    prof = tmp_path / "none.json"
    r = run("batches", "use", prof, "cpu", "4")
    assert r["equal"] and str(prof) in r["warnings"][0] and "cannot read" in r["warnings"][0]
    assert not prof.exists()


def test_record_merges_into_existing_profile(tmp_path):
    prof = tmp_path / "p.json"
    run("batches", "record", prof, "cpu", "4,6")
    run("cold", "record", prof, "cpu", "2")
    names = {v["qualname"] for v in json.loads(prof.read_text())["frames"].values()}
    assert {"scale_rows", "tiny", "tiny_calls_helper"} <= names


def test_auto_mode_records_then_uses(tmp_path):
    prof = tmp_path / "auto.json"
    first = run("batches", "auto", prof, "cpu", "4,6,4,6")
    assert prof.exists() and "scale_rows" not in first["pgo"]
    second = run("batches", "auto", prof, "cpu", "4,6,10")
    assert second["counters"]["recompiles"] == 0 and second["pgo"]["scale_rows"]


def test_xjit_cli_pgo_and_explain(tmp_path):
    prof = tmp_path / "cli.json"
    script = tmp_path / "s.py"
    script.write_text("import torch\n\ndef f(x):\n    return torch.relu(x) * 2\n\n"
                      "for n in (3, 4, 5, 6):\n    f(torch.randn(n, 4))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "xjit", "--hot-calls", "1", "--pgo-profile", str(prof)]
    p = subprocess.run(cmd + [str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert f"-> {prof}" in p.stderr and "pgo: recorded 2 graph(s) of 1 frame(s), 4 call(s)" in p.stderr
    p = subprocess.run(cmd + ["--explain", str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "PGO: dim 0 of L['x'] dynamic (seen 4 sizes: 3, 4, 5, 6)" in p.stderr, p.stderr
    assert "recompiles: 0" in p.stderr
    assert "pgo: compiled with the profile" in p.stderr


def test_bad_pgo_argument():
    with pytest.raises(TypeError, match="pgo must be"):
        xacc.jit(lambda x: x, pgo=3)
    with pytest.raises(ValueError, match="pgo mode"):
        xacc.jit(lambda x: x, pgo=xacc.pgo.Config("x.json", mode="sometimes"))


def test_explain_lists_pgo_decisions(tmp_path):
    prof = str(tmp_path / "e.json")
    f = xacc.jit(_double, pgo=xacc.pgo.Config(prof, "record"))
    for n in (3, 4, 5, 6):
        f(torch.randn(n, 4))
    xacc.pgo.flush()
    x = torch.randn(7, 4)
    out = xacc.explain(_double, pgo=xacc.pgo.Config(prof, "use"))(x)
    assert torch.equal(out.result, _double(x))
    assert out.pgo_decisions == ["PGO: dim 0 of L['x'] dynamic (seen 4 sizes: 3, 4, 5, 6)"]
    assert "PGO Decisions:\n  PGO: dim 0 of L['x'] dynamic" in str(out)
    assert out.graph_count == 1
    assert "[s0, 4]" in out.graphs[0]
