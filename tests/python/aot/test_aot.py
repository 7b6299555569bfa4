"""xacc.aot / xacc.load / python -m xjit --cache: artifacts built in one process
run in a fresh one with no capture and no kernel compile (the logs say so),
give the results of eager PyTorch, fall back to the JIT when guards do not
hold, and are refused when tampered with, truncated or from other versions.
Every build and load runs in a real subprocess."""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


def _has_xpu():
    from xacc._C import capture
    return capture.device_available("xpu0")


DEVICES = ["cpu", pytest.param("xpu0", marks=pytest.mark.skipif(not _has_xpu(), reason="no MLIR backend"))]


def run_py(code, tmp_path, log="", check=True):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE), os.environ.get("PYTHONPATH", "")]),
               XACC_CACHE_DIR=str(tmp_path / "kernels"))
    env.pop("XACC_LOG", None)
    if log:
        env["XACC_LOG"] = log
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    if check:
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    return p


BUILD = """
    import torch, xacc, models
    model = models.make_model()
    info = xacc.aot(model, models.inputs(), "model.xacc", device="{device}")
    print("built", info.frames, info.entries, info.kernels)
    info = xacc.aot(models.pointwise, (torch.randn(64, 8), torch.randn(64, 8)), "fn.xacc", device="{device}")
    print("built", info.frames, info.entries, info.kernels)
    info = xacc.aot(models.with_break, (torch.randn(64, 8),), "brk.xacc", device="{device}")
    print("break", info.frames, info.entries)
    import numpy as np
    xacc.aot(models.with_numpy, (torch.randn(4, 8), np.ones((3, 8), np.float32)), "np.xacc", device="{device}")
"""


_BUILT = {}


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    """Builds the two artifacts once per device (in a subprocess) for the module."""

    def get(device):
        if device not in _BUILT:
            d = tmp_path_factory.mktemp(f"build-{device}")
            p = run_py(BUILD.format(device=device), d)
            lines = [ln.split() for ln in p.stdout.splitlines() if ln.startswith("built")]
            assert len(lines) == 2 and all(int(ln[2]) >= 1 for ln in lines), p.stdout + p.stderr
            assert "break 2 2" in p.stdout, p.stdout  # the split frame and its resume function
            if device == "xpu0":
                assert all(int(ln[3]) >= 1 for ln in lines), p.stdout  # the kernels are in the artifact
            _BUILT[device] = d
        return _BUILT[device]

    return get


def build(tmp_path, device, artifacts):
    """Copies the built artifacts into `tmp_path` (a fresh kernel cache there)."""
    src = artifacts(device)
    for name in ("model.xacc", "fn.xacc", "brk.xacc", "np.xacc"):
        shutil.copy(src / name, tmp_path / name)
    return tmp_path / "model.xacc", tmp_path / "fn.xacc"


LOAD = """
    import torch, xacc, models
    from xacc.jit import counters
    model = models.make_model()
    run = xacc.load("model.xacc", model)
    x, = models.inputs()
    with torch.no_grad():
        want = model(x)
    got = run(x)
    got2 = run(x)
    print("model equal", torch.allclose(got, want, rtol=1e-5, atol=1e-5), torch.equal(got, got2))
    f = xacc.load("fn.xacc")
    a, b = torch.randn(64, 8), torch.randn(64, 8)
    print("fn equal", torch.allclose(f(a, b), models.pointwise(a, b), rtol=1e-5, atol=1e-5))
    g = xacc.load("brk.xacc", models.with_break)
    print("break equal", torch.allclose(g(a), models.with_break(a), rtol=1e-5, atol=1e-5))
    import numpy as np
    h = xacc.load("np.xacc")
    x, w = torch.randn(4, 8), np.random.rand(3, 8).astype(np.float32)
    print("numpy equal", torch.allclose(h(x, w), models.with_numpy(x, w), rtol=1e-5, atol=1e-5))
    c = counters()
    print("frames", c["frames"], "graphs", c["graphs"], "hits", c["hook_hits"])
"""


