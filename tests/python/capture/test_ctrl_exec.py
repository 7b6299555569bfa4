"""The ATen executor runs ctrl.if / ctrl.loop (regions executed on demand),
on graphs built by hand through the capture GraphBuilder's region API (the
one the translator uses; see Note [Captured control flow])."""

import pytest
import torch

import xacc.jit  # noqa: F401  (registers the ATen ops)
from xacc._C import capture as C

T3 = ("tensor", "f32", [3], "cpu")


def _if_graph():
    """f(x, y) = x * 2 + y if any(x > 0) else x - y; y is captured by one arm only."""
    b = C.GraphBuilder("f")
    x = b.add_input(T3, "x")
    y = b.add_input(T3, "y")
    (gt,) = b.add_op("aten.gt.Scalar", [x], {"other": 0}, [("tensor", "bool", [3], "cpu")])
    (anyv,) = b.add_op("aten.any.default", [gt], {}, [("tensor", "bool", [], "cpu")])
    (c,) = b.add_op("aten.is_nonzero.default", [anyv], {}, ["bool"])
    b.begin_region("arm", [])
    (m,) = b.add_op("aten.mul.Tensor", [x], {"other": 2}, [T3])
    (t,) = b.add_op("aten.add.Tensor", [m, y], {}, [T3])
    h1 = b.end_region()
    b.begin_region("arm", [])
    (e,) = b.add_op("aten.sub.Tensor", [x, y], {}, [T3])
    h2 = b.end_region()
    (r,) = b.add_if(c, h1, h2, [t], [e])
    b.set_outputs([r])
    return b


def test_if_runs_the_arm_the_condition_picks():
    b = _if_graph()
    text = b.text()
    assert "ctrl.if(" in text and "^then" in text and "^else" in text
    g = b.compile("cpu")
    for x in (torch.tensor([1.0, -2.0, 3.0]), torch.tensor([-1.0, -2.0, -3.0])):
        y = torch.randn(3)
        want = x * 2 + y if (x > 0).any() else x - y
        got = g(x, y)
        got = got[0] if isinstance(got, (tuple, list)) else got
        assert torch.allclose(got, want)


def test_if_arms_must_yield_the_same_types():
    b = C.GraphBuilder("f")
    x = b.add_input(T3, "x")
    (s,) = b.add_op("aten.sum.default", [x], {}, [("tensor", "f32", [], "cpu")])
    (c,) = b.add_op("aten.is_nonzero.default", [s], {}, ["bool"])
    b.begin_region("arm", [])
    h1 = b.end_region()
    b.begin_region("arm", [])
    (e,) = b.add_op("aten.sum.default", [x], {}, [("tensor", "f32", [], "cpu")])
    h2 = b.end_region()
    with pytest.raises(ValueError, match="different types"):
        b.add_if(c, h1, h2, [x], [e])


def test_value_of_one_arm_is_not_visible_in_the_other():
    b = C.GraphBuilder("f")
    x = b.add_input(T3, "x")
    b.begin_region("arm", [])
    (m,) = b.add_op("aten.mul.Tensor", [x], {"other": 2}, [T3])
    b.end_region()
    b.begin_region("arm", [])
    with pytest.raises(ValueError, match="another region"):
        b.add_op("aten.neg.default", [m], {}, [T3])


def test_loop_carries_values_until_the_condition_fails():
    """while x.sum() < limit: x = x * 2 (limit captured), as one ctrl.loop."""
    b = C.GraphBuilder("f")
    x = b.add_input(T3, "x")
    limit = b.add_input(("tensor", "f32", [], "cpu"), "limit")
    (cx,) = b.begin_region("cond", [T3])
    (s,) = b.add_op("aten.sum.default", [cx], {}, [("tensor", "f32", [], "cpu")])
    (lt,) = b.add_op("aten.lt.Tensor", [s, limit], {}, [("tensor", "bool", [], "cpu")])
    (c,) = b.add_op("aten.is_nonzero.default", [lt], {}, ["bool"])
    hc = b.end_region()
    (bx,) = b.begin_region("body", [T3])
    (m,) = b.add_op("aten.mul.Tensor", [bx], {"other": 2}, [T3])
    hb = b.end_region()
    (r,) = b.add_loop([x], hc, hb, c, [m])
    b.set_outputs([r])
    assert "ctrl.loop(" in b.text()
    g = b.compile("cpu")
    x0 = torch.tensor([0.5, 1.0, 0.25])
    want = x0.clone()
    while want.sum() < 20:
        want = want * 2
    got = g(x0, torch.tensor(20.0))
    got = got[0] if isinstance(got, (tuple, list)) else got
    assert torch.allclose(got, want)
    # Zero iterations: the initial value comes back.
    got = g(x0, torch.tensor(0.0))
    got = got[0] if isinstance(got, (tuple, list)) else got
    assert torch.allclose(got, x0)


def test_if_gradients_flow_through_the_taken_arm():
    b = _if_graph()
    g = b.compile("cpu")
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.randn(3, requires_grad=True)
    out = g(x, y)
    out = out[0] if isinstance(out, (tuple, list)) else out
    out.sum().backward()
    assert torch.allclose(x.grad, torch.full((3,), 2.0))
    assert torch.allclose(y.grad, torch.ones(3))
