"""Issue 25, criterion 1: `python -m xjit --device cpu` runs a DDP training
script written for CUDA and NCCL (scripts/ddp_cuda.py: 3 steps, then 2 steps of
gradient accumulation under no_sync) on 2 CPU processes over gloo, launched by
torch.multiprocessing.spawn and by torchrun (under xjit's own `-m`): both ranks
capture graphs, the device erasure is reported, and every rank ends with the
parameters of plain python running the CPU version (scripts/ddp_cpu.py) within
1e-5. Real processes, real gloo, a time bound on
every launch (dist_proc.py)."""

from __future__ import annotations

import pytest

from dist_proc import SCRIPTS, graphs, max_param_diff, rank_summaries, run, torchrun


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> str:
    out = str(tmp_path_factory.mktemp("ddp_ref") / "params")
    run([str(SCRIPTS / "ddp_cpu.py"), out])
    return out


def _check(stderr: str, out: str, reference: str) -> None:
    summaries = rank_summaries(stderr)
    assert sorted(summaries) == [0, 1], stderr[-4000:]
    for r, s in summaries.items():
        assert graphs(s) > 0, s
        assert "internal errors (fell back to Python): 0" in s, s
        assert "process group backend 'nccl' -> 'gloo'" in s, s
        assert "DistributedDataParallel(device_ids=..., output_device=...) dropped" in s, s
        assert max_param_diff(f"{reference}.rank{r}", f"{out}.rank{r}") <= 1e-5


def test_spawn_launcher(tmp_path, reference):
    out = str(tmp_path / "params")
    p = run(["-m", "xjit", "--device", "cpu", str(SCRIPTS / "ddp_cuda.py"), out])
    _check(p.stderr, out, reference)


def test_torchrun_under_xjit_module(tmp_path, reference):
    out = str(tmp_path / "params")
    p = run(["-m", "xjit", "--device", "cpu", *torchrun("ddp_cuda.py", out)])
    _check(p.stderr, out, reference)
