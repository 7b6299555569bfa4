"""A method (or static/class method) replaced on its class after the first call
must not run the old graph: what the graph inlined is guarded through the class
(silently wrong on main before this test: the old graph ran)."""
from __future__ import annotations

import torch

import xacc


def fresh_classes():
    class A:
        def f(self, x):
            return x + 1

        @staticmethod
        def s(x):
            return x * 2

        @classmethod
        def c(cls, x):
            return x - 1

    class M(torch.nn.Module):
        def helper(self, x):
            return x + 1

        def forward(self, x):
            return self.helper(x) * 2

    return A, M


def check(fn, args, change, eager_after):
    x = torch.zeros(3)
    j = xacc.jit(fn)
    assert torch.equal(j(*args(x)), fn(*args(x)))
    change()
    got = j(*args(x))
    assert torch.equal(got, eager_after(x)), got


def test_method_of_an_object_built_in_the_graph():
    A, _ = fresh_classes()
    check(lambda x: A().f(x), lambda x: (x,), lambda: setattr(A, "f", lambda self, x: x + 5), lambda x: x + 5)


def test_method_of_an_argument():
    A, _ = fresh_classes()
    check(lambda o, x: o.f(x), lambda x: (A(), x), lambda: setattr(A, "f", lambda self, x: x + 5), lambda x: x + 5)


def test_static_and_class_methods():
    A, _ = fresh_classes()
    check(lambda x: A().s(x), lambda x: (x,), lambda: setattr(A, "s", staticmethod(lambda x: x * 3)),
          lambda x: x * 3)
    B, _ = fresh_classes()
    check(lambda x: B().c(x), lambda x: (x,), lambda: setattr(B, "c", classmethod(lambda cls, x: x - 7)),
          lambda x: x - 7)


def test_module_method():
    _, M = fresh_classes()
    m = M()
    check(lambda x: m(x), lambda x: (x,), lambda: setattr(M, "helper", lambda self, x: x + 4),
          lambda x: (x + 4) * 2)
