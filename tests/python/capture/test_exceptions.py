"""Exceptions raised and caught inside traced code (Note [Traced exceptions] in
csrc/lib/capture/translate/TranslateExceptions.cpp): a raise the translator
knows exactly (a missing dict key, an index out of range, `raise E(args)` of a
plain exception class, a failed assert) jumps to the handler the 3.11
exception table names, inside the graph; an exception that leaves the
captured frame ends it as in eager (the graph runs the code before it, Python
raises the same exception, with a traceback at the user's line) and is not
counted as a break. Every case is compared with eager (harness.compare_call:
values, types, identity, exceptions, mutated inputs) over three calls.

PYTEST_DONT_REWRITE: `failed_assert` must run Python's own assert.
"""

import sys
import traceback

import torch
from harness import check, compare_call

from xacc.jit import counters, jit, reset


def r(i):
    return (torch.randn(4, 4),)


def key_error_same_frame(x):
    d = {"a": 2}
    try:
        s = d["b"]
    except KeyError:
        s = 3
    return x * d["a"] + s


def nested_handlers(x):
    cfg = {"scale": 2}
    try:
        try:
            s = cfg["shift"]
        except KeyError:
            s = cfg["offset"]  # raises again, inside the inner handler
    except KeyError:
        s = -1
    return x * cfg["scale"] + s


def lookup(d, k):
    return d[k]


def caught_in_caller(x):
    y = x.sin()
    try:
        s = lookup({"a": 1}, "b")
    except KeyError:
        s = 5
    return y + s


def tuple_match_as_name(x):
    items = [x, x * 2]
    try:
        v = items[7]
    except (KeyError, IndexError) as e:  # the name is bound and deleted after
        v = x - 1
    return v.cos()


class MyError(Exception):
    pass


def user_exception_class(x):
    y = x + 1
    try:
        if y.dim() == 2:
            raise MyError("two dims", 2)
        z = y
    except MyError:
        z = y * 10
    return z


def constants_raise(x):
    try:
        k = 1 // 0
    except ZeroDivisionError:
        k = 4
    return x * k


def try_finally_with_exception(x):
    out = []
    try:
        try:
            out.append(x + 1)
            (1, 2)[5]
        finally:
            out.append(x + 2)
    except IndexError:
        out.append(x + 3)
    return out


@torch.no_grad()
def no_grad_lookup(d):
    return d["w"]


def caught_after_grad_decorator(x):
    try:
        s = no_grad_lookup({"v": 1})
    except KeyError:
        s = 0
    return x * 2 + s


def test_caught_in_the_graph_without_a_break():
    for fn in (key_error_same_frame, nested_handlers, caught_in_caller, tuple_match_as_name, user_exception_class,
               constants_raise, try_finally_with_exception):
        reset()
        check(fn, r, graphs=1, breaks=0)


def test_grad_decorator_between_raise_and_handler_is_eager_equal():
    # The grad-mode decorator's state is not undone by a failure: the
    # exception is not caught in the graph, and the result stays eager's.
    reset()
    x = torch.randn(3, requires_grad=True)
    got = compare_call(caught_after_grad_decorator, jit(caught_after_grad_decorator), (x,))
    assert got.requires_grad


def keyed(x, d):
    try:
        s = d["k"]
    except KeyError:
        s = 0
    return x + s


def test_input_dict_with_and_without_the_key():
    # The graph caught a KeyError for a dict passed in: a call with the key
    # present must not reuse it (guards on the dict's keys).
    reset()
    j = jit(keyed)
    x = torch.randn(3)
    for d in ({"j": 1}, {"k": 7}, {"j": 1}, {"k": 9}):
        compare_call(keyed, j, (x, d))


def raise_after_graph(x, log):
    y = x * 2
    log.append("before")
    if y.dim() != 3:
        raise ValueError(f"expected 3 dims, got {y.dim()}", y.dim())
    return y


def failed_assert(x):
    y = x.exp()
    assert y.dim() == 3, "need a batch"
    return y


def test_exception_leaving_the_frame_is_no_break():
    for fn, args in ((raise_after_graph, lambda i: (torch.randn(4, 4), [])), (failed_assert, r)):
        reset()
        check(fn, args, graphs=1, breaks=0)


def _last_frame(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        f = traceback.extract_tb(e.__traceback__)[-1]
        return type(e), e.args, f.lineno, f.line
    raise AssertionError("no exception")


def test_traceback_points_at_the_user_line():
    reset()
    x = torch.randn(4, 4)
    eager = _last_frame(raise_after_graph, x, [])
    got = _last_frame(jit(raise_after_graph), x, [])
    assert got == eager, (got, eager)
    assert counters()["graphs"] == 1


class InitError(Exception):
    def __init__(self, what):
        super().__init__(f"bad {what}")
        self.what = what


def own_init_exception(x):
    try:
        raise InitError("x")
    except InitError as e:
        return x + len(e.args)


def bare_reraise(x):
    try:
        try:
            raise ValueError("v")
        except ValueError:
            raise
    except ValueError:
        return x - 1


def unmatched_handler(x):
    try:
        return {"a": 1}["b"] * x
    except IndexError:
        return x


def test_what_is_not_modelled_stays_eager_equal():
    # Exception classes with their own __init__, bare `raise`, a handler that
    # does not match: the frame breaks (or runs in Python), never a wrong result.
    for fn in (own_init_exception, bare_reraise, unmatched_handler):
        reset()
        c = check(fn, r)
        assert c["breaks"] >= 1, (fn.__name__, c)


def test_exception_type_args_and_identity_of_a_fresh_raise():
    reset()
    x = torch.randn(4, 4)
    j = jit(raise_after_graph)
    seen = []
    for _ in range(2):
        try:
            j(x, [])
        except ValueError as e:
            seen.append(e)
    assert [e.args for e in seen] == [("expected 3 dims, got 2", 2)] * 2
    assert seen[0] is not seen[1]  # a new exception per call, as in eager
    assert sys.getrefcount(seen[0]) > 0


def _gen_raises(x):
    yield x
    raise KeyError("k")


def _consume(g):
    out = []
    try:
        for v in g:
            out.append(v + 1)
    except KeyError:
        out.append(None)  # the consumer catches it, not the frame that made the generator
    return out


def generator_raise_reaches_its_consumer(x):
    g = _gen_raises(x)
    try:
        out = _consume(g)
    except KeyError:
        out = "maker"
    return out


def test_generator_exception_goes_to_the_frame_that_resumes_it():
    reset()
    check(generator_raise_reaches_its_consumer, r)
