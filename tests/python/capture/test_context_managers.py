"""`with` on context managers other than torch.no_grad()/enable_grad() (Note
[Context managers] in csrc/lib/capture/translate/TranslateContext.cpp): a
user's class with __enter__/__exit__, contextlib.nullcontext/suppress,
@contextlib.contextmanager generators and torch.set_grad_enabled stay in the
graph (each was a GB014 break before). Compared with eager on values, types,
identity, side effects and the grad mode; an exception inside the block, a
manager that escapes, or a grad mode left changed is left to Python."""

import contextlib

import torch

from harness import check, r


class Recorder:
    def __init__(self, log, name):
        self.log = log
        self.name = name

    def __enter__(self):
        self.log.append("enter " + self.name)
        return self

    def __exit__(self, typ, value, tb):
        self.log.append(("exit", self.name, typ, value, tb))
        return False


def test_user_context_manager_class():
    def f(x):
        log = []
        with Recorder(log, "outer") as rec:
            y = x * 2
            with Recorder(log, "inner"):
                y = y + 1
            log.append(rec.name)
        return y, log

    check(f, r(3), graphs=1, breaks=0)


def test_contextlib_nullcontext_suppress_and_contextmanager():
    def f(x):
        log = []

        @contextlib.contextmanager
        def scope(name):
            log.append("enter " + name)
            yield name.upper()
            log.append("exit " + name)

        with contextlib.nullcontext(x + 1) as a:
            y = a * 2
        with contextlib.nullcontext():
            y = y - 1
        with contextlib.suppress(KeyError, IndexError):
            y = {"a": y}["a"] + 1
        with scope("block") as tag, scope("nested"):
            y = y.relu()
        return y, tag, log

    check(f, r(3), graphs=1, breaks=0)


def test_set_grad_enabled_in_a_with_block():
    def f(x):
        with torch.set_grad_enabled(False):
            a = x * 2
            inside = torch.is_grad_enabled()
        b = x * 3
        with torch.set_grad_enabled(True):
            c = x * 4
        return a, inside, b, c, torch.is_grad_enabled()

    check(f, lambda i: (torch.randn(3, requires_grad=True),), graphs=1, breaks=0)


def test_set_grad_enabled_plain_calls_that_restore_the_mode():
    def f(x):
        torch.set_grad_enabled(False)
        a = x * 2
        torch.set_grad_enabled(True)
        return a, x * 3

    check(f, lambda i: (torch.randn(3, requires_grad=True),), graphs=1, breaks=0)


def test_what_the_trace_cannot_model_is_left_to_python():
    # The real objects, exceptions and global state, as eager has them.
    def escapes(x):
        cm = contextlib.nullcontext(x)
        with cm:
            y = x + 1
        return y, cm

    def suppressed(x):
        y = x
        with contextlib.suppress(KeyError):
            y = {"a": x}["b"]
        return y + 1

    def yields_twice(x):
        @contextlib.contextmanager
        def bad():
            yield 1
            yield 2

        with bad():
            y = x * 2
        return y

    for fn in (escapes, suppressed, yields_twice):
        check(fn, r(3), calls=2)


def test_grad_mode_left_changed_is_left_to_python():
    from xacc.jit import jit

    def returns(x):
        torch.set_grad_enabled(False)
        return x * 2

    def breaks(x):
        torch.set_grad_enabled(False)
        y = x * 2
        print("break")  # a graph break with the mode changed
        return y, x * 3, torch.is_grad_enabled()

    for f in (returns, breaks):
        jf = jit(f)
        try:
            for _ in range(2):
                torch.set_grad_enabled(True)
                out = jf(torch.randn(3, requires_grad=True))
                assert not torch.is_grad_enabled()  # as eager leaves it
                outs = out if isinstance(out, tuple) else (out,)
                assert not any(o.requires_grad for o in outs if isinstance(o, torch.Tensor))
        finally:
            torch.set_grad_enabled(True)


def test_grad_mode_decorator_on_a_function_made_inside():
    def f(x):
        @torch.no_grad()
        def frozen(t):
            return t * 2, torch.is_grad_enabled()

        @torch.enable_grad()
        def live(t):
            return t * 3

        a, inside = frozen(x)
        with torch.no_grad():
            b = live(x)
        return a, inside, b, x * 4, torch.is_grad_enabled()

    check(f, lambda i: (torch.randn(3, requires_grad=True),), graphs=1, breaks=0)


def test_grad_mode_decorator_on_a_generator_is_left_to_python():
    def f(x):
        @torch.no_grad()
        def gen(t):
            yield t * 2
            yield torch.is_grad_enabled()

        return list(gen(x)), x * 3

    check(f, lambda i: (torch.randn(3, requires_grad=True),), calls=2)
