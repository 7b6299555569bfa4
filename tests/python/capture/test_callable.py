"""callable() of values the translator made (TranslateBuiltins.cpp): whether
the value's type has a tp_call, as in Python. It answered False for every
object of a user class made while tracing, even one whose class defines
__call__, and for bound container methods (`xs.append`)."""

import torch

from harness import check, r


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return x * self.k


class Plain:
    def __init__(self, k):
        self.k = k


def user_objects(x):
    s, p = Scale(2), Plain(3)
    xs = [x]
    it = iter(xs)
    try:
        raise ValueError("v")
    except ValueError as e:
        err = callable(e)
    return x + 1, callable(s), callable(p), callable(xs.append), callable(xs), callable(x), callable(it), err


def test_callable_of_user_objects_and_methods():
    check(user_objects, r(3), graphs=1, breaks=0)


def vmapped(x):
    v = torch.vmap(lambda row: row + 1)
    return callable(v), v(x)


def test_callable_of_a_stand_in_is_eagers():
    # torch.vmap's result is a polyfill's stand-in here (polyfills_vmap.py): its
    # type is never answered, so callable() of it is a break, and eager's True.
    check(vmapped, r(3, 2), max_recompiles=1)
