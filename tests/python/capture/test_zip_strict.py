"""zip(strict=True) over lists (torch's RNNBase._weights_have_changed zips two
module lists with strict=True on every LSTM call): the iterator checks the
lengths when the first argument runs out, as Python does, instead of a GB011
break; a length mismatch is Python's ValueError (the frame runs it natively),
and a zip rebuilt at a break keeps strict=True."""

import torch
from harness import check

from xacc.explain import explain


def pairs(x, a, b):
    out = []
    for u, v in zip(a, b, strict=True):
        out.append(x * u + v)
    return out


def test_zip_strict_of_lists_is_no_break():
    check(pairs, lambda i: (torch.randn(3), [1, 2, 3], [4.0, 5.0, 6.0]), graphs=1, breaks=0)


def mismatch(x, a, b):
    try:
        for u, v in zip(a, b, strict=True):
            x = x + u * v
    except ValueError as e:
        return x, str(e)
    return x, ""


def test_zip_strict_length_mismatch_raises_as_eager():
    for a, b in (([1, 2], [3]), ([1], [3, 4]), ([1, 2], [3, 4])):
        check(mismatch, lambda i, a=a, b=b: (torch.randn(3), list(a), list(b)), calls=1)


def broken(x, a, b):
    for u, v in zip(a, b, strict=True):
        print(u)  # a break inside the loop: the zip is rebuilt for the resume code
        x = x * v
    return x


def test_zip_strict_rebuilt_at_a_break_keeps_strict():
    check(broken, lambda i: (torch.randn(3), [1, 2], [3, 4]), max_recompiles=2)
    check(broken, lambda i: (torch.randn(3), [1, 2], [3]), calls=1, max_recompiles=3)  # ValueError after one item, as eager
    out = explain(pairs)(torch.randn(3), [1, 2], [3, 4])
    assert out.break_reasons == [], out.break_reasons