@pytest.mark.parametrize("device", DEVICES)
def test_round_trip_in_a_fresh_process(tmp_path, device, artifacts):
    build(tmp_path, device, artifacts)
    p = run_py(LOAD, tmp_path, log="capture,aot,mlir,backend")
    out, err = p.stdout, p.stderr
    assert "model equal True True" in out, out + err
    assert "fn equal True" in out, out + err
    assert "break equal True" in out, out + err
    assert "numpy equal True" in out, out + err
    # No capture: the translator never ran, no graph was prepared by the capture callback.
    assert "frames 0 graphs 0" in out, out + err
    assert "[xacc:capture]" not in err, err
    assert "[xacc:backend]" not in err, err
    # model, fn, the split frame, its resume function, the NumPy function
    assert err.count("stored entries installed") == 5, err
    if device == "xpu0":
        assert "compiled kernel" not in err, err  # no MLIR compile
        assert "kernel loaded from disk cache" in err, err


def test_guard_mismatch_falls_back_to_the_jit(tmp_path, artifacts):
    build(tmp_path, "cpu", artifacts)
    p = run_py("""
        import torch, xacc, models
        from xacc.jit import counters
        f = xacc.load("fn.xacc")
        a, b = torch.randn(3, 5), torch.randn(3, 5)       # other shapes than the artifact's
        print("equal", torch.allclose(f(a, b), models.pointwise(a, b), rtol=1e-5, atol=1e-5))
        a, b = a.double(), b.double()                    # and another dtype
        print("equal", torch.allclose(f(a, b), models.pointwise(a, b)))
        print("frames", counters()["frames"])
    """, tmp_path, log="aot,capture")
    assert p.stdout.count("equal True") == 2, p.stdout + p.stderr
    assert "guard mismatch" in p.stderr and "compiling with the JIT" in p.stderr, p.stderr
    assert "size" in p.stderr  # the failing guard is named
    assert "frames 2" in p.stdout, p.stdout + p.stderr  # the JIT compiled both calls
    assert "[xacc:capture] captured pointwise" in p.stderr, p.stderr


def _load_error(tmp_path, name, target=""):
    p = run_py(f"""
        import torch, xacc, models
        try:
            xacc.load({name!r}{target})
        except xacc.ArtifactError as e:
            print("refused:", e)
    """, tmp_path)
    assert "refused:" in p.stdout, p.stdout + p.stderr
    return p.stdout


def _rewrite_header(path, **changes):
    """A well-formed artifact (hash recomputed) whose header fields differ."""
    sys.path.insert(0, str(ROOT))
    from xacc._src.aot import artifact

    data = path.read_bytes()
    (hlen,) = struct.unpack_from("<I", data, 8)
    meta = json.loads(data[12:12 + hlen])
    payload = data[12 + hlen:]
    meta.update(changes)
    meta["sha256"] = artifact._digest(meta, payload)
    header = json.dumps(meta, sort_keys=True).encode()
    path.write_bytes(data[:8] + struct.pack("<I", len(header)) + header + payload)


@pytest.mark.parametrize("field,value,word", [("torch", "1.0.0", "torch 1.0.0"), ("xacc", "0.0.1", "xacc 0.0.1"),
                                              ("python", "3.10.2", "Python 3.10.2")])
def test_other_version_refused(tmp_path, artifacts, field, value, word):
    build(tmp_path, "cpu", artifacts)
    _rewrite_header(tmp_path / "fn.xacc", **{field: value})
    out = _load_error(tmp_path, "fn.xacc")
    assert word in out and "rebuild the artifact" in out, out


