"""hasattr() of an instance of a user class made in the traced frame: the
answer comes from the lookup getattr does (instance dict, class attributes and
methods, a property's getter, __getattr__) and is guarded on the class, so it
stays in the graph. transformers' masking_utils does
`hasattr(cache, "is_sliding") and True in cache.is_sliding` on a cache object
whose `is_sliding` is a property. Every case is compared with eager
(harness.check: values, types, identity, printed output, exceptions).
"""

import torch
from harness import check

from xacc.jit import reset


class Cache:
    kind = "dense"

    def __init__(self, n):
        self.layers = [i % 2 == 1 for i in range(n)]

    @property
    def is_sliding(self):
        return [bool(v) for v in self.layers]

    def size(self):
        return len(self.layers)


class Lazy:
    def __getattr__(self, name):
        if name.startswith("opt_"):
            return 1
        raise AttributeError(name)


def plain_lookups(x):
    c = Cache(3)
    c.extra = 2
    y = x
    if hasattr(c, "layers") and hasattr(c, "extra"):
        y = y + 1
    if hasattr(c, "size") and hasattr(c, "kind") and not hasattr(c, "missing"):
        y = y * 2
    return y, hasattr(c, "__class__"), hasattr(c, "__dict__")


def through_property(x):
    c = Cache(4)
    if hasattr(c, "is_sliding") and True in c.is_sliding:
        return x * c.is_sliding.index(True)
    return x


def through_getattr_hook(x):
    o = Lazy()
    return x + 1 if hasattr(o, "opt_a") else x


def r(i):
    return (torch.randn(4),)


def test_hasattr_of_a_user_object_stays_in_the_graph():
    for fn in (plain_lookups, through_property, through_getattr_hook):
        reset()
        check(fn, r, graphs=1, breaks=0)


class Raising:
    @property
    def p(self):
        raise AttributeError("p")


def hasattr_false_through_a_raising_property(x):
    return x + 1 if hasattr(Raising(), "p") else x - 1


def test_attribute_error_in_a_getter_keeps_eager_answer():
    # The getter's AttributeError is not modelled: a break, never a wrong True.
    reset()
    check(hasattr_false_through_a_raising_property, r, min_graphs=0)
