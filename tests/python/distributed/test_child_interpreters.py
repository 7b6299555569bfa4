"""Issue 25: `python -m xjit` reaches the interpreters its program starts
(Note [xjit in child interpreters], xjit/child.py): multiprocessing workers
started by spawn, forkserver and fork translate their hot functions and print a
summary of their own, and the program prints what plain python prints. The
XACC_XJIT variable is validated like every other (test_config.py)."""

from __future__ import annotations

import pytest

from dist_proc import ROOT, SCRIPTS, graphs, run, summaries


@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_multiprocessing_workers_run_under_xjit(method):
    script = str(SCRIPTS / "mp_workers.py")
    plain = run([script, method])
    got = run(["-m", "xjit", "--device", "cpu", script, method])
    assert got.stdout == plain.stdout, got.stderr[-3000:]
    workers = [b for label, b in summaries(got.stderr) if label.startswith("worker pid")]
    assert len(workers) == 2, got.stderr[-4000:]  # helper processes (resource tracker) ran no model code
    for b in workers:
        assert graphs(b) >= 1, b
        assert "internal errors (fell back to Python): 0" in b, b


def test_bad_xacc_xjit_is_reported_and_the_worker_still_runs():
    """A malformed XACC_XJIT in a child: the child says why it runs without
    capture and runs as plain python (same output)."""
    script = str(SCRIPTS / "mp_workers.py")
    plain = run([script, "spawn"])
    got = run(["-c", "import os, runpy, sys; os.environ['XACC_XJIT'] = \"--device 'cpu\"; "
                     "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
               script, "spawn"],
              env={"PYTHONPATH": f"{ROOT / 'xjit' / '_boot'}:{ROOT}"})
    assert got.stdout == plain.stdout
    # both workers (and multiprocessing's resource tracker) say so
    assert got.stderr.count("runs without capture: ConfigError") >= 2, got.stderr[-3000:]
