"""Each break is reported with the row of GraphBreaks.def that says what
happened: a `with` on a context manager the translator does not model is
GB023 (not GB014, which is a break inside try/with), an operation that raises
in Python is GB024 (not GB011, an unsupported type), a value the split cannot
rebuild is GB025; results and exceptions stay those of eager Python."""

import threading

import torch

from xacc.explain import explain
from xacc._src.capture import convert
from xacc.jit import jit, reset


class Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def with_user_ctx(x):
    y = x * 2
    with Ctx():
        y = y + 1
    return y.sin()


LOCK = threading.Lock()


def with_lock(x):
    y = x * 2
    with LOCK:  # a context manager written in C: not modeled
        y = y + 1
    return y.sin()


def enable_grad_inside(x):
    with torch.enable_grad():
        return x * 2


def index_error_caught(x):
    try:
        return x * (1, 2)[5]
    except IndexError:
        return x + 1


def lookup(d, k):
    return d[k]


def key_error_caught(x):
    y = x * 2
    try:
        return y * lookup({"a": 1}, "b")
    except KeyError:
        return y + 1


def builtin_error_caught(x):
    try:
        return x * range(1.5)[0]  # TypeError: a float is not an integer
    except TypeError:
        return x - 1


def codes(fn, *args):
    return [(b.code, b.detail) for b in explain(fn)(*args).break_reasons]


def same(fn, *args):
    assert torch.equal(jit(fn)(*args), fn(*args))


def test_unmodeled_context_manager_is_gb023():
    x = torch.randn(3)
    assert codes(with_lock, x)[0] == ("GB023", "with statement on a value that is not a context manager "
                                               "the translator models")
    same(with_lock, x)
    # A context manager written in Python is modeled (Note [Context managers]): no break.
    assert codes(with_user_ctx, x) == []
    same(with_user_ctx, x)


def test_grad_mode_the_host_cannot_express_is_gb023():
    x = torch.randn(3)
    with torch.no_grad():
        got = codes(enable_grad_inside, x)
        same(enable_grad_inside, x)
    assert got[0] == ("GB023", "torch.enable_grad() in a frame running without grad"), got
    # The `with` block around the break cannot be rebuilt at the split.
    assert [c for c, _ in got[1:]] == ["GB025"], got


def index_error_uncaught(x):
    try:
        return x * (1, 2)[5]
    except KeyError:  # does not match: the IndexError leaves the try
        return x + 1


def test_operation_that_raises_is_gb024():
    x = torch.randn(3)
    # Raised inside a try whose handler does not catch it: a break there.
    reset()
    try:
        jit(index_error_uncaught)(x)
    except IndexError:
        pass
    got = [(b.code, b.detail) for ev in convert.EVENTS for b in ev.breaks]
    assert got and got[0][0] == "GB024" and "IndexError" in got[0][1], got
    # Raised by a builtin the translator does not raise itself.
    got = codes(builtin_error_caught, x)
    assert got[0][0] == "GB024" and got[0][1].startswith("range(): TypeError"), got
    # Note [Traced exceptions]: caught by a handler of the frame, or of the
    # caller of an inlined function, they are no break at all.
    assert codes(index_error_caught, x) == []
    assert codes(key_error_caught, x) == []
    for fn in (index_error_caught, key_error_caught, builtin_error_caught):
        same(fn, x)
    try:
        index_error_uncaught(x)
    except IndexError as e:
        eager = e
    try:
        jit(index_error_uncaught)(x)
    except IndexError as e:
        assert e.args == eager.args
    else:
        raise AssertionError("no IndexError under xacc")
