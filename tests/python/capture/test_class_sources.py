"""Methods of objects whose class the translator reached with no source
(TranslateObjects.cpp, Translator::classAttr): torch.distributions' inlined
code builds `constraints.less_than(self.high)` from a trusted torch global.
The class's attributes are read and guarded through a weak proxy of the class
held as an entry constant: captured without a break, and a method replaced on
the class afterwards is the one that runs."""

import torch
from torch.distributions import constraints

from harness import check
from xacc.jit import counters, jit


def constraint_check(lo, hi, x):
    d = torch.distributions.Uniform(lo, hi, validate_args=False)
    return d.arg_constraints["low"].check(x), d.arg_constraints["high"].check(x), d.entropy()


def _args(i):
    return torch.zeros(4), torch.ones(4), torch.randn(4)


def test_method_of_an_object_of_a_class_with_no_source_is_captured():
    check(constraint_check, _args, graphs=1, breaks=0)


def test_method_replaced_on_that_class_later_is_the_one_that_runs():
    jf = jit(constraint_check)
    lo, hi, x = _args(0)
    first = jf(lo, hi, x)
    assert torch.equal(first[0], constraint_check(lo, hi, x)[0]) and counters()["breaks"] == 0
    old = constraints._LessThan.check
    constraints._LessThan.check = lambda self, value: value > 100
    try:
        got, want = jf(lo, hi, x), constraint_check(lo, hi, x)
        assert torch.equal(got[0], want[0]) and not want[0].any()
    finally:
        constraints._LessThan.check = old
    assert torch.equal(jf(lo, hi, x)[0], first[0])
