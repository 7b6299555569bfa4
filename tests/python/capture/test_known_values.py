"""Small integer tensors whose value depends on no input data (Note [Known
tensor values] in xacc/_src/capture/known.py): 0-d integer buffers of a module
(EnCodec's `stride`, `kernel_size`, `padding_total`), `torch.tensor(n)`
literals and what torch ops compute from them and from sizes. Python reading
them (`int(t)`, `max(t, u)`, `if t > 0`, `F.pad(x, (t, u))`, a slice bound)
gets eager's number at capture time, guarded by the buffers' values; the
graph does not break. A value computed from tensor data, a bare tensor
argument, a tensor written in place and a value that depends on a dynamic
size keep the old behaviour (a break, or a static compile)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from harness import check, compare_call

from xacc.explain import explain
from xacc.jit import counters, jit


class PadConv(nn.Module):
    """transformers' EncodecConv1d: paddings computed with torch ops from
    0-d int64 buffers and the input length, used as Python numbers."""

    def __init__(self, k: int, s: int, mode: str = "reflect") -> None:
        super().__init__()
        self.conv = nn.Conv1d(2, 2, k, s)
        self.mode = mode
        self.stride = nn.Buffer(torch.tensor(s), persistent=False)
        self.kernel_size = nn.Buffer(torch.tensor(k), persistent=False)
        self.padding_total = nn.Buffer(torch.tensor(k) - torch.tensor(s), persistent=False)

    def extra(self, x):
        length = x.shape[-1]
        n = (length - self.kernel_size + self.padding_total) / self.stride + 1
        n = torch.ceil(n).to(torch.int64) - 1
        ideal = n * self.stride + self.kernel_size - self.padding_total
        return ideal - length

    @staticmethod
    def pad1d(x, paddings, mode):
        length = x.shape[-1]
        left, right = paddings
        max_pad = max(left, right)
        extra = 0
        if length <= max_pad:
            extra = max_pad - length + 1
            x = F.pad(x, (0, extra))
        padded = F.pad(x, paddings, mode)
        end = padded.shape[-1] - extra
        return padded[..., :end]

    def forward(self, x):
        e = self.extra(x)
        right = self.padding_total // 2
        left = self.padding_total - right
        return self.conv(self.pad1d(x, (left, right + e), self.mode))


def _model():
    torch.manual_seed(0)
    return nn.Sequential(PadConv(7, 1), PadConv(3, 2), PadConv(5, 1), PadConv(4, 2), PadConv(9, 3, "constant"))


def test_paddings_from_buffers_and_sizes_stay_in_the_graph():
    m = _model()
    with torch.no_grad():
        check(m, lambda i: (torch.randn(2 + i, 2, 40),), graphs=2, breaks=0, max_recompiles=1)


def test_paddings_at_several_lengths_match_eager():
    # Lengths 5 and 3 take the `length <= max_pad` arm of the reflect padding;
    # each length compiles (the paddings depend on it), none breaks.
    m = _model()
    jm = jit(m)
    with torch.no_grad():
        for length in (40, 5, 3, 40, 17):
            compare_call(m, jm, (torch.randn(2, 2, length),))
    c = counters()
    assert c["breaks"] == 0 and c["internal_errors"] == 0, c


def test_dynamic_length_compiles_static_not_wrong():
    # With a dynamic last dim the paddings depend on a dynamic size: the frame
    # compiles with static shapes (never one padding for every length).
    m = _model()
    jm = jit(m, dynamic=True)
    with torch.no_grad():
        for length in (40, 41, 57, 6, 40):
            compare_call(m, jm, (torch.randn(2, 2, length),))
    assert counters()["breaks"] == 0, counters()


class Crop(nn.Module):
    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = nn.Buffer(torch.tensor(k))

    def forward(self, x):
        return x[..., : int(self.k)] * 2, x.shape[-1] - self.k > 0


def test_buffer_value_is_guarded():
    m = Crop(2)
    jm = jit(m)
    x = torch.randn(3, 5)
    compare_call(m, jm, (x,))
    assert counters()["breaks"] == 0 and counters()["recompiles"] == 0, counters()
    m.k.fill_(4)  # the guard on the buffer's value fails: compiled again
    compare_call(m, jm, (x,))
    assert counters()["recompiles"] == 1, counters()
    compare_call(m, jm, (x,))
    assert counters()["recompiles"] == 1 and counters()["breaks"] == 0, counters()


class MinMax(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Buffer(torch.tensor(3))
        self.b = nn.Buffer(torch.tensor(5))
        self.c = nn.Buffer(torch.tensor(5))

    def forward(self, x):
        hi = max(self.a, self.b, self.c)  # ties keep the first: self.b
        lo = min(self.b, 4, self.a)
        return (hi is self.b, hi is self.c, lo is self.a, max(self.a, 2) is self.a, min(self.a, 1),
                x[: int(hi)].sum())


def test_min_max_return_the_object_eager_returns():
    m = MinMax()
    check(m, lambda i: (torch.randn(8, 2),), graphs=1, breaks=0)


class Branch(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lim = nn.Buffer(torch.tensor(4))

    def forward(self, x):
        n = x.shape[0] - self.lim
        if n > 0:
            return x[: int(n)] + 1
        return x - 1


def test_branch_on_a_known_value_is_no_break():
    check(Branch(), lambda i: ((torch.randn(6, 2), torch.randn(3, 2), torch.randn(6, 2))[i],), graphs=2,
          breaks=0, max_recompiles=1)


def test_tensor_literal_is_known():
    def f(x):
        t = torch.tensor(3) * 2 - 1
        return x[..., : int(t)], F.pad(x, (t, 0))

    check(f, lambda i: (torch.randn(2, 7),), graphs=1, breaks=0)


class Written(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = nn.Buffer(torch.tensor(2))

    def forward(self, x):
        a = x[: int(self.k)]  # known
        self.k.add_(1)  # written: forgotten, so the next read breaks (as eager, it sees 3, 4, ...)
        return a, x[: int(self.k)]


def test_value_written_in_place_is_forgotten():
    m, ref = Written(), Written()
    jm = jit(m)
    for _ in range(3):
        x = torch.randn(9, 2)
        a, b = jm(x)
        ea, eb = ref(x)
        torch.testing.assert_close(a, ea)
        torch.testing.assert_close(b, eb)
    assert int(m.k) == int(ref.k) == 5
    out = explain(Written())(torch.randn(9, 2))
    assert [b.code for b in out.break_reasons] == ["GB005"], out.break_reasons


def test_value_from_data_still_breaks():
    def f(x):
        n = (x > 0).sum()  # depends on the data
        return x[: int(n)]

    out = explain(f)(torch.randn(6))
    assert "GB005" in [b.code for b in out.break_reasons], out.break_reasons
    check(f, lambda i: (torch.randn(6),), max_recompiles=2)  # the resume function specializes on n


def test_bare_tensor_argument_is_not_specialized():
    # A 0-d tensor passed to the frame changes per call (a step, a length):
    # reading it breaks as before instead of one compile per value.
    def f(x, n):
        return x[: int(n)] * 2

    c = check(f, lambda i: (torch.randn(6, 2), torch.tensor(i + 1)), max_recompiles=2)
    assert c["breaks"] >= 1, c
    assert "GB005" in [b.code for b in explain(f)(torch.randn(6, 2), torch.tensor(2)).break_reasons]
