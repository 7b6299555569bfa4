"""The program the PGO tests run in child processes (a profile key names this
file, so recording and using happen in separate processes, as in real use).

    python prog.py SCENARIO MODE PROFILE DEVICE   -> prints one JSON line of results
"""

import json
import sys
import warnings

import torch

import xacc
from xacc._src.capture import convert
from xacc.jit import counters


def scale_rows(x, w):
    return torch.relu(x @ w) * 2.0 + x.sum(dim=1, keepdim=True)


def tiny(x):
    return x + 1


def helper(x):
    return torch.tanh(x) * 3


def tiny_calls_helper(x):
    return helper(x) + 1


def pointwise(x, y):
    return torch.sigmoid(x * y + 1.0) * torch.tanh(x - y)


def main() -> None:
    scenario, mode, path, device = sys.argv[1:5]
    cfg = xacc.pgo.Config(path, mode)
    torch.manual_seed(0)
    out = {"equal": True}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if scenario == "batches":
            f = xacc.jit(scale_rows, device=device, pgo=cfg)
            w = torch.randn(8, 8)
            sizes = [int(s) for s in sys.argv[5].split(",")]
            for b in sizes:
                x = torch.randn(b, 8)
                out["equal"] &= torch.allclose(f(x, w), scale_rows(x, w), atol=1e-5)
        elif scenario == "cold":
            f = xacc.jit(tiny_calls_helper, device=device, pgo=cfg)
            g = xacc.jit(tiny, device=device, pgo=cfg)
            x = torch.randn(4)
            out["equal"] &= torch.equal(f(x), tiny_calls_helper(x))
            for _ in range(int(sys.argv[5])):
                out["equal"] &= torch.equal(g(x), tiny(x))
        elif scenario == "regions":
            f = xacc.jit(pointwise, device=device, pgo=cfg)
            x, y = torch.randn(64, 64), torch.randn(64, 64)
            for _ in range(int(sys.argv[5])):
                out["equal"] &= torch.allclose(f(x, y), pointwise(x, y), atol=1e-5)
            from xacc._C import capture as C
            out["plans"] = [e["plan"] for e in C.entries(pointwise.__code__)]
        xacc.pgo.flush()
    out["equal"] = bool(out["equal"])
    out["counters"] = counters()
    out["pgo"] = {ev.function: ev.pgo for ev in convert.EVENTS if ev.pgo}
    out["outcomes"] = {ev.function: ev.outcome for ev in convert.EVENTS}
    out["warnings"] = [str(w.message) for w in caught]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
