"""Identity and reconstruction: what a captured function returns is the same
objects, views and containers eager Python returns (issues #18 and #19).
Every case runs through the harness (values, types, identity, aliasing,
printed output, exceptions, mutated inputs) and then checks the one thing the
caller would trip over by hand."""

import gc

import pytest
import torch

from harness import check, compare_call, r, r2
from xacc._C import capture as C
from xacc.jit import jit

DEVICES = ["cpu"] + (["xpu0"] if C.device_available("xpu0") else [])


# -- distinct outputs stay distinct (CSE must not merge outputs) -------------

def two_equal_sums(a, b):
    x = a + b
    y = a + b
    return x, y


@pytest.mark.parametrize("device", DEVICES)
def test_equal_outputs_stay_distinct_tensors(device):
    check(two_equal_sums, r2(3, 4), graphs=1, device=device)
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    x, y = jit(two_equal_sums, device=device)(a, b)
    assert x is not y
    before = y.clone()
    x.add_(1)
    assert torch.equal(y, before), "mutating one output changed the other"


def output_and_its_copy(a):
    y = a * 2
    return y, y.clone(), y


def test_one_output_twice_is_one_object_and_a_clone_is_another():
    check(output_and_its_copy, r(5), graphs=1)
    y0, c, y1 = jit(output_and_its_copy)(torch.randn(5))
    assert y0 is y1 and c is not y0


# -- containers keep their identity -----------------------------------------

def shared_list(x, y):
    z = [x + y, y]
    return {"z": z, "b": z}


def test_one_list_under_two_keys_is_one_list():
    check(shared_list, r2(3))
    out = jit(shared_list)(torch.randn(3), torch.randn(3))
    assert out["z"] is out["b"]
    out["z"].append(1)
    assert len(out["b"]) == 3


def shared_list_across_a_break(x):
    z = [x + 1]
    print("break")
    z.append(x * 2)
    return z, z


def test_one_list_stays_one_list_across_a_break():
    check(shared_list_across_a_break, r(3))
    z0, z1 = jit(shared_list_across_a_break)(torch.randn(3))
    assert z0 is z1


def list_input_returned(x, lst):
    return lst, x + 1


def test_a_list_passed_in_comes_back_as_that_list():
    check(list_input_returned, lambda i: (torch.randn(2), [torch.randn(2), 3]))


def list_input_appended(x, lst):
    lst.append(x * 2)
    return x + 1


def test_a_list_passed_in_is_mutated_in_place():
    check(list_input_appended, lambda i: (torch.randn(2), [torch.randn(2)]))
    lst = [1]
    jit(list_input_appended)(torch.randn(2), lst)
    assert len(lst) == 2


# -- dict views are live ----------------------------------------------------

def views_then_store(x):
    d = {1: x, 2: x + 1}
    keys, values, items = d.keys(), d.values(), d.items()
    d[4] = x * 2
    return x * len(values), 4 in keys, len(items), list(keys), [k for k, _ in items], sum(values)


def test_dict_views_see_later_stores():
    check(views_then_store, r(3))
    out = jit(views_then_store)(torch.ones(3))
    assert torch.equal(out[0], torch.full((3,), 3.0))
    assert out[1] is True and out[2] == 3 and out[3] == [1, 2, 4] and out[4] == [1, 2, 4]


def items_updated_while_iterating(x):
    d = {"a": x, "b": x + 1}
    seen = []
    for k, v in d.items():
        d["b"] = v * 10  # the next item is read after this store
        seen.append(v)
    return seen, list(d.values())


def test_iterating_a_dict_view_sees_stores_made_meanwhile():
    check(items_updated_while_iterating, r(3))
    x = torch.ones(3)
    seen, _ = jit(items_updated_while_iterating)(x)
    assert torch.equal(seen[1], x * 10)


def view_returned(x):
    d = {"a": x + 1}
    keys = d.keys()
    d["b"] = x
    return keys, d.values(), d.items()


def test_a_returned_dict_view_is_a_view_of_the_dict():
    check(view_returned, r(2))
    keys, values, items = jit(view_returned)(torch.randn(2))
    assert type(keys) is type({}.keys()) and list(keys) == ["a", "b"]
    d, = gc.get_referents(keys.mapping)  # the dict behind the read-only proxy
    assert gc.get_referents(values.mapping) == [d] and gc.get_referents(items.mapping) == [d]
    d["c"] = 1
    assert list(keys) == ["a", "b", "c"]


