"""Every benchmark runs to its end (smallest settings, real processes).

Benchmarks are not run by `make test`, so one broke unseen for three sessions
(`make run`'s demo.py after run_once gained a field; benchmarks/pgo after
xacc.jit stopped re-exporting private names). This only checks that each one
runs and prints its final report line. It judges no timing: the exit status of
a benchmark whose targets are timing criteria (amp, aot, pgo) is theirs to
report, so a crash is told apart from a missed target by the report line and by
the absence of a Python traceback. capture and models have their own tests."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
B = "benchmarks"

# name -> (arguments after the interpreter, a line the finished report prints, exit statuses
# that are the benchmark's verdict rather than a failure)
CASES = {
    "xjit_script": ([f"{B}/xjit_script/run.py", "--quick", "--reps", "1", "--only", "mlp", "--devices", "cpu"],
                    "row(s) miss their target", {0, 1}),
    # A long script: its floor row (imports and set-up only) and the ratio beyond it.
    "xjit_script_long": ([f"{B}/xjit_script/run.py", "--quick", "--reps", "1", "--only", "cnn_train",
                          "--devices", "cpu"], "beyond the floor", {0, 1}),
    "attention": ([f"{B}/backend/attention.py", "--quick", "--no-compile", "--decomposed"], "bool mask:", {0}),
    "amp": ([f"{B}/amp/run.py", "--repeat", "1", "--models", "mlp"], "CRITERION", {0, 1}),
    "aot": ([f"{B}/aot/run.py", "--models", "mlp", "--devices", "cpu"], "criterion (warm start", {0, 1}),
    "camel": ([f"{B}/camel/run.py", "--repeat", "1", "--only", "fib"], "cpython/camel", {0}),
    "ir": ([f"{B}/ir/run.py", "--sizes", "100", "--repeat", "1"], "target: build+verify+dce+cse", {0}),
    "pgo": ([f"{B}/pgo/run.py", "--reps", "1", "--warm-runs", "1", "--devices", "cpu", "--workloads", "mlp"],
            "criterion: PGO never slower", {0, 1}),
}


@pytest.mark.parametrize("name", CASES)
def test_benchmark_runs_to_its_report(name):
    args, marker, verdicts = CASES[name]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert "Traceback (most recent call last)" not in out, out[-4000:]
    assert p.returncode in verdicts, f"exit status {p.returncode}\n{out[-4000:]}"
    assert marker in out, out[-4000:]


def test_xjit_script_compiled_runner_compiles_the_first_module_called(tmp_path):
    # benchmarks/xjit_script/compiled.py (run.py --compiled): the script's
    # first called module is compiled in place, later calls run the compiled
    # module, the script's own output is unchanged, and modules called inside
    # it or later are not compiled on their own.
    script = tmp_path / "s.py"
    script.write_text(
        "import sys, torch\n"
        "inner = torch.nn.Linear(3, 3)\n"
        "model = torch.nn.Sequential(inner, torch.nn.ReLU())\n"
        "other = torch.nn.Linear(3, 1)\n"
        "x = torch.ones(2, 3)\n"
        "y = model(x); y2 = model(x)\n"
        "print(sys.argv[1:], torch.equal(y, y2), tuple(y.shape), tuple(other(y).shape))\n"
        "print(model._compiled_call_impl is not None, inner._compiled_call_impl is None,\n"
        "      other._compiled_call_impl is None, torch.nn.Module.__call__.__name__ == \"_wrapped_call_impl\")\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, f"{B}/xjit_script/compiled.py", "--backend", "eager", str(script), "--quick"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    assert p.stdout.splitlines() == ["['--quick'] True (2, 3) (2, 1)", "True True True True"], p.stdout