def test_tampered_byte_refused(tmp_path, artifacts):
    _, fn = build(tmp_path, "cpu", artifacts)
    data = bytearray(fn.read_bytes())
    for pos in (len(data) // 2, len(data) - 3, 30):  # payload middle, payload end, header
        bad = bytearray(data)
        bad[pos] ^= 0x01
        fn.write_bytes(bytes(bad))
        out = _load_error(tmp_path, "fn.xacc")
        assert "fn.xacc" in out and ("hash mismatch" in out or "corrupted header" in out), out


def test_truncated_file_refused(tmp_path, artifacts):
    _, fn = build(tmp_path, "cpu", artifacts)
    data = fn.read_bytes()
    for n in (len(data) - 1, len(data) // 2, 10, 0):
        fn.write_bytes(data[:n])
        out = _load_error(tmp_path, "fn.xacc")
        assert "truncated" in out or "not an xacc artifact" in out, out
    fn.write_bytes(b"hello, not an artifact at all")
    assert "bad magic" in _load_error(tmp_path, "fn.xacc")


def test_module_artifact_needs_its_module(tmp_path, artifacts):
    build(tmp_path, "cpu", artifacts)
    assert "pass the module instance" in _load_error(tmp_path, "model.xacc")
    assert "was built for a models.SmallMLP" in _load_error(tmp_path, "model.xacc", ", torch.nn.Linear(2, 2)")


SCRIPT = """
import torch
import models

def main():
    model = models.make_model()
    x, = models.inputs()
    with torch.no_grad():
        for _ in range(3):
            y = model(x)
        z = models.pointwise(y, y)
    print("checksum %.6f" % float(z.sum()))

main()
"""


def _checksum(stdout: str) -> float:
    return float(stdout.split("checksum", 1)[1].split()[0])


@pytest.mark.parametrize("device", DEVICES)
def test_xjit_cache_second_run_does_not_compile(tmp_path, device, artifacts):
    # --hot-calls 1: translate every frame at its first call (the cache is what
    # this checks, not the hot-frame policy of Note [Hot frames]).
    (tmp_path / "script.py").write_text(SCRIPT)
    cmd = f"""
        import sys
        from xjit.__main__ import main
        sys.exit(main(["--cache", "cache", "--hot-calls", "1", "--device", "{device}", "script.py"]))
    """
    eager = run_py("exec(open('script.py').read())", tmp_path).stdout
    first = run_py(cmd, tmp_path, log="capture,aot,mlir")
    second = run_py(cmd, tmp_path, log="capture,aot,mlir")
    # xpu0's fused kernels round differently from eager's op-by-op float32 (a few
    # ulp): the checksums agree to float32 precision, and both runs print the same.
    assert first.stdout == second.stdout, (first.stdout, second.stdout)
    assert _checksum(first.stdout) == pytest.approx(_checksum(eager), rel=1e-6), (eager, first.stdout)
    assert "[xacc:capture] captured" in first.stderr
    assert "entry" in first.stderr and "recorded" in first.stderr
    err = second.stderr
    assert "[xacc:capture]" not in err, err
    assert "frames captured: 0" in err and "graphs: 0" in err, err
    # forward and pointwise; SmallMLP.__init__ is stored as "runs in Python", and
    # so may be library frames that ran in the first run (namedtuple's generated
    # `<lambda>` in `<string>`: seen on a fresh clone), each "nothing to capture".
    m = re.search(r"stored entries: 2 installed for (\d+) frames, 0 guard mismatches", err)
    assert m and int(m.group(1)) >= 3, err
    assert "SmallMLP.__init__" in err and "runs in Python" in err, err
    extra = re.findall(r"\[xacc:aot\] (.*): runs in Python \(stored: (.*)\)", err)
    assert all(what == "nothing to capture" for name, what in extra if "SmallMLP.__init__" not in name), extra
    if device == "xpu0":
        assert "compiled kernel" in first.stderr
        assert "compiled kernel" not in err and "kernel loaded from disk cache" in err, err


def test_xjit_cache_ignores_a_corrupted_file(tmp_path, artifacts):
    (tmp_path / "script.py").write_text(SCRIPT)
    cmd = """
        import sys
        from xjit.__main__ import main
        sys.exit(main(["--cache", "cache", "--hot-calls", "1", "script.py"]))
    """
    first = run_py(cmd, tmp_path)
    sys.path.insert(0, str(ROOT))
    from xacc._src.aot import artifact

    files = sorted((tmp_path / "cache" / "frames").glob("*.xacc"))
    graphs = [f for f in files if b'"kind": "graph"' in artifact.read(str(f)).files["manifest.json"]]
    assert len(graphs) == 2, files
    graphs[0].write_bytes(graphs[0].read_bytes()[:-5])
    second = run_py(cmd, tmp_path, log="aot,capture")
    assert second.stdout == first.stdout
    assert "cache file ignored" in second.stderr and "truncated" in second.stderr, second.stderr
    assert "stored entries: 1 installed for 2 frames" in second.stderr, second.stderr
    assert "[xacc:capture] captured" in second.stderr  # the frame whose file was bad compiles again
    third = run_py(cmd, tmp_path, log="aot,capture")  # ... and its file was written again
    assert "stored entries: 2 installed for 3 frames" in third.stderr, third.stderr


def test_dim_guards_survive_the_artifact(tmp_path):
    """A dynamic entry's dim-equality guard is stored and checked after loading:
    sizes that break the relation are a guard mismatch (the JIT then raises
    eager's error), never a run of the stored graph."""
    run_py("""
        import torch, xacc, models
        xacc.aot(models.same_rows, (torch.randn(4, 6), torch.randn(4, 3)), "rows.xacc", dynamic=True)
    """, tmp_path)
    p = run_py("""
        import torch, xacc, models
        from xacc._C import capture as C
        f = xacc.load("rows.xacc")
        try:  # sizes that break the relation: first call, so the stored entries are checked
            f(torch.randn(6, 4), torch.randn(4, 3))
        except RuntimeError as e:
            print("raises", "must match the size" in str(e))
        print("guards", [g for e in C.entries(models.same_rows.__code__) for g in e["guards"] if "size(0)" in g])
        x, y = torch.randn(5, 6), torch.randn(5, 3)  # other sizes, relation kept
        print("equal", torch.equal(f(x, y), models.same_rows(x, y)))
    """, tmp_path, log="aot")
    out, err = p.stdout, p.stderr
    assert "equal True" in out, out + err
    assert "L['x'].size(0) == L['y'].size(0) (both are s0)" in out, out + err
    assert "raises True" in out, out + err
    assert "guard mismatch" in err and "L['x'].size(0) == L['y'].size(0)" in err, err


def test_environ_key_guards_survive_the_artifact(tmp_path):
    """An entry that read os.environ stores guards on the keys it read (the value
    of one, the absence of another), checked after loading: another variable set
    keeps the stored entry; setting the absent key is a guard mismatch."""
    os.environ.pop("XACC_AOT_TEST_SHIFT", None)
    run_py("""
        import os, torch, xacc, models
        os.environ["XACC_AOT_TEST_SCALE"] = "2"
        xacc.aot(models.env_scaled, (torch.randn(4),), "env.xacc")
    """, tmp_path)
    p = run_py("""
        import os, torch, xacc, models
        from xacc._C import capture as C
        from xacc.jit import counters
        os.environ["XACC_AOT_TEST_SCALE"] = "2"
        os.environ["XACC_AOT_TEST_UNRELATED"] = "1"   # not in the artifact's environment
        f = xacc.load("env.xacc")
        x = torch.randn(4)
        print("equal", torch.equal(f(x), models.env_scaled(x)), "frames", counters()["frames"])
        print("guards", [g for e in C.entries(models.env_scaled.__code__) for g in e["guards"] if "_data" in g])
        os.environ["XACC_AOT_TEST_SHIFT"] = "1"       # read with .get: absent when stored
        print("equal", torch.equal(f(x), models.env_scaled(x)), "frames", counters()["frames"])
    """, tmp_path, log="aot,recompiles")
    out, err = p.stdout, p.stderr
    assert "equal True frames 0" in out, out + err  # the stored entry ran: no capture
    assert "equal True frames 1" in out, out + err  # the JIT compiled the new environment
    assert "G['os'].environ._data: has no key b'XACC_AOT_TEST_SHIFT'" in out, out + err
    assert "G['os'].environ._data[b'XACC_AOT_TEST_SCALE']: == b'2'" in out, out + err
    assert "recompiling env_scaled" in err and "has no key b'XACC_AOT_TEST_SHIFT'" in err, err


def test_weakref_call_source_survives_the_artifact(tmp_path):
    """A guard source `ref()` (Access::Deref) is stored and fetched again after
    loading: the fresh module's weakref gives its own parameter (the stored entry
    runs, no capture); a replaced parameter is a guard mismatch (eager's branch)."""
    run_py("""
        import torch, xacc, models
        m = models.WeightRefs().eval()
        with torch.no_grad():
            xacc.aot(m, (torch.randn(8),), "wr.xacc")
    """, tmp_path)
    p = run_py("""
        import torch, xacc, models
        from xacc.jit import counters
        m = models.WeightRefs().eval()
        run = xacc.load("wr.xacc", m)
        x = torch.randn(8)
        with torch.no_grad():
            print("equal", torch.equal(run(x), x * m.w))
            print("frames", counters()["frames"])
            old = m.w
            m.w = torch.nn.Parameter(torch.randn(8))
            print("replaced", torch.equal(run(x), x - 1))
    """, tmp_path, log="aot")
    out, err = p.stdout, p.stderr
    assert "equal True" in out and "frames 0" in out, out + err
    assert "replaced True" in out, out + err
    assert "1 stored entries installed" in err and "no capture" in err, err


def test_type_of_source_survives_the_artifact(tmp_path):
    """A guard source `type(x).__mro__[__len__]` (Access::TypeOf, ClassAttr) is stored and fetched
    again after loading: the stored entry runs (no capture); a __len__ replaced
    on the class is a guard mismatch (the new __len__'s result)."""
    run_py("""
        import torch, xacc, models
        xacc.aot(models.counted_scale, (torch.randn(4), models.Counted()), "len.xacc")
    """, tmp_path)
    p = run_py("""
        import torch, xacc, models
        from xacc._C import capture as C
        from xacc.jit import counters
        f = xacc.load("len.xacc")
        x, c = torch.randn(4), models.Counted()
        print("equal", torch.equal(f(x, c), x * 3), "frames", counters()["frames"])
        print("guards", [g for e in C.entries(models.counted_scale.__code__) for g in e["guards"] if "__len__" in g])
        models.Counted.__len__ = lambda self: 5
        print("replaced", torch.equal(f(x, c), x * 5))
    """, tmp_path, log="aot")
    out, err = p.stdout, p.stderr
    assert "equal True frames 0" in out, out + err
    assert "type(L['c']).__mro__[__len__]" in out, out + err
    assert "replaced True" in out, out + err


CUSTOM_LIB = '''
import os
import torch

if os.environ.get("REGISTER_OP") == "1":
    @torch.library.custom_op("xacc_aot_test::plus_one", mutates_args=())
    def plus_one(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    plus_one.register_fake(lambda x: torch.empty_like(x))


def fn(x):
    return torch.ops.xacc_aot_test.plus_one(x * 2) - 3
'''


@pytest.mark.parametrize("device", DEVICES)
def test_custom_op_node_needs_its_library_when_loaded(tmp_path, device):
    """A stored graph with a custom-op node (Note [Custom operators as nodes]):
    loaded where the library registered the op, it runs with no capture; where
    the op is not registered, the entry is not used (logged) and the call does
    what eager does (here: torch.ops has no such op)."""
    (tmp_path / "customlib.py").write_text(CUSTOM_LIB)
    os.environ["REGISTER_OP"] = "1"
    try:
        p = run_py(f"""
            import torch, xacc, customlib
            xacc.aot(customlib.fn, (torch.randn(4, 8),), "op.xacc", device="{device}")
            from xacc._src.capture import convert
            print("ops", sorted(k for e in convert.EVENTS for k in e.op_counts))
        """, tmp_path)
        assert "aten.xacc_aot_test.plus_one.default" in p.stdout, p.stdout + p.stderr
        load = """
            import torch, xacc, customlib
            from xacc.jit import counters
            f = xacc.load("op.xacc")
            x = torch.randn(4, 8)
            try:
                want = repr(customlib.fn(x))
            except Exception as e:
                want = type(e).__name__ + ": " + str(e)
            try:
                got = repr(f(x))
            except Exception as e:
                got = type(e).__name__ + ": " + str(e)
            print("same", got == want, "frames", counters()["frames"], want.splitlines()[0])
        """
        p = run_py(load, tmp_path, log="aot")
        assert "same True frames 0 tensor(" in p.stdout, p.stdout + p.stderr
        assert "no capture" in p.stderr, p.stderr
        os.environ["REGISTER_OP"] = "0"
        p = run_py(load, tmp_path, log="aot")
        assert "same True" in p.stdout and "AttributeError" in p.stdout, p.stdout + p.stderr
        assert "not used" in p.stderr and "plus_one" in p.stderr, p.stderr
        # The stored graph itself names an operator this process lacks: it is refused.
        p = run_py("""
            from xacc._C import capture as C
            from xacc._src.aot import artifact, store
            recs = [r for v in store.unpack(artifact.read("op.xacc"), "op.xacc").values() for r in v]
            rec = next(r for r in recs if r.kind == "graph")
            try:
                C.compile_gir(rec.gir, "", "<stored>", rec.device, False)
                print("compiled")
            except Exception as e:
                print("refused", type(e).__name__, e)
        """, tmp_path)
        assert "refused" in p.stdout and "no operator 'xacc_aot_test::plus_one'" in p.stdout, p.stdout + p.stderr
    finally:
        os.environ.pop("REGISTER_OP", None)
