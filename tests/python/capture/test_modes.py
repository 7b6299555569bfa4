"""torch.autocast, torch.inference_mode and tensors made leaves inside a
captured frame (Note [Entry-guarded modes] in
csrc/lib/capture/translate/TranslateContext.cpp, Note [Tensors made leaves] in
xacc/_src/capture/host.py). Each was a break before (GB002 on the call, GB023
on the with). Compared with eager by the harness (values, requires_grad,
is_leaf, is_inference(), identity, exceptions); what cannot be reproduced
exactly (an inference tensor or a tensor made to require grad leaving the
graph, an autocast that casts) must still break."""

import pytest
import torch

from harness import check, compare_call, r

from xacc.jit import counters, jit, reset


# -- torch.autocast ------------------------------------------------------------------------


def test_autocast_disabled_is_captured_whole():
    def f(x):
        with torch.autocast("cpu", enabled=False):
            y = x @ x
            on = torch.is_autocast_enabled("cpu")
        return y.sum(), on

    check(f, r(6, 6), graphs=1, breaks=0)


def test_autocast_disabled_with_return_inside_and_keyword_device():
    def f(x):
        with torch.autocast(device_type="cpu", enabled=False) as ac:
            return x @ x.T + 1, ac is not None

    check(f, r(5, 5), graphs=1, breaks=0)


@pytest.mark.parametrize("kwargs", [{}, {"dtype": torch.bfloat16, "enabled": False},
                                    {"enabled": False, "cache_enabled": False}])
def test_autocast_that_casts_or_sets_state_still_breaks(kwargs):
    def f(x):
        with torch.autocast("cpu", **kwargs):
            y = x @ x
            dt = torch.get_autocast_dtype("cpu")
            cache = torch.is_autocast_cache_enabled()
        return y, dt, cache

    reset()
    c = check(f, r(4, 4), calls=2)
    assert c["breaks"] >= 1, c


def test_autocast_unknown_device_raises_eagers_error():
    def f(x):
        with torch.autocast("no_such_device", enabled=False):
            return x + 1

    reset()
    compare_call(f, jit(f), (torch.randn(3),))


def test_autocast_disabled_under_an_outer_autocast_runs_as_eager():
    def f(x):
        with torch.autocast("cpu", enabled=False):
            return x @ x

    reset()
    jf = jit(f)
    x = torch.randn(4, 4)
    assert torch.equal(jf(x), f(x))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        compare_call(f, jf, (x,))
        assert jf(x).dtype == f(x).dtype == torch.float32


# -- torch.inference_mode ------------------------------------------------------------------


def test_inference_mode_false_outside_inference_is_captured():
    def f(x):
        with torch.inference_mode(False):
            return x * 3

    check(f, r(4), graphs=1, breaks=0)


def test_inference_mode_false_enables_grad_in_a_no_grad_block():
    def f(x):
        with torch.no_grad():
            a = x * 2
            with torch.inference_mode(False):
                b = x * 3
                g = torch.is_grad_enabled()
        return a, b, g

    check(f, lambda i: (torch.randn(4, requires_grad=True),), graphs=1, breaks=0)


def test_inference_region_whose_tensors_stay_inside_is_captured():
    def f(x):
        with torch.inference_mode():
            y = x * 2
            inside = (torch.is_inference_mode_enabled(), y.is_inference(), x.is_inference(),
                      torch.is_grad_enabled(), y.requires_grad)
        return y.clone(), y.is_inference(), inside, torch.is_inference_mode_enabled()

    check(f, r(4), graphs=1, breaks=0)
    reset()
    check(f, lambda i: (torch.randn(4, requires_grad=True),), graphs=1, breaks=0)


def test_inference_tensor_returned_breaks_and_stays_an_inference_tensor():
    def f(x):
        with torch.inference_mode():
            y = x * 2
        return y, x + 1

    reset()
    jf = jit(f)
    out = compare_call(f, jf, (torch.randn(4),))
    assert out[0].is_inference() and not out[1].is_inference()
    assert counters()["breaks"] >= 1


def test_inplace_on_inference_tensor_outside_raises_eagers_error():
    def f(x):
        with torch.inference_mode():
            y = x * 2
        z = y.clone()
        y.add_(1)
        return z

    reset()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        f(torch.randn(3))
    compare_call(f, jit(f), (torch.randn(3),))


