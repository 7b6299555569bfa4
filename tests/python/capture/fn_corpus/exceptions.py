"""try/except/finally, raise and assert in the ways PyTorch code uses them:
config lookups with fallbacks, validation that raises, optional features
probed with try, cleanup in finally (Note [Traced exceptions])."""

import torch

from . import T, V, case


@case(T)
def config_fallback_chain(x):
    cfg = {"hidden": 4}
    try:
        eps = cfg["eps"]
    except KeyError:
        eps = 1e-5
    return x / (x.norm() + eps)


@case(T)
def keyerror_as_name(x):
    table = {"relu": torch.relu}
    try:
        act = table["gelu"]
    except KeyError as err:
        act = torch.tanh
        name = err.args[0] if False else "tanh"
    return act(x), name


@case(V)
def indexerror_fallback(v):
    shapes = [v.shape[0]]
    try:
        second = shapes[1]
    except IndexError:
        second = 1
    return v.reshape(shapes[0], second)


@case(T)
def except_tuple_of_classes(x):
    opts = {"a": 1}
    try:
        k = opts["b"]
    except (TypeError, KeyError):
        k = 2
    return x * k


@case(T)
def try_else_branch(x):
    d = {"w": 3}
    try:
        w = d["w"]
    except KeyError:
        w = 0
    else:
        w = w + 1
    return x * w


@case(T)
def try_finally_no_exception(x):
    steps = []
    try:
        y = x + 1
        steps.append("body")
    finally:
        steps.append("finally")
    return y, steps


@case(T)
def finally_runs_on_caught_error(x):
    log = []
    try:
        try:
            log.append(x.sum())
            {}["missing"]
        finally:
            log.append(x.mean())
    except KeyError:
        log.append(x.max())
    return torch.stack(log)


class ShapeError(Exception):
    pass


def _check_square(t):
    if t.shape[0] != t.shape[1]:
        raise ShapeError("not square", t.shape[0], t.shape[1])
    return t


@case(T)
def user_exception_from_helper(x):
    try:
        y = _check_square(x[:, :5])
    except ShapeError:
        y = x
    return y.trace()


@case(T)
def raise_in_helper_caught_by_caller_base(x):
    try:
        _check_square(x[:3])
        ok = True
    except Exception:
        ok = False
    return x if ok else -x


@case(T)
def validation_raises(x):
    if x.dtype != torch.int64:
        raise TypeError(f"expected int64, got {x.dtype}")
    return x


@case(T)
def assert_fails(x):
    y = x.relu()
    assert y.shape[0] == 3, f"batch {y.shape[0]}"
    return y


@case(T)
def assert_passes(x):
    assert x.dim() == 2, "need a matrix"
    return x.t() @ x


@case(T)
def zero_division_fallback(x):
    n = 0
    try:
        scale = 10 / n
    except ZeroDivisionError:
        scale = 1.0
    return x * scale


@case(T)
def loop_with_try_per_item(x):
    weights = {"a": 1.0, "c": 3.0}
    total = x * 0
    for k in ("a", "b", "c"):
        try:
            total = total + x * weights[k]
        except KeyError:
            total = total - 1
    return total


@case(T)
def nested_function_raises_value_error(x):
    def parse(s):
        if not s.isdigit():
            raise ValueError(s)
        return int(s)

    try:
        n = parse("x3")
    except ValueError:
        n = 3
    return x * n


@case(T)
def dict_pop_missing_caught(x):
    d = {"a": x}
    try:
        v = d.pop("b")
    except KeyError:
        v = d.pop("a")
    return v + 1, d
