"""Calls from the C++ translator into the Python host (xacc/_src/capture/host.py)
on a first capture (issue #21, a typed capture boundary).

Every method of `Host` is wrapped to count the calls that come from C++ (calls
a host method makes to another, like `record` to `_note`, are Python's own and
not counted). Note [Escape checks] in csrc/lib/capture/translate/Translator.h:
`check_escape` is asked only after an inference_mode region or a tensor made a
leaf; Note [Bindings read in place] in csrc/python/translate_bindings.cpp: the
graph value of a bound meta is read from the recorder's table, `value_of` runs
only on a miss. The breaks those checks exist for still happen (test_modes.py
covers them with eager compared; two are repeated here with the counts).
Torch calls are recorded in C++ where that is exact (Note [Records made in
C++] in csrc/python/native_record.cpp) and the frame's tensor arguments become
graph inputs in one call (Note [Tensor arguments in one call] in
csrc/lib/capture/translate/TranslateDriver.cpp)."""

import collections

import pytest
import torch

from harness import compare_call

from xacc._src.capture import host as H
from xacc.jit import counters, jit


@pytest.fixture
def host_calls(monkeypatch):
    counts: collections.Counter = collections.Counter()
    depth = [0]
    for name, fn in list(vars(H.Host).items()):
        if not callable(fn) or name.startswith("__"):
            continue

        def wrap(f=fn, n=name):
            def w(self, *a, **k):
                if depth[0] == 0:
                    counts[n] += 1
                depth[0] += 1
                try:
                    return f(self, *a, **k)
                finally:
                    depth[0] -= 1
            return w
        monkeypatch.setattr(H.Host, name, wrap())
    return counts


def twenty_ops(x, w, b):
    y = torch.nn.functional.linear(x, w, b)
    y = torch.relu(y) + 1
    y = y * 2 - x.sum()
    z = torch.tanh(y) @ w
    z = z.softmax(-1)
    z = z + torch.sigmoid(z) * 3
    z = z.mean(0, keepdim=True) + z
    z = torch.exp(-z) / (1 + z.abs())
    z = z.transpose(0, 1).contiguous().view(-1)
    return z.sum() + z.max()


def returns_views(x):
    y = torch.tanh(x) * 2
    return y, y.t(), y[0], y.view(-1)


def test_plain_capture_asks_no_escape_check_and_no_value_lookup(host_calls):
    x, w, b = torch.randn(8, 16), torch.randn(16, 16), torch.randn(16)
    got = jit(twenty_ops)(x, w, b)
    torch.testing.assert_close(got, twenty_ops(x, w, b))
    assert host_calls["check_escape"] == 0, dict(host_calls)
    assert host_calls["value_of"] == 0, dict(host_calls)
    # One call per frame (issue #21): the three tensor arguments become graph
    # inputs in one tensor_inputs call (Note [Tensor arguments in one call] in
    # translate/TranslateDriver.cpp), and every torch call (linear, the
    # reductions over dims, transpose, contiguous, view, max, the elementwise
    # ops, softmax, the matrix product) is recorded in C++ (Note [Records made
    # in C++] in csrc/python/native_record.cpp). 28 calls before the C++
    # recorder, 9 before its views, reductions over dims and linear, and before
    # the batched inputs.
    assert dict(host_calls) == {"tensor_inputs": 1}, dict(host_calls)


def mlp_block(x, g, beta, w1, b1, w2, b2):
    h = torch.nn.functional.layer_norm(x, (16,), g, beta)
    h = torch.nn.functional.linear(h, w1, b1).relu()
    h = torch.nn.functional.linear(h, w2)
    return (x + h * 0.5).mean(-1, keepdim=True), h.t().contiguous().view(4, -1).sum(0)


