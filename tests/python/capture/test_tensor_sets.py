"""Sets holding tensors (Note [Sets of tensors] in TranslateSets.cpp): a
tensor hashes by identity, so membership, add/discard, len() and comparisons
of such sets are captured without a break and answer as eager's do
(nn.Module.parameters() keeps the tensors it yielded in such a set); what
follows the tensors' addresses (iteration order, pop(), repr, the set
escaping) still breaks and matches eager."""

import torch

from harness import check, r
from xacc.jit import counters, jit


class Tied(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 4)
        self.b = torch.nn.Linear(4, 4)
        self.b.weight = self.a.weight  # tied: parameters() yields it once

    def forward(self, x):
        n = sum(p.numel() for p in self.parameters())
        dtype = next(self.parameters()).dtype
        return self.b(self.a(x)).to(dtype) * n


def test_parameters_of_a_module_with_tied_weights_is_one_graph():
    m = Tied()
    jm = jit(m)
    x = torch.randn(2, 4)
    with torch.no_grad():
        for _ in range(3):
            assert torch.allclose(jm(x), m(x))
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1, c


def membership(x):
    y = x + 1
    seen = {x}
    seen.add(y)
    seen.add(x)  # already there
    a, b = y in seen, (x * 2) in seen
    seen.discard(y)
    return x * len(seen) + (y if a and not b else -y), y in seen, x in seen


def set_algebra(x):
    y, z = x.sin(), x.cos()
    s, t = {x, y}, frozenset([y, z])
    u = s | t
    return x * len(u) + len(s & t), (s - t) == {x}, s.isdisjoint({z}), bool(s ^ s)


def test_membership_of_tensors_is_by_identity():
    check(membership, r(3), graphs=1, breaks=0)


def test_set_algebra_on_tensors_is_one_graph():
    check(set_algebra, r(3), graphs=1, breaks=0)


def iterated(x):
    s = {x, x + 1, x * 3}
    total = x * 0
    for t in s:  # the order follows the tensors' addresses in eager
        total = total + t
    return total


def popped(x):
    s = {x + 1}
    return s.pop() * 2


def escapes(x):
    return {x, x + 1}, x * 2


def test_order_of_a_set_of_tensors_still_breaks():
    for fn in (iterated, popped):
        check(fn, r(3), max_recompiles=8)
        assert counters()["breaks"] >= 1


def test_a_set_of_tensors_that_escapes_still_breaks_and_holds_eager_tensors():
    jf = jit(escapes)
    for _ in range(3):
        x = torch.randn(3)
        s, y = jf(x)
        assert type(s) is set and len(s) == 2 and x in s  # the input object itself
        (other,) = [t for t in s if t is not x]
        assert torch.equal(other, x + 1) and torch.equal(y, x * 2)
    c = counters()
    assert c["breaks"] + c["skipped"] >= 1, c  # the set is not rebuilt: the frame runs in Python
