"""Models and functions the AOT tests build artifacts of (importable by name in
every process: artifacts resolve classes and functions by module and name)."""

import math
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallMLP(nn.Module):
    def __init__(self, d_in: int = 16, d_hidden: int = 32, n_out: int = 4) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.norm = nn.LayerNorm(d_hidden)
        self.fc2 = nn.Linear(d_hidden, n_out)
        self.scale = 0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.norm(self.fc1(x)))
        return self.fc2(h * self.scale) + math.sqrt(2.0)


def pointwise(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x * 2.0 + y).exp() - torch.sigmoid(y)


def make_model() -> SmallMLP:
    torch.manual_seed(0)
    return SmallMLP().eval()


def inputs(rows: int = 8) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(1)
    return (torch.randn(rows, 16, generator=g),)


def with_break(x: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x) * 2.0
    s = y.sum().item()  # a value read back to Python: a graph break
    return torch.sigmoid(y) * s


def with_numpy(x: torch.Tensor, w: np.ndarray) -> torch.Tensor:
    a = x.numpy()
    h = np.tanh(a @ w.T) + w.mean(axis=1)
    return torch.relu(torch.from_numpy(h)) * 2


def with_draw(x: torch.Tensor) -> torch.Tensor:
    p = np.random.uniform(0, 1)  # drawn at run time, after the graph (never read here)
    q = random.random()
    return torch.relu(x) * 2


def same_rows(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # Compiled dynamic, x.size(0) and y.size(0) share one symbol: the entry holds
    # a dim-equality guard that must survive the artifact.
    return torch.zeros(y.size(0), 2) + x[:, :2]


def env_scaled(x: torch.Tensor) -> torch.Tensor:
    # Reads one variable that is set and one that is not: the entry guards those
    # two keys of os.environ (a value and an absence), which must survive the artifact.
    scale = float(os.environ["XACC_AOT_TEST_SCALE"])
    if os.environ.get("XACC_AOT_TEST_SHIFT") is not None:
        return x * scale + 1
    return x * scale


class WeightRefs(nn.Module):
    """Reads its weight through a weakref as torch.nn.RNNBase does (Note [Weakref
    calls]): the stored guards fetch `ref()` again in the loading process."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.w = nn.Parameter(torch.randn(8))
        import weakref
        self._refs = [weakref.ref(self.w)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._refs[0]() is not self.w:
            return x - 1
        return x * self.w


class Counted:
    """A container whose len() comes from a Python __len__: the entry guards that
    function through `type(L['c']).__mro__[__len__]` (Access::TypeOf and ClassAttr,
    Note [Guard reads of the type]), a source the loading process must fetch again."""

    def __len__(self) -> int:
        return 3


def counted_scale(x: torch.Tensor, c: Counted) -> torch.Tensor:
    return x * len(c)
