"""Lists and dicts passed in from outside that the captured function mutates
(Note [Replayed container mutation] in csrc/lib/capture/translate/Translator.h):
no graph break; after the graph the caller's own container holds what eager
leaves in it (the harness compares the arguments after the call and their
identity), and one container reached twice is one value."""

import torch

from harness import check, compare_call
from xacc.jit import counters, jit


def test_append_and_len_of_an_input_list():
    def f(x, xs):
        xs.append(4)
        xs += [5]
        return x * len(xs)

    check(f, lambda i: (torch.randn(3), [1, 2, 3]), graphs=1, breaks=0)


def test_setitem_update_pop_on_an_input_dict():
    def f(x, d):
        d["b"] = x * 2
        d.update(c=3)
        old = d.pop("a")
        return x * len(d) + old, d

    check(f, lambda i: (torch.randn(3), {"a": 1}), graphs=1, breaks=0)


def test_value_read_before_the_mutation_is_kept():
    def f(x, xs):
        first = xs[0]
        xs.insert(0, x + 1)
        xs[1] = first * 3
        return first, xs[0], xs

    check(f, lambda i: (torch.randn(3), [torch.randn(3), torch.randn(3)]), graphs=1, breaks=0)


def test_nested_containers_mutated():
    def f(x, cfg):
        cfg["hist"].append(x.sum())
        cfg["n"] = cfg["n"] + 1
        return x * cfg["n"]

    check(f, lambda i: (torch.randn(3), {"n": 1, "hist": [torch.zeros(())]}), graphs=1, breaks=0)


def test_one_list_passed_twice_is_one_value():
    def f(x, a, b):
        a.append(x)
        return len(b), b[-1] + 1

    jfn = jit(f)
    for n in range(3):
        lst = [1]
        x = torch.randn(2)
        got = jfn(x, lst, lst)
        exp_lst = [1]
        exp = f(x, exp_lst, exp_lst)
        assert got[0] == exp[0] == 2 and torch.equal(got[1], exp[1])
        assert len(lst) == 2 and lst[1] is x
    # ... and distinct lists are not merged by the graph made for one list
    a, b = [1], [7, torch.ones(2)]
    x = torch.randn(2)
    got = jfn(x, a, b)
    assert got[0] == 2 and torch.equal(got[1], torch.ones(2) + 1) and a[1] is x and len(b) == 2
    assert counters()["internal_errors"] == 0


def test_mutation_then_graph_break():
    def f(x, xs):
        xs.append(x * 2)
        print("between")
        xs.append(len(xs))
        return xs[-2] + 1

    check(f, lambda i: (torch.randn(3), [0]), min_graphs=1)


class Cache(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = {}
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        y = self.lin(x)
        self.seen["last"] = y
        return y


def test_module_attribute_dict_written():
    torch.manual_seed(0)
    m1 = Cache()
    m2 = Cache()
    m2.load_state_dict(m1.state_dict())
    jfn = jit(m2)
    for _ in range(2):
        x = torch.randn(2, 3)
        a, b = m1(x), jfn(x)
        torch.testing.assert_close(a, b)
        assert m2.seen["last"] is b
    assert counters()["breaks"] == 0


def test_mutation_before_an_attribute_that_raises_is_kept():
    """`d.move_to_end` on a plain dict raises AttributeError after `d["new"]`
    was stored: the caller's dict must hold "new", as in eager. The break is
    at the attribute load, so the replay runs before Python raises (it used to
    run after the rebuilt `d.move_to_end`, which raised first: "new" lost)."""
    def f(d, xs, x):
        d["new"] = x + 1
        xs.append(x * 2)
        d.move_to_end("a")
        return d

    check(f, lambda i: ({"a": 1, "b": 2}, list(range(i)), torch.randn(3)), max_recompiles=2)


def test_mutation_before_a_missing_list_method_is_kept():
    def f(xs, x):
        xs.append(x + 1)
        xs.add(x)  # lists have no .add: AttributeError after the append
        return xs

    check(f, lambda i: ([torch.zeros(1)], torch.randn(3)))