def test_mlp_block_host_calls(host_calls):
    args = (torch.randn(8, 16), torch.randn(16), torch.randn(16), torch.randn(32, 16), torch.randn(32),
            torch.randn(16, 32), torch.randn(16))
    with torch.no_grad():
        compare_call(mlp_block, jit(mlp_block), args)
    # layer_norm is a Python function of torch.nn.functional (the Python path
    # records its native_layer_norm): 1 record; 7 tensor_input and 8 records before (15 calls).
    assert dict(host_calls) == {"tensor_inputs": 1, "record": 1}, dict(host_calls)


def test_tensor_arguments_in_one_call(host_calls):
    def same(x, y):
        return x is y, x * 2 + y

    def item_first(xs, x, n):
        return xs[0] is x, xs[0] * n + x, xs[1] - 1

    x = torch.randn(3)
    out = compare_call(same, jit(same), (x, x))
    assert out[0] is True
    jf = jit(item_first)
    out = compare_call(item_first, jf, ([x, torch.randn(3)], x, 3))
    assert out[0] is True
    out = compare_call(item_first, jf, ([torch.randn(3), torch.randn(3)], x, 3))  # the identity guard fails
    assert out[0] is False
    assert counters()["breaks"] == 0, counters()
    assert host_calls["tensor_inputs"] >= 3, dict(host_calls)  # one per capture (the recompile may run a shadow capture too)


class _Sub(torch.Tensor):
    pass


def test_tensor_argument_that_fails_still_breaks(host_calls):
    def f(x, s, y):
        return x + 1, y * 2, s.sum()

    # The subclass argument fails in tensor_inputs (GB011) as it did in its
    # own tensor_input: the frame runs in Python, eager's values and types.
    args = (torch.randn(3), torch.randn(3).as_subclass(_Sub), torch.randn(3))
    got, want = jit(f)(*args), f(*args)
    for a, e in zip(got, want):
        assert type(a) is type(e)
        torch.testing.assert_close(a, e)
    assert host_calls["tensor_inputs"] >= 1, dict(host_calls)
    assert counters()["breaks"] >= 1 and counters()["skipped"] >= 1, counters()


def test_returned_views_ask_no_escape_check(host_calls):
    x = torch.randn(4, 4)
    out = jit(returns_views)(x)
    ref = returns_views(x)
    for a, e in zip(out, ref):
        torch.testing.assert_close(a, e)
    assert out[1]._base is out[0] and out[2]._base is out[0] and out[3]._base is out[0]
    assert host_calls["check_escape"] == 0, dict(host_calls)
    assert host_calls["value_of"] == 0, dict(host_calls)


def test_inference_tensor_still_breaks_with_escape_checks_on(host_calls):
    def f(x):
        with torch.inference_mode():
            y = x * 2
        return y, x + 1

    out = compare_call(f, jit(f), (torch.randn(4),))
    assert out[0].is_inference() and not out[1].is_inference()
    assert counters()["breaks"] >= 1
    assert host_calls["check_escape"] >= 1, dict(host_calls)


def test_made_leaf_leaving_still_breaks_with_escape_checks_on(host_calls):
    def f(x):
        w = x.clone().requires_grad_(True)
        return w, w * 2

    out = compare_call(f, jit(f), (torch.randn(4),))
    assert out[0].is_leaf and out[0].requires_grad and not out[1].is_leaf
    assert counters()["breaks"] >= 1
    assert host_calls["check_escape"] >= 1, dict(host_calls)


def unpacks_rows(x):
    a, b, c, d = x  # an unpack iterates the tensor: whether its item count may be dynamic is asked once
    e, f, g, h = x * 2
    i, j, k, m = x.t()
    return a * b - c * d + e * f - g * h, i + j + k + m


def test_unpacking_tensors_asks_for_dynamic_shapes_once(host_calls):
    compare_call(unpacks_rows, jit(unpacks_rows), (torch.randn(4, 4),))
    assert counters()["breaks"] == 0, counters()
    assert host_calls["dynamic_shapes"] == 1, dict(host_calls)