# -- Tensor.type ------------------------------------------------------------

def type_names(x):
    h = x.to(torch.float16)
    return h.type(), x.type(), x.long().type()


def type_conversions(x):
    m = x.to(torch.float64)
    return (x.type(torch.HalfTensor), x.type("torch.HalfTensor"), x.type(m.type()), x.type(torch.int32),
            x.type(x.type()))


def test_tensor_type_without_arguments_is_the_type_name():
    check(type_names, r(3))
    assert jit(type_names)(torch.randn(3)) == ("torch.HalfTensor", "torch.FloatTensor", "torch.LongTensor")


def test_tensor_type_converts_like_eager():
    check(type_conversions, r(3))
    x = torch.randn(3)
    out = jit(type_conversions)(x)
    assert [t.dtype for t in out] == [torch.float16, torch.float16, torch.float64, torch.int32, torch.float32]
    assert out[4] is x  # the same type: Tensor.type returns the tensor itself


# -- locals(), views of inputs, returned inputs, requires_grad_ -------------

def uses_locals(x):
    y = x + 1
    names = locals()
    z = y * 2
    return names, z


def test_locals_is_the_frames_locals():
    check(uses_locals, r(3))
    names, _ = jit(uses_locals)(torch.randn(3))
    assert sorted(names) == ["x", "y"]


def returns_views(x):
    return x.view(-1), x[0], x.t(), x + 1


def test_a_returned_view_of_an_input_is_a_view_of_that_input():
    check(returns_views, r(2, 3))
    x = torch.randn(2, 3)
    flat, row, tr, _ = jit(returns_views)(x)
    assert flat._base is x and row._base is x and tr._base is x
    flat.add_(1)
    assert torch.equal(x.view(-1), flat)


def view_made_without_grad(x):
    with torch.no_grad():
        y = x.view(-1)
    return y, x * 2


def test_a_view_of_an_input_that_requires_grad_is_a_view_of_it():
    check(view_made_without_grad, lambda i: (torch.randn(2, 3, requires_grad=True),))
    x = torch.randn(2, 3, requires_grad=True)
    y, _ = jit(view_made_without_grad)(x)
    assert y._base is x and y.requires_grad


def returns_input(x, w):
    return x, w, x * w


def test_a_returned_input_that_requires_grad_is_that_input():
    make = lambda i: (torch.randn(3, requires_grad=True), torch.randn(3))  # noqa: E731
    check(returns_input, make)
    x, w = make(0)
    out = jit(returns_input)(x, w)
    assert out[0] is x and out[1] is w


def test_a_returned_parameter_is_that_parameter():
    make = lambda i: (torch.nn.Parameter(torch.randn(3)), torch.randn(3))  # noqa: E731
    check(returns_input, make)
    p, w = make(0)
    out = jit(returns_input)(p, w)
    assert out[0] is p and type(out[0]) is torch.nn.Parameter


def parameter_checks(p, x):
    return isinstance(p, torch.nn.Parameter), type(p) is torch.nn.Parameter, type(x) is torch.Tensor, p * x


def test_a_parameter_passed_in_is_a_parameter_to_the_code():
    check(parameter_checks, lambda i: (torch.nn.Parameter(torch.randn(3)), torch.randn(3)))
    out = jit(parameter_checks)(torch.nn.Parameter(torch.randn(3)), torch.randn(3))
    assert out[:3] == (True, True, True)


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        return self.w, x * self.w


def test_a_module_parameter_returned_is_the_parameter():
    m = Scale()
    w, _ = jit(m)(torch.randn(3))
    assert w is m.w


def sets_requires_grad(x):
    x.requires_grad_()
    return x * 2


def test_requires_grad_set_inside_is_set_on_the_input():
    check(sets_requires_grad, r(3))
    x = torch.randn(3)
    y = jit(sets_requires_grad)(x)
    assert x.requires_grad and y.requires_grad


def test_compare_call_catches_merged_outputs():
    # The harness itself: one object where eager has two is an error.
    def eager(a):
        return a + 1, a + 1

    def merged(a):
        t = a + 1
        return t, t

    try:
        compare_call(eager, merged, (torch.randn(2),))
    except AssertionError as e:
        assert "merged" in str(e)
    else:
        raise AssertionError("the harness accepted one object for two")
