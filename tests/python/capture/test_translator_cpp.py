"""The C++ bytecode translator (xacc._C.capture.translate) on its own: the
same functions as the straight-line, module and control-flow suites, each one
graph with no breaks, whatever translator is the default."""

import pytest
import torch

import test_control
import test_modules
import test_straightline
from harness import check, same
from xacc._src.capture import config
from xacc.jit import counters, jit


@pytest.fixture(autouse=True)
def cpp_translator(monkeypatch):
    monkeypatch.setattr(config, "TRANSLATOR", "cpp")


@pytest.mark.parametrize("name", sorted(test_straightline.CASES))
def test_straightline_cpp(name):
    fn, make = test_straightline.CASES[name]
    check(fn, make, graphs=1, breaks=0)


@pytest.mark.parametrize("name", sorted(test_control.CASES))
def test_control_cpp(name):
    fn, make = test_control.CASES[name]
    check(fn, make, graphs=1, breaks=0)


@pytest.mark.parametrize("name", sorted(test_modules.MODULES))
def test_modules_cpp(name):
    test_modules.test_module(name)


def test_print_splits_the_frame():
    def f(x):
        y = x + 1
        print("side effect")  # GB003: the prefix graph, print in Python, a resumed graph
        return y * 2

    x = torch.randn(3)
    same(jit(f)(x), (x + 1) * 2)
    c = counters()
    assert c["internal_errors"] == 0 and c["breaks"] == 1 and c["graphs"] == 2
