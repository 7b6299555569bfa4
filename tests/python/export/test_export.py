"""xacc.export over the capture corpus (tests/python/export/corpus.py) and the
example models: every artifact is written, the exported GIR reloads with
xacc-opt and xacc.ir and re-runs (reference interpreter and ATen executor) to the
values the captured graph produced, and the regenerated Camel runs under
`camel` with the same output where Camel can express the graph."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

import xacc
from corpus import CASES
from xacc._C import capture as C
from xacc._src.export.writer import find_tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = ["mlp.py", "tiny_gpt.py", "tiny_gpt_cuda.py"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every corpus case exported once (one process, one fixture)."""
    base = tmp_path_factory.mktemp("export")
    out = {}
    for name, (fn, make_args, _) in CASES.items():
        torch.manual_seed(0)
        out[name] = xacc.export(fn, *make_args(), dir=str(base / name))
    return out


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """Each example model run by `python -m xjit --export DIR`."""
    base = tmp_path_factory.mktemp("examples")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = {}
    for ex in EXAMPLES:
        d = base / ex.removesuffix(".py")
        r = subprocess.run([sys.executable, "-m", "xjit", "--export", str(d), os.path.join(ROOT, "examples", ex)],
                           capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "export:" in r.stderr, r.stderr[-2000:]
        with open(d / "manifest.json") as f:
            out[ex] = (str(d), json.load(f))
    return out


def _graph_frames(manifest):
    return [f for f in manifest["frames"] if f["graph"]]


def test_corpus_is_large_enough():
    assert len(CASES) >= 20
    assert sum(1 for _, _, camel in CASES.values() if camel) >= 5


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_artifact_written(exported, name):
    r = exported[name]
    m = r.manifest
    frames = m["frames"]
    assert frames, "no frame was compiled"
    assert os.path.isfile(r.index)
    for fr in frames:
        art = fr["artifacts"]
        for key in ("original_dis", "original_py", "guards", "breaks", "recompiles", "times"):
            assert key in art, (key, fr)
            assert os.path.getsize(os.path.join(r.dir, art[key])) > 0
        assert json.load(open(os.path.join(r.dir, art["times"])))["total_s"] > 0
        src = open(os.path.join(r.dir, art["original_py"])).read()
        assert src.startswith("def ") and "return" in src, src
        if fr["outcome"] == "code":  # a break: rewritten bytecode and the resume function it calls
            assert "rewritten_dis" in art and "rewritten_py" in art
            assert fr["resumes"], fr
            assert "resume" in open(os.path.join(r.dir, art["rewritten_py"])).read()
        if fr["graph"]:
            for key in ("gir", "dot", "svg", "values"):
                assert key in art, (key, fr["notes"])
            assert open(os.path.join(r.dir, art["svg"])).read().lstrip().startswith(("<?xml", "<svg"))
            assert "mlir" in fr["notes"]  # cpu device: says why there is no MLIR
    assert m["graph_count"] >= 1


@pytest.mark.parametrize("name", ["break_print", "break_item", "break_twice", "global_write", "data_branch_shapes"])
def test_break_report(exported, name):
    r = exported[name]
    breaks = json.load(open(os.path.join(r.dir, "breaks.json")))
    assert breaks
    for b in breaks:
        assert b["code"].startswith("GB") and b["reason"] and b["hint"]
        assert b["file"].endswith("corpus.py") and b["line"] > 0
        assert b["user_stack"] and b["user_stack"][-1]["function"]
    if name == "break_print":  # the print is in an inlined helper: the stack shows both frames
        stack = [s["function"] for s in breaks[0]["user_stack"]]
        assert stack[0] == "helper_print" and stack[-1] == "break_print", stack


def test_data_branch_exports_one_graph_with_ctrl_if(exported):
    r = exported["data_branch"]
    assert json.load(open(os.path.join(r.dir, "breaks.json"))) == []
    frames = [f for f in r.manifest["frames"] if f["graph"]]
    assert len(frames) == 1 and r.manifest["break_count"] == 0, r.manifest
    text = open(os.path.join(r.dir, frames[0]["artifacts"]["gir"])).read()
    assert "ctrl.if(" in text and "aten.is_nonzero.default" in text, text


def _reload_and_rerun(gir_path, values_path):
    text = open(gir_path).read()
    vals = torch.load(values_path)
    m = xacc.ir.parse(text, gir_path)  # verifies
    from xacc._src.debug.executors import graph_header
    name, params = graph_header(text)
    it = iter(vals["inputs"])
    args = [None if t == "!token" else next(it) for t in params]
    # in-place graphs mutate their inputs: give each executor its own copy
    from xacc._src.export.record import snapshot
    ref = m.interpret(name, *snapshot(args))
    aten = C.compile_gir(text, name)(*snapshot(vals["inputs"]))
    for got in (ref, list(aten)):
        assert len(got) == len(vals["outputs"])
        for a, b in zip(got, vals["outputs"]):
            if isinstance(b, torch.Tensor):
                torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)
            else:
                assert a == pytest.approx(b)


