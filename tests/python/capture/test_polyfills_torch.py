"""torch library code the translator runs like a user's (issue 18, corpus
rows of torch.distributions): torch.distributions objects built inside a
captured function are plain Python classes, inlined by the general class
machinery (TranslateCalls.cpp's inlinedTorchModule); the two Python
mechanisms they needed are modelled for every class: non-data descriptors
with a `__get__` written in Python (Note [Non-data descriptors],
TranslateObjects.cpp; torch's lazy_property) and the builtin
`setattr(obj, "name", v)` as `obj.name = v`. Each case is compared with eager
through the harness (values, types, identity, exceptions) with its break
count."""

import pytest
import torch
from torch import distributions as D

from harness import check, r
from xacc._src.capture.convert import EVENTS
from xacc.jit import counters, jit


# -- non-data descriptors with a Python __get__ -------------------------------------------


class cached:
    """A lazy attribute as torch.distributions.utils.lazy_property: computed on
    first read, then stored on the instance (which wins from then on)."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = self.fn(obj)
        setattr(obj, self.fn.__name__, value)
        return value


class Lazy:
    def __init__(self, x):
        self.x = x

    @cached
    def total(self):
        return self.x.sum() * 2


class Scaled:
    """A descriptor that reads its owner: __get__(obj, owner) sees both."""

    def __init__(self, k):
        self.k = k

    def __get__(self, obj, owner=None):
        return obj.x * self.k + owner.offset


class WithScaled:
    offset = 1.0
    y = Scaled(3.0)

    def __init__(self, x):
        self.x = x


def test_lazy_descriptor_computes_then_instance_attribute_wins():
    def fn(x):
        o = Lazy(x)
        a = o.total           # __get__ runs, stores o.total
        b = o.total           # the instance attribute now
        return a, b, a is b

    check(fn, r(4, 3), graphs=1, breaks=0)


def test_descriptor_sees_instance_and_owner():
    def fn(x):
        return WithScaled(x).y + 1

    check(fn, r(5), graphs=1, breaks=0)


def test_descriptor_replaced_on_the_class_recompiles():
    class Holder:
        offset = 0.0
        y = Scaled(2.0)

        def __init__(self, x):
            self.x = x

    def fn(x):
        return Holder(x).y

    jfn = jit(fn)
    x = torch.randn(4)
    torch.testing.assert_close(jfn(x), x * 2)
    Holder.y = Scaled(5.0)
    torch.testing.assert_close(jfn(x), x * 5)
    c = counters()
    assert c["internal_errors"] == 0 and c["breaks"] == 0 and c["recompiles"] == 1, c


def test_descriptor_on_an_input_object_writes_it_back():
    def fn(o, y):
        return o.total + y

    jfn = jit(fn)
    for i in range(2):
        e, j = Lazy(torch.randn(3)), Lazy(torch.randn(3))
        j.x = e.x.clone()
        y = torch.randn(3)
        torch.testing.assert_close(jfn(j, y), fn(e, y))
        assert "total" in vars(j) and torch.equal(vars(j)["total"], vars(e)["total"])
    c = counters()
    assert c["internal_errors"] == 0 and c["breaks"] == 0 and c["graphs"] == 1, c


def test_builtin_setattr_is_an_attribute_write():
    class Box:
        def __init__(self, x):
            setattr(self, "x", x * 2)

    def fn(x):
        b = Box(x)
        setattr(b, "y", b.x + 1)
        return b.x, b.y

    check(fn, r(3), graphs=1, breaks=0)


# -- torch.distributions built inside the function ----------------------------------------


def test_normal_without_validation_is_one_graph():
    def fn(x):
        d = D.Normal(x, x.abs() + 1, validate_args=False)
        return d.mean, d.stddev, d.variance, d.entropy(), d.log_prob(x), d.cdf(x)

    check(fn, r(4, 5), graphs=1, breaks=0)


def test_categorical_lazy_probs_from_logits():
    def fn(x):
        d = D.Categorical(logits=x, validate_args=False)
        return d.probs, d.logits, d.entropy(), d.log_prob(torch.zeros(4, dtype=torch.long))

    check(fn, r(4, 6), breaks=0)


def test_bernoulli_lazy_probs():
    def fn(x):
        d = D.Bernoulli(logits=x, validate_args=False)
        return d.probs, d.mean, d.log_prob((x > 0).float())

    check(fn, r(7), breaks=0)


def test_distribution_attributes_read_in_the_graph():
    def fn(x):
        d = D.Normal(x, 1.0, validate_args=False)
        return d.loc * 2, d.batch_shape

    check(fn, r(3, 2), graphs=1, breaks=0)


def test_validation_still_raises_as_in_eager():
    """A constraint violated: eager raises ValueError; so does the jitted call."""
    def fn(x):
        return D.Normal(x, -torch.ones_like(x)).mean

    jfn = jit(fn)
    x = torch.randn(3)
    with pytest.raises(ValueError) as e_eager:
        fn(x)
    with pytest.raises(ValueError) as e_jit:
        jfn(x)
    assert str(e_eager.value) == str(e_jit.value)
    assert counters()["internal_errors"] == 0
    assert any(b.code in ("GB004", "GB010") for ev in EVENTS for b in ev.breaks)


# -- Tensor.requires_grad_(False) ----------------------------------------------------------


def _rg_copy(x):
    y = x.clone().requires_grad_(False)
    return y * 2, y.requires_grad


def _rg_input(x):
    return x.requires_grad_(False) is x, x * 2


def _rg_keyword_after_no_grad(x):
    with torch.no_grad():
        y = x * 2
    return y.requires_grad_(requires_grad=False), y.is_leaf


@pytest.mark.parametrize("fn", [_rg_copy, _rg_input, _rg_keyword_after_no_grad])
@pytest.mark.parametrize("grad", [False, True])
def test_requires_grad_false_changes_nothing_on_a_tensor_without_grad(fn, grad):
    """No-op (one graph, no break) where the tensor does not require grad; a
    break where it does (it changes a leaf input, or raises on a non-leaf),
    with eager's result or exception either way."""
    def make(i):
        return (torch.randn(3, requires_grad=grad),)

    no_op = not grad or fn is _rg_keyword_after_no_grad
    check(fn, make, graphs=1, breaks=0 if no_op else 1)
