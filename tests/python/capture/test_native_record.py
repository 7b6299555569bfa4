"""Torch calls recorded in C++ (Note [Records made in C++] in
csrc/python/native_record.cpp): the graph is the one the Python recorder
(recorder.py) makes, node for node (compared as GIR text with the C++ path
switched off by xacc._C.capture.native_record(False)), values and exceptions
are eager's, and the calls it takes never reach Host.record."""

from __future__ import annotations

import collections

import pytest
import torch

from harness import compare_call

from xacc._C import capture as C
from xacc._src.capture import events
from xacc._src.capture import host as H
from xacc.jit import jit

# Each body is compiled afresh per run (a code object of its own, so no cached
# entry is reused), with the same file name and lines, so locations match too.
CASES = {
    "unary": ("x, y", """
    a = torch.tanh(x) + x.exp() - torch.sigmoid(y) * y.neg()
    b = torch.relu(a) + (-a) + torch.sqrt(torch.relu(y)) + x.rsqrt().abs().log()
    return a, b, x.relu(), torch.neg(y)"""),
    "numbers": ("x, y", """
    return x + 1, 1 + x, x * 2.5, 2 * x, x - 3, x / 4, x + True, True * x, x * -0.0, torch.add(x, 2), x.mul(3.5), \
        y.div(2), x.sub(1)"""),
    "tensors": ("x, y", """
    return x + y, x - y, x * y, x / y, torch.add(x, y), torch.sub(x, y), x.mul(y), torch.div(x, y), y.add(x)"""),
    "compare": ("x, y", """
    return x < y, x <= 0.5, x > 1, x >= y, x == y, x != 0, torch.lt(x, y), x.ge(0), torch.eq(x, 2), x.ne(y)"""),
    "promotion": ("x, y", """
    i = (x * 10).to(torch.int64)
    d = y.to(torch.float64)
    return i / 3, i + 1, i * 2.5, i + x, d * x, i > 2.5, i + True, (x > 0) + 1, (x > 0) * (y > 0)"""),
    "reductions": ("x, y", """
    i = (x * 10).to(torch.int64)
    return x.sum(), torch.sum(y), i.sum(), (x > 1).sum(), x.abs(), torch.abs(i), (-x).abs().sum()"""),
    "matmul": ("x, y", """
    w = y.t().contiguous()
    return x @ w, torch.matmul(x, w), x.matmul(w), torch.tanh(x) @ w + 1, x @ y[0]"""),
    "softmax": ("x, y", """
    return torch.softmax(x, -1), x.softmax(0), torch.softmax(y, dim=1), x.half().softmax(1), \
        (x * 2).softmax(-2) + y"""),
    # Schema binding: dims and keepdim positional or by keyword (keepdim=False is
    # the default, not passed to the dispatch mode), max of a whole tensor.
    "reductions_dim": ("x, y", """
    return x.sum(0), torch.sum(x, 1, True), x.mean(-1), x.mean(0, keepdim=True), torch.mean(y, dim=(0, 1)), \
        x.sum(dim=[1], keepdim=False), y.mean(1, False), x.max(), torch.max(y), (x > 1).sum(1), (x * 10).to(torch.int64).max()"""),
    # Views: results alias their input (a view of its meta), with eager's strides.
    "views": ("x, y", """
    x, y = x * 2, y + 1  # views of inputs leave the frame as code entries: views of results here
    a = x.transpose(0, 1)
    b = torch.transpose(y, 1, 0).contiguous().view(-1)
    c = x.view(2, 6) + y.view((6, 2)).t()
    d = a.contiguous().view(12) * 2
    e = x.contiguous() + torch.t(y).contiguous().t()
    return a, b, c, d, e, x.t().transpose(-1, -2).sum(0)"""),
    # linear of matrices: t(weight), then addmm with a bias, mm without.
    "linear": ("x, y", """
    x, y = x * 2, y + 1
    w = y[:, :3].t()
    return torch.nn.functional.linear(x, y), torch.nn.functional.linear(x, y, y[0]), \
        torch.nn.functional.linear(x.t(), w, bias=x[:, 0]), torch.nn.functional.linear(x, y, None)"""),
    "broadcast": ("x, y", """
    return x + y[0], x[:, :1] * y, x.sum() - y, torch.tanh(x.sum()) + 1"""),
}


def make(name: str, tag: str = ""):
    """A fresh function of CASES[name]; `tag` makes it another function (name
    and file): no history of past sizes is shared (automatic dynamic shapes would make a
    later capture of the same function a dynamic one, which the C++ path leaves
    to the Python one)."""
    params, body = CASES[name]
    src = f"def {name}{tag}({params}):{body}\n"
    ns = {"torch": torch}
    exec(compile(src, f"<native_record:{name}{tag}>", "exec"), ns)  # noqa: S102 - a fresh code object per run
    return ns[name + tag]


@pytest.fixture
def record_calls(monkeypatch):
    counts: collections.Counter = collections.Counter()
    orig = H.Host.record

    def record(self, fn, *a, **k):
        counts[getattr(fn, "__name__", str(fn))] += 1
        return orig(self, fn, *a, **k)

    monkeypatch.setattr(H.Host, "record", record)
    return counts