def test_inference_tensor_saved_for_backward_raises_eagers_error():
    def f(x, w):
        with torch.inference_mode():
            y = x * 2
        return (y * w).sum()

    reset()
    args = (torch.randn(3), torch.randn(3, requires_grad=True))
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        f(*args)
    compare_call(f, jit(f), args)


def test_inference_mode_entered_by_the_caller_is_guarded():
    def f(x):
        with torch.inference_mode(False):
            y = x * 3
        return y, y.is_inference()

    reset()
    jf = jit(f)
    x = torch.randn(4)
    compare_call(f, jf, (x,))
    with torch.inference_mode():
        xi = torch.randn(4)
        e, g = f(xi), jf(xi)
    assert e[1] == g[1] and e[0].is_inference() == g[0].is_inference()
    assert torch.equal(e[0], g[0])


# -- requires_grad_ / is_leaf / grad_fn -----------------------------------------------------


def test_made_leaf_facts_are_captured():
    def f(x):
        w = x.detach().clone().requires_grad_()
        v = w * 2
        with torch.no_grad():
            u = w * 3
        return w.is_leaf, w.requires_grad, w.grad_fn is None, v.is_leaf, v.requires_grad, \
            u.is_leaf, u.requires_grad, u.grad_fn is None, v.detach(), u

    check(f, r(4), graphs=1, breaks=0)


def test_grad_fn_object_of_a_made_tensor_is_left_to_python():
    def f(x):
        w = x.clone().requires_grad_()
        v = w * 2
        return v.grad_fn is None, type(v.grad_fn).__name__, v.detach()

    reset()
    c = check(f, r(4), calls=2)
    assert c["breaks"] >= 1 and c["internal_errors"] == 0, c


def test_made_leaf_that_leaves_the_graph_is_a_leaf_requiring_grad():
    def f(x):
        w = x.clone().requires_grad_(True)
        return w, w * 2

    reset()
    out = compare_call(f, jit(f), (torch.randn(4),))
    assert out[0].is_leaf and out[0].requires_grad and not out[1].is_leaf
    assert counters()["breaks"] >= 1


def test_requires_grad_on_a_non_leaf_raises_eagers_error():
    def f(x):
        y = x * 2
        y.requires_grad_(False)
        return y

    reset()
    compare_call(f, jit(f), (torch.randn(3, requires_grad=True),))


def test_is_leaf_of_a_non_leaf_input():
    def f(x):
        return x.is_leaf, x.grad_fn is None, x + 1

    reset()
    jf = jit(f)
    a = torch.randn(3, requires_grad=True)
    for x in (torch.randn(3), a * 2, a, a * 3):  # the harness's clones would all be leaves
        e, g = f(x), jf(x)
        assert e[:2] == g[:2], (e[:2], g[:2])
        assert torch.equal(e[2], g[2]) and e[2].requires_grad == g[2].requires_grad


def test_a_view_made_under_no_grad_comes_back_made_under_no_grad():
    # Note [Returned views]: rebuilt from its input under no_grad, as eager made it
    # (a leaf that requires grad, whose in-place update under grad eager refuses).
    def f(x):
        with torch.no_grad():
            y = x.view(-1)
        return y, x * 2

    reset()
    x = torch.randn(2, 3, requires_grad=True)
    y, _ = jit(f)(x)
    assert y._base is x and y.requires_grad and y.is_leaf
    with pytest.raises(RuntimeError, match="created in no_grad mode"):
        y.add_(1)


def test_inference_mode_guard_is_dumped_and_rebuilt_for_aot():
    from xacc._C import capture as C
    from xacc._src.aot import codec

    tree = C.GuardTree()
    tree.set_inference_mode(False)
    dump = tree.dump()
    assert "inference mode disabled" in codec.rebuild_tree(dump).describe()
    # Stores written before the mode-stack guard (Note [Mode stacks]) are refused: captured again.
    with pytest.raises(codec.Unresolvable, match="mode-stack guard"):
        codec.rebuild_tree(dump[:6])
    tree.set_modes((), 0)
    assert "torch function modes [], 0 dispatch modes" in codec.rebuild_tree(tree.dump()).describe()
