"""Legacy typed constructors (Note [Legacy tensor constructors] in
TranslateBuiltins.cpp): `torch.IntTensor(data)`, `torch.FloatTensor(data)`, ...
on one list or tuple of Python numbers are `torch.tensor(data, dtype=cls.dtype,
device="cpu")`, recorded without a break; the values are known, so
`torch.IntTensor([n])[0]` used as a slice bound (transformers' VITS WaveNet)
is eager's number. Sizes, tensors and keyword arguments keep their break."""

import pytest
import torch
import torch.nn as nn
from harness import check, compare_call

from xacc.jit import counters, jit

LEGACY = ["IntTensor", "LongTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
          "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor"]


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_constructor_on_numbers_is_torch_tensor(name):
    cls = getattr(torch, name)

    def f(x):
        a = cls([3, 1.7, 0.2, True])
        b = cls([[1, 2], (3, 4)])
        c = cls((5,))
        e = cls([])
        return x + 1, a, b, c, e

    check(f, lambda i: (torch.randn(4),), graphs=1, breaks=0)


def test_legacy_constructor_ignores_the_default_device_and_dtype():
    def f(x):
        return x * 2, torch.IntTensor([2, 3]), torch.FloatTensor([0.1])

    torch.set_default_dtype(torch.float64)
    try:
        check(f, lambda i: (torch.randn(3),), graphs=1, breaks=0)
    finally:
        torch.set_default_dtype(torch.float32)


class WaveNetLike(nn.Module):
    """transformers' VitsWaveNet: the channel count kept in an IntTensor,
    its element used as a slice bound in a loop over layers."""

    def __init__(self, hidden: int = 4, layers: int = 3) -> None:
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.convs = nn.ModuleList(nn.Conv1d(hidden, 2 * hidden, 3, padding=1) for _ in range(layers))

    @staticmethod
    def gate(a, b, n):
        act = a + b
        return torch.tanh(act[:, :n, :]) * torch.sigmoid(act[:, n:, :])

    def forward(self, x):
        n = torch.IntTensor([self.hidden])
        out = torch.zeros_like(x)
        for i in range(self.layers):
            h = self.convs[i](x)
            out = out + self.gate(h, torch.zeros_like(h), n[0])
        return out


def test_int_tensor_element_as_slice_bound_does_not_break():
    m = WaveNetLike()
    with torch.no_grad():
        check(m, lambda i: (torch.randn(2, 4, 8),), graphs=1, breaks=0)


def test_int_tensor_of_a_number_is_a_size_and_breaks():
    # IntTensor(3) is an uninitialized tensor of size 3; IntTensor(torch.Size)
    # too: neither is data, so both stay in Python (values not compared).
    def f(x, k):
        return x + 1, torch.IntTensor(k).shape, torch.IntTensor(x.shape).shape

    jf = jit(f)
    out = jf(torch.randn(2, 3), 3)
    assert out[1] == torch.Size([3]) and out[2] == torch.Size([2, 3])
    assert counters()["breaks"] >= 1


def test_int_tensor_from_a_tensor_keeps_eager_semantics():
    def f(x):
        return torch.FloatTensor(x.tolist()) + x

    jf = jit(f)
    for _ in range(2):
        compare_call(f, jf, (torch.randn(3),))
