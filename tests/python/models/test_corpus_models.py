"""A fast subset of the model corpus (benchmarks/models/zoo.py) under xacc on
cpu: outputs match eager on three batch sizes, and the first call's graph
breaks stay within the count recorded here (a regression shows as more
breaks). The full corpus, with torch.compile and xpu0, is
benchmarks/models/corpus.py."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks" / "models"))

import xacc  # noqa: E402
from xacc._src.capture import convert  # noqa: E402
from xacc.jit import counters, reset  # noqa: E402
from zoo import build, flatten_output  # noqa: E402

# model -> graph breaks of the first call (batch 2) measured when this was written (bert and
# vit: 0 since attribute writes are replayed and os.environ reads are constants).
MAX_BREAKS = {
    "mlp": 0,
    "lenet": 0,
    "encoder_block": 0,
    "small_resnet": 1,
    "bert": 0,
    "vit": 0,
}


@pytest.fixture(autouse=True)
def fresh_cache():
    reset()
    yield
    reset()


@pytest.mark.parametrize("name", sorted(MAX_BREAKS))
def test_model_matches_eager(name):
    model, make = build(name)
    jm = xacc.jit(model)
    with torch.no_grad():
        for i, batch in enumerate((2, 3, 4)):
            args, kwargs = make(batch)
            ref = flatten_output(model(*args, **kwargs))
            got = flatten_output(jm(*args, **kwargs))
            assert len(ref) == len(got) and ref, name
            for r, g in zip(ref, got):
                torch.testing.assert_close(g, r, rtol=1e-3, atol=1e-4)
            if i == 0:
                breaks = counters()["breaks"]
                reasons = [str(b) for ev in convert.EVENTS for b in ev.breaks]
                assert counters()["graphs"] >= 1, name
                assert breaks <= MAX_BREAKS[name], f"{name}: {breaks} breaks: {reasons}"
    assert counters()["internal_errors"] == 0
