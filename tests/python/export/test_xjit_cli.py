"""python -m xjit --explain / --compare / --export on one script (one process):
the explain report has frames, graphs and ops, breaks with code, reason, source
line and hint, recompiles with the failing guard, and times; compare replays
every graph; XACC_DUMP does what --export does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SCRIPT = textwrap.dedent("""
    import torch

    def scale(x):
        return torch.relu(x) * 2 + 1

    def noisy(x):
        y = x.cos()
        print("noisy sees", tuple(y.shape))  # the break
        return y.sum()

    if __name__ == "__main__":
        # xjit translates a frame at its second call (Note [Hot frames]): scale is
        # translated at its second call and recompiled for the second shape; noisy
        # is translated (and breaks) at its second call.
        for shape in [(4,), (4,), (4,), (2, 3)]:
            scale(torch.randn(*shape))
        noisy(torch.randn(5))
        noisy(torch.randn(5))
""")


def _xjit(tmp_path, *flags, env_extra=None):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), **(env_extra or {}))
    r = subprocess.run([sys.executable, "-m", "xjit", *flags, str(script)], capture_output=True, text=True,
                       env=env, timeout=600, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("xjit")
    r = _xjit(d, "--explain", "--compare", "--export", str(d / "out"))
    return d, r.stderr


def test_explain_report(run):
    _, err = run
    assert "== xjit explain ==" in err
    report = err.split("== xjit explain ==", 1)[1]
    assert "time: capturing" in report and "compiling" in report and "running graphs" in report
    assert "frame scale (" in report and "frame noisy (" in report
    assert "ops: aten.relu.default x1" in report
    # the break: code, reason, the source line itself, hint
    assert "break GB003 builtin print() has side effects on stdout" in report
    assert 'print("noisy sees", tuple(y.shape))  # the break' in report
    assert "hint: remove the print" in report
    # the recompile with the guard that failed
    assert "recompile: guard failed:" in report and "L['x']" in report.split("recompile: guard failed:", 1)[1]


def test_compare_report(run):
    _, err = run
    part = err.split("== xjit compare:", 1)[1]
    assert "reference interpreter vs aten" in part
    assert "diverging graphs: 0" in part
    assert "scale#0: ok" in part and "scale#1: ok" in part


def test_export_written(run):
    d, err = run
    m = json.load(open(d / "out" / "manifest.json"))
    names = [f["function"] for f in m["frames"]]
    assert names.count("scale") == 2 and "noisy" in names
    assert m["frames"][1]["recompile_reasons"]
    assert os.path.isfile(d / "out" / "index.html")
    assert "export: " in err


def test_compare_finds_fault(tmp_path):
    r = _xjit(tmp_path, "--compare", env_extra={"XACC_TEST_FAULT_OP": "aten.relu.default"})
    part = r.stderr.split("== xjit compare:", 1)[1]
    assert "diverging graphs: 2" in part  # both cache entries of scale
    assert "first divergent node 0 (aten.relu.default)" in part


def test_xacc_dump_env(tmp_path):
    _xjit(tmp_path, env_extra={"XACC_DUMP": str(tmp_path / "dump")})
    assert os.path.isfile(tmp_path / "dump" / "index.html")