def test_gir_reloads_and_reruns(exported):
    n = 0
    for name, r in exported.items():
        for fr in _graph_frames(r.manifest):
            _reload_and_rerun(os.path.join(r.dir, fr["artifacts"]["gir"]), os.path.join(r.dir, fr["artifacts"]["values"]))
            n += 1
    assert n >= len(CASES)


def test_gir_reloads_with_xacc_opt(exported, examples):
    paths = [os.path.join(r.dir, fr["artifacts"]["gir"]) for r in exported.values() for fr in _graph_frames(r.manifest)]
    paths += [os.path.join(d, fr["artifacts"]["gir"]) for d, m in examples.values() for fr in _graph_frames(m)]
    opt = find_tool("xacc-opt")
    assert opt, "xacc-opt is not built"
    # one xacc-opt process for every graph (it takes about a second to start with libtorch)
    joined = "\n// -----\n".join(open(p).read() for p in paths)
    r = subprocess.run([opt, "--split-input-file", "-"], input=joined, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count("graph @") == len(paths)


def test_example_models_exported_and_rerun(examples):
    for ex, (d, m) in examples.items():
        frames = _graph_frames(m)
        assert frames, ex
        assert os.path.isfile(os.path.join(d, "index.html"))
        for fr in frames:
            art = fr["artifacts"]
            _reload_and_rerun(os.path.join(d, art["gir"]), os.path.join(d, art["values"]))
            assert "dot" in art
            assert "svg" in art, fr["notes"]  # large graphs too (sfdp layout)
            assert open(os.path.join(d, art["svg"])).read().lstrip().startswith(("<?xml", "<svg"))
            if "cml" in art:  # scalar graphs (constructor arithmetic): run them too
                _run_camel(d, art)
            else:
                assert fr["notes"]["cml"].startswith("not expressible: "), fr["notes"]
        assert any(fr["notes"].get("cml", "").startswith("not expressible: aten.") for fr in frames), ex


def _run_camel(d, art):
    camel = find_tool("camel")
    assert camel, "camel is not built"
    p = subprocess.run([camel, "run", os.path.join(d, art["cml"])], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout == open(os.path.join(d, art["cml_expected"])).read()


def test_camel_regenerated_and_runs(exported):
    camel = find_tool("camel")
    assert camel, "camel is not built"
    ran = 0
    for name, (_, _, expressible) in CASES.items():
        r = exported[name]
        for fr in _graph_frames(r.manifest):
            art, notes = fr["artifacts"], fr["notes"]
            if not expressible:
                assert "cml" not in art and notes["cml"].startswith("not expressible: "), (name, notes)
                continue
            assert "cml" in art, (name, notes)
            _run_camel(r.dir, art)
            ran += 1
    assert ran >= 5


def test_camel_expected_output_matches_python(exported):
    """The .expected file is what Python computed: int_math's results printed the Camel way."""
    r = exported["int_math"]
    fr = _graph_frames(r.manifest)[0]
    c, d, neg = CASES["int_math"][0](None, 7, 5)
    assert open(os.path.join(r.dir, fr["artifacts"]["cml_expected"])).read() == f"{c}\n{d}\n{neg}\n"


def test_guards_and_recompile_reasons(tmp_path):
    from xacc.jit import jit, reset
    from xacc._src.capture import convert
    from xacc._src.export import Recorder, write_export

    def f(x):
        return x * 2

    reset()
    jf = jit(f)
    with Recorder() as rec:
        jf(torch.randn(3))
        jf(torch.randn(3, 2))  # a new shape: recompile with the failing guard recorded
    m = write_export(list(convert.EVENTS), str(tmp_path), rec)
    assert len(m["frames"]) == 2
    second = m["frames"][1]
    assert second["recompile_reasons"], second
    text = open(tmp_path / second["artifacts"]["recompiles"]).read()
    assert "guard failed" in text and "L['x']" in text
    guards = open(tmp_path / m["frames"][0]["artifacts"]["guards"]).read()
    assert "L['x']: tensor(dtype=Float" in guards


def test_xpu_device_writes_mlir(tmp_path):
    if find_tool("xacc-mlir") is None:
        pytest.skip("xacc-mlir is not built (MLIR backend disabled)")
    r = xacc.export(CASES["gelu_chain"][0], torch.randn(8), dir=str(tmp_path), device="xpu0")
    fr = _graph_frames(r.manifest)[0]
    assert "mlir" in fr["artifacts"], fr["notes"]
    mlir = open(tmp_path / fr["artifacts"]["mlir"]).read()
    assert "func.func" in mlir and "linalg" in mlir
    assert "mlir_lowered" in fr["artifacts"], fr["notes"]
