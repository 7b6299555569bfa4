"""torch's higher-order operators called from captured code (polyfills_hops.py).

Under capture `torch.compiler.is_compiling()` answers True, so library code
takes its compile-friendly path; transformers' Mamba mixers then call
`torch._higher_order_ops.associative_scan.associative_scan`, which used to be
a GB018 break per layer (a Python function passed to a torch function). The
reference inlines the scan: each case is compared with eager through the
harness (values, types, identity and aliasing, exceptions) with its graph and
break counts; what the reference does not model breaks and runs the original."""

import pytest
import torch
from torch._higher_order_ops.associative_scan import associative_scan

from harness import check
from xacc._src.capture.convert import EVENTS
from xacc.jit import counters, jit


def _linear_recurrence(left, right):
    a_left, b_left = left
    a_right, b_right = right
    return a_left * a_right, a_right * b_left + b_right


def _pair(n, dim_len_last=True):
    def make(i):
        shape = (2, 3, n) if dim_len_last else (n, 2, 3)
        return torch.rand(*shape), torch.randn(*shape)
    return make


def _breaks():
    return [f"{b.code} {b.detail}" for ev in EVENTS for b in ev.breaks]


@pytest.mark.parametrize("n", [2, 5, 16])  # even, odd, a power of two: each branch of the recursion
@pytest.mark.parametrize("device", ["cpu", "xpu0"])
def test_tuple_scan_is_one_graph(n, device):
    # The Mamba selective scan: (decay, input) pairs along the sequence dim.
    def fn(a, b):
        _, states = associative_scan(_linear_recurrence, (a, b), dim=2, combine_mode="generic")
        return states * 2

    check(fn, _pair(n), graphs=1, breaks=0, device=device)


def test_scan_matches_eager_bitwise():
    # The same recursion on the same pairs as eager's generic_associative_scan.
    def fn(a, b):
        return associative_scan(_linear_recurrence, (a, b), dim=-1, combine_mode="generic")

    a, b = _pair(11)(0)
    ea, eb = fn(a, b)
    ja, jb = jit(fn)(a, b)
    assert torch.equal(ea, ja) and torch.equal(eb, jb)
    assert ja.stride() == ea.stride() and jb.stride() == eb.stride()
    assert counters()["breaks"] == 0, counters()


def test_reverse_list_and_single_tensor():
    def fn(a, b):
        xs = associative_scan(lambda l, r: [l[0] + r[0], torch.maximum(l[1], r[1])], [a, b], 0,
                              reverse=True, combine_mode="generic")
        c = associative_scan(lambda l, r: l * r, a, dim=1, combine_mode="generic")
        return xs, c

    check(fn, _pair(7, dim_len_last=False), graphs=1, breaks=0)


def test_combine_fn_sees_one_element_as_under_vmap():
    # A combine_fn that reduces: under vmap it sees one element (no scan dim),
    # so its sum is per element; called on a whole batch it would not be.
    def fn(x):
        return associative_scan(lambda l, r: l + r.sum(), x, dim=0, combine_mode="generic")

    check(fn, lambda i: (torch.randn(6, 4),), graphs=1, breaks=0)


def test_one_element_scan_returns_a_view_of_the_input():
    def fn(a, b):
        return associative_scan(_linear_recurrence, (a, b), dim=2, combine_mode="generic")

    check(fn, _pair(1), graphs=1, breaks=0)


def test_compile_friendly_branch_is_taken_and_captured():
    # The pattern of transformers' mamba_selective_scan: the scan under
    # is_compiling(), a Python loop over the sequence otherwise.
    def fn(a, b):
        if torch.compiler.is_compiling():
            _, states = associative_scan(_linear_recurrence, (a, b), dim=2, combine_mode="generic")
            return states
        state = torch.zeros_like(b[:, :, 0])
        out = []
        for i in range(b.shape[2]):
            state = a[:, :, i] * state + b[:, :, i]
            out.append(state)
        return torch.stack(out, dim=-1)

    check(fn, _pair(8), graphs=1, breaks=0)


def test_unmodelled_arguments_break_and_run_the_original():
    # A dict of leaves: not modelled, the original runs in Python.
    def fn(a, b):
        out = associative_scan(lambda l, r: {"a": l["a"] * r["a"], "b": l["b"] + r["b"]},
                               {"a": a, "b": b}, dim=2, combine_mode="generic")
        return out["b"] + 1

    # The lambda, called by the original under vmap, is a frame of its own,
    # compiled once per stride of the views it is given.
    check(fn, _pair(4), breaks=1, max_recompiles=8)
    assert any(b.startswith("GB002 associative_scan on xs other than") for b in _breaks()), _breaks()


def test_pointwise_mode_on_cpu_raises_as_eager():
    # combine_mode="pointwise" needs CUDA or XPU tensors: eager raises ValueError.
    def fn(a, b):
        return associative_scan(_linear_recurrence, (a, b), dim=2)

    check(fn, _pair(4), breaks=1)
    assert any(b.startswith("GB002 associative_scan with combine_mode='pointwise'") for b in _breaks()), _breaks()
