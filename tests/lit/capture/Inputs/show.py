"""Prints what xacc.explain captures for one of the functions below, for the
FileCheck tests next to this directory: `show.py <name>`."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from xacc.explain import explain


def straight(x, y):
    return torch.relu(x @ y.t()).sum(dim=1)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return F.gelu(self.fc(x))


def with_break(x):
    y = x * 2
    print("side effect")
    return y + 1


def inplace(x):
    x.add_(1)
    return x.sin()


def branch(x):
    if x.sum() > 0:
        return x.cos()
    return x.sin()


# Imported here, not at the top: the tests above check line numbers of this file.
import numpy as np  # noqa: E402


def mixed_numpy(x, w):
    a = x.numpy()
    h = np.tanh(a @ w.T) + w.mean(axis=1)
    y = torch.relu(torch.from_numpy(h))
    return y, y.numpy().sum(axis=1) / 2


CASES = {
    "straight": (straight, lambda: (torch.randn(2, 3), torch.randn(4, 3))),
    "mlp": (MLP(), lambda: (torch.randn(2, 4),)),
    "break": (with_break, lambda: (torch.randn(3),)),
    "inplace": (inplace, lambda: (torch.randn(3),)),
    "branch": (branch, lambda: (torch.ones(3),)),
    "numpy": (mixed_numpy, lambda: (torch.randn(2, 3, dtype=torch.float64), np.ones((4, 3)))),
}

fn, make = CASES[sys.argv[1]]
out = explain(fn)(*make())
print(f"graphs: {out.graph_count} breaks: {out.graph_break_count}")
for b in out.break_reasons:
    print(f"break: {b.code} {b.reason} at {b.filename.rsplit('/', 1)[-1]}:{b.lineno}")
for g in out.graphs:
    print(g)
