"""Random generators other than the draws Note [Global RNG draws at run time]
(TranslateDraws.cpp) defers, and changes to the global ones between calls of
a captured function: a reseed, set_state, a module-level generator or draw
function reassigned, a `random.Random` / `RandomState` / `Generator` instance
of the program. Each gives eager's numbers and leaves every generator in
eager's state after each call (guard or break, never a number drawn at trace
time or from a stale generator)."""

from __future__ import annotations

import random

import numpy as np
import torch

from xacc.jit import counters, jit

from harness import same as _same


def same(a, b) -> None:
    """Eager's and the captured run's values: exactly equal (draws are bit-exact), with
    the harness's type, structure and identity checks."""
    _same(a, b, atol=0, rtol=0)


RNG = random.Random(1)
RS = np.random.RandomState(2)
GEN = np.random.default_rng(3)


def state() -> tuple:
    s = np.random.get_state()
    return (
        (s[0], s[1].tolist(), s[2], s[3], s[4]),
        random.getstate(),
        RNG.getstate(),
        RS.get_state()[1].tolist(),
        GEN.bit_generator.state,
    )


def reseed(i: int) -> None:
    np.random.seed(100 + i)
    random.seed(100 + i)
    RNG.seed(200 + i)
    RS.seed(300 + i)
    GEN.bit_generator.state = np.random.default_rng(400 + i).bit_generator.state


def run(fn, calls: int = 3, between=None) -> None:
    jfn = jit(fn)
    for i in range(calls):
        if between is not None:
            between(i)
        reseed(i)
        expected = fn(torch.ones(3))
        after = state()
        reseed(i)
        got = jfn(torch.ones(3))
        same(expected, got)
        assert state() == after, f"call {i}: a generator's state differs from eager's"
    assert counters()["internal_errors"] == 0


def test_instances_of_the_program():
    def f(x):
        a = RNG.random()
        b = RS.uniform(0, 1)
        c = GEN.random()
        return x + 1, a, b, c

    run(f)


def test_instance_made_in_the_frame():
    def f(x):
        r = random.Random(5)
        s = np.random.RandomState(6)
        return x + 1, r.random(), s.uniform(0, 1), r.randint(0, 100)

    run(f)


def test_unread_draws_of_instances_advance_their_state():
    def f(x):
        RNG.random()
        RS.uniform(0, 1)
        GEN.random()
        return x + 1

    run(f)


def test_reseed_and_set_state_between_calls():
    def f(x):
        p = np.random.uniform(0, 1)
        q = random.random()
        return x + 1, p, q

    def between(i):
        np.random.seed(i)
        np.random.set_state(np.random.RandomState(7 + i).get_state())

    run(f, calls=4, between=between)


def test_module_level_generator_reassigned_between_calls(monkeypatch):
    def f(x):
        p = np.random.uniform(0, 1)
        q = random.random()
        return x + 1, p, q

    jfn = jit(f)
    reseed(0)
    jfn(torch.ones(3))
    # The module-level draw functions rebound to other generators.
    other_np, other_py = np.random.RandomState(11), random.Random(12)
    monkeypatch.setattr(np.random, "uniform", other_np.uniform)
    monkeypatch.setattr(random, "random", other_py.random)
    for i in range(2):
        reseed(i)
        other_np.seed(21 + i)
        other_py.seed(22 + i)
        expected = f(torch.ones(3))
        after = state(), other_np.get_state()[1].tolist(), other_py.getstate()
        reseed(i)
        other_np.seed(21 + i)
        other_py.seed(22 + i)
        got = jfn(torch.ones(3))
        same(expected, got)
        assert (state(), other_np.get_state()[1].tolist(), other_py.getstate()) == after


def test_global_instance_attribute_reassigned(monkeypatch):
    # `np.random.mtrand._rand` / `random._inst` replaced: the module-level
    # functions stay bound to the old ones (as in eager); a draw made through
    # the new attribute draws from the new one.
    def f(x):
        p = np.random.mtrand._rand.uniform(0, 1)
        q = random._inst.random()
        return x + 1, p, q

    jfn = jit(f)
    reseed(0)
    jfn(torch.ones(3))
    monkeypatch.setattr(np.random.mtrand, "_rand", np.random.RandomState(13))
    monkeypatch.setattr(random, "_inst", random.Random(14))
    for i in range(2):
        np.random.mtrand._rand.seed(31 + i)
        random._inst.seed(32 + i)
        expected = f(torch.ones(3))
        after = np.random.mtrand._rand.get_state()[1].tolist(), random._inst.getstate()
        np.random.mtrand._rand.seed(31 + i)
        random._inst.seed(32 + i)
        got = jfn(torch.ones(3))
        same(expected, got)
        assert (np.random.mtrand._rand.get_state()[1].tolist(), random._inst.getstate()) == after