def capture(name: str, args: tuple, native: bool, tag: str = "") -> tuple[str, object]:
    prev = C.native_record(native)
    try:
        start = len(events.EVENTS)
        fn = make(name, tag)
        out = compare_call(make(name, tag), jit(fn), args)
        graphs = [e.graph for e in list(events.EVENTS)[start:] if e.outcome == "graph"]
    finally:
        C.native_record(prev)
    assert len(graphs) == 1, graphs
    return graphs[0], out


def inputs(dtype=torch.float32, requires_grad: bool = False) -> tuple:
    torch.manual_seed(0)
    x = torch.randn(3, 4, dtype=dtype).abs() + 0.5
    y = torch.randn(3, 4, dtype=dtype).abs() + 0.5
    return x.requires_grad_(requires_grad), y


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_graph_as_the_python_recorder(name, record_calls):
    native, _ = capture(name, inputs(), True)
    native_calls = sum(record_calls.values())
    record_calls.clear()
    python, _ = capture(name, inputs(), False)
    assert native == python
    # The C++ path took calls the Python path recorded through the host.
    assert native_calls < sum(record_calls.values()), (native_calls, dict(record_calls))


def test_plain_calls_never_reach_the_host(record_calls):
    capture("tensors", inputs(), True)
    assert sum(record_calls.values()) == 0, dict(record_calls)
    capture("unary", inputs(), True)
    capture("reductions", inputs(), True)
    assert dict(record_calls) == {"to": 1}, dict(record_calls)  # .to(int64): the Python path
    record_calls.clear()
    capture("matmul", inputs(), True)
    # y[0] (a getitem) and x @ vector (mv) keep the Python path; y.t() and
    # .contiguous() (a view, a copy) are recorded in C++.
    assert dict(record_calls) == {"getitem": 1, "matmul": 1}, dict(record_calls)
    record_calls.clear()
    capture("reductions_dim", inputs(), True)
    assert dict(record_calls) == {"to": 1}, dict(record_calls)
    record_calls.clear()
    capture("views", inputs(), True)
    assert not record_calls, dict(record_calls)
    capture("linear", inputs(), True)
    assert dict(record_calls) == {"getitem": 3}, dict(record_calls)


def test_inputs_that_require_grad_take_the_python_path(record_calls):
    native, out = capture("unary", inputs(requires_grad=True), True)
    python, _ = capture("unary", inputs(requires_grad=True), False)
    assert native == python
    assert out[0].requires_grad and out[0].grad_fn is not None
    record_calls.clear()
    with torch.no_grad():  # grad mode off: nothing records autograd history
        capture("unary", inputs(requires_grad=True), True, tag="_no_grad")
    assert not record_calls, dict(record_calls)


def test_no_grad_region_takes_the_python_path(record_calls):
    def f(x):
        with torch.no_grad():
            y = x * 2
        return y + 1, y.requires_grad

    x = torch.randn(4, requires_grad=True)
    compare_call(f, jit(f), (x,))
    assert record_calls["mul"] == 1  # inside the region: the Python path (its aten.detach)
    assert record_calls["add"] == 0  # after it, on a tensor that does not require grad: C++


@pytest.mark.parametrize("dtype", [torch.float16, torch.float64, torch.int32])
def test_dtypes(dtype, record_calls):
    def body(x, y):
        return x + y, x * 3, x > y, x / 2

    x, y = torch.arange(12, dtype=dtype).view(3, 4) + 1, torch.ones(3, 4, dtype=dtype)
    compare_call(body, jit(body), (x, y))
    assert not record_calls, dict(record_calls)


def test_errors_are_eagers(record_calls):
    # The meta rule raises: the Python path runs and raises eager's error (or breaks).
    def sub_bool(x):
        return torch.tanh(x) - True

    def shapes(x, y):
        return x + y

    def mismatch(x, w):
        return torch.tanh(x) @ w  # mm raises on the metas: eager's error

    def bad_view(x):
        return torch.tanh(x).t().view(-1)  # a view the strides do not allow: eager's error

    def bad_reduce(x):
        return x.sum(2), x.mean(0)  # a dim out of range; mean of ints

    compare_call(bad_view, jit(bad_view), (torch.randn(2, 3),))
    compare_call(bad_reduce, jit(bad_reduce), (torch.randn(2, 3),))
    compare_call(bad_reduce, jit(bad_reduce), (torch.ones(2, 3, 4, dtype=torch.int64),))
    compare_call(sub_bool, jit(sub_bool), (torch.randn(3),))
    compare_call(shapes, jit(shapes), (torch.randn(3), torch.randn(4)))
    compare_call(mismatch, jit(mismatch), (torch.randn(2, 3), torch.randn(2, 3)))
    assert record_calls["tanh"] == 0, dict(record_calls)
    assert record_calls["view"] >= 1 and record_calls["sum"] >= 1 and record_calls["mean"] >= 1, dict(record_calls)
    assert record_calls["sub"] >= 1 and record_calls["add"] >= 1 and record_calls["matmul"] >= 1, dict(record_calls)


def test_switch_reads_and_restores():
    prev = C.native_record()
    try:
        assert C.native_record(False) == prev
        assert C.native_record() is False
    finally:
        C.native_record(prev)
    assert C.native_record() == prev
