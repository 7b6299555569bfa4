"""The references of polyfills.py for container operations, operator, map/filter/
next, copy.copy and pure functions of constants: each case was a graph break
before them (GB002/GB009/GB010/GB011/GB021), and each compares with eager on
values, identity and exceptions (harness.check). Edge cases keep Python's
semantics exactly: an extended slice of the wrong size raises the same
ValueError, list comparison uses identity before ==, a list never equals a
tuple."""

import copy
import operator

import numpy as np
import pytest
import torch

from harness import check, r


def test_list_slice_assignment_and_del():
    def f(x):
        xs = [x, x + 1, x + 2, x + 3, x + 4]
        xs[1:3] = [x * 10]
        xs[:0] = (x - 1, x - 2)
        ys = [x, x, x, x]
        ys[::2] = [x * 2, x * 3]
        del ys[-1]
        zs = [x, x + 1, x + 2, x + 3]
        del zs[::2]
        d = {"a": x, "b": x + 1}
        del d["a"]
        return xs, ys, zs, d

    check(f, r(3), graphs=1, breaks=0)


def test_extended_slice_of_the_wrong_size_raises_as_eager():
    def f(x):
        xs = [x, x, x, x]
        xs[::2] = [x]
        return xs

    check(f, r(3))


def test_list_sort_remove_popitem_and_repeat():
    def f(x):
        sizes = [3, 1, 2]
        sizes.sort(reverse=True)
        parts = [x * 3, x, x * 2]
        parts.sort(key=lambda t: t.shape[0])
        names = ["a", "b", "c"]
        names.remove("b")
        d = {"a": x, "b": x + 1}
        k, v = d.popitem()
        return sizes, parts, names, k, v, d, 3 * [x], [None] * 2

    check(f, r(3), graphs=1, breaks=0)


def test_container_comparisons():
    def f(x):
        a = [1, 2, x]
        same = a == [1, 2, x]          # identity before ==: no tensor comparison
        keys = {"a": 1, "b": 2}.keys() == {"b": 0, "a": 5}.keys()
        order = [1, 2, 3] < [1, 3]
        mixed = [1, 2] == (1, 2)
        merged = {"a": x} | {"b": x + 1}
        return same, keys, order, mixed, merged, {"a": 1} != {"a": 2}

    check(f, r(3), graphs=1, breaks=0)


def test_operator_functions_map_filter_next():
    def f(x):
        ops = [operator.add(x, 1), operator.mul(x, 2), operator.neg(x), operator.getitem(x, 0),
               operator.matmul(x[:, None], x[None, :]), operator.truediv(x, 4)]
        y = x.clone()
        y = operator.iadd(y, 1)
        ms = list(map(torch.relu, [x, -x]))
        pairs = list(map(operator.sub, [x, x * 2], [1, 2]))
        odd = list(filter(lambda i: i % 2, range(6)))
        it = iter([x, x * 2])
        return ops, y, ms, pairs, odd, next(it), next(it), next(it, None), bool([]), pow(x, 2)

    check(f, r(3), graphs=1, breaks=0)


def test_copy_and_pure_functions_of_constants():
    def f(x):
        xs = [x, x + 1]
        ys = copy.copy(xs)
        ys.append(x)
        d = torch.device("cpu")
        lim = float(np.iinfo(np.int16).max)
        eps = np.finfo(np.float32).eps
        return xs, ys, x.to(d), x.clamp(max=lim) + eps, chr(65) + format(3.14159, ".2f"), ord("a")

    check(f, r(3), graphs=1, breaks=0)


def test_numpy_on_constants_keeps_numpy_scalar_types():
    def f(x):
        s = np.sqrt(x.shape[-1])
        n = int(np.ceil(x.shape[0] / 2))
        return x / s, x[:n], type(s).__name__, int(np.argmax([0.1, 0.7, 0.2]))

    check(f, r(3, 4), graphs=1, breaks=0)


@pytest.mark.parametrize("make", [lambda x: [x] == [x.clone()], lambda x: [x, 1] < [x.clone(), 2]])
def test_tensor_items_compared_as_python_does(make):
    # Distinct tensors are compared with ==, whose truth needs their values:
    # the same error (or graph break) as eager, never a guess.
    check(make, lambda i: (torch.ones(3),))


def test_numpy_random_on_constants_is_not_run_at_capture_time():
    # Note [NumPy on constants]: only pure functions run early; np.random.rand()
    # has constant (no) arguments but must give a new value per call.
    from xacc.jit import jit

    def f(x):
        return x + float(np.random.rand())

    jf = jit(f)
    x = torch.zeros(3)
    assert not torch.equal(jf(x), jf(x))
