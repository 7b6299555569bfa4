"""copy.copy / copy.deepcopy of instances where Lib/copy.py and object.__reduce_ex__
look a protocol method up on the instance, not on its class, or consult a
table the program can change (Note [Copies of instances] in
xacc/_src/capture/polyfills_copy.py). Each case compares with eager; what the
reference does not model is left to Python (a break), never guessed."""

import copy
import copyreg

import torch

from harness import check, r


class Plain:
    def __init__(self, n):
        self.n = n
        self.items = [n]


def _custom_reduce_ex(protocol):
    return (Plain, (99,))


def test_instance_dict_reduce_ex():
    def f(x):
        a = Plain(2)
        a.__reduce_ex__ = _custom_reduce_ex
        c = copy.deepcopy(a)
        s = copy.copy(a)
        return x * c.n, c.n, s.n, c.items, s.items

    check(f, r(3))


def _custom_getstate():
    return {"n": 7, "items": ["from instance getstate"]}


def test_instance_dict_getstate():
    def f(x):
        a = Plain(2)
        a.__getstate__ = _custom_getstate
        c = copy.deepcopy(a)
        s = copy.copy(a)
        return x * c.n, c.n, c.items, s.n, s.items

    check(f, r(3))


class WithNewArgs:
    def __new__(cls, *args):
        o = super().__new__(cls)
        o.args = args
        return o

    def __init__(self, v):
        self.v = v


def _newargs():
    return (5, 6)


def test_instance_dict_getnewargs():
    def f(x):
        a = WithNewArgs(1)
        a.__getnewargs__ = _newargs
        c = copy.deepcopy(a)
        return x + 1, c.args, c.v

    check(f, r(3))


class Answers:
    """__getattr__ answers every missing name, __getnewargs_ex__ included."""

    def __init__(self):
        self.n = 1

    def __getattr__(self, name):
        if name == "__getnewargs_ex__":
            return lambda: ((), {})
        raise AttributeError(name)


def test_getattr_answering_protocol_names():
    def f(x):
        a = Answers()
        c = copy.deepcopy(a)
        return x + c.n, c.n

    check(f, r(3))


class NoSetstate(Plain):
    __setstate__ = None


def test_setstate_none_raises_as_in_eager():
    def f(x):
        a = NoSetstate(2)
        c = copy.deepcopy(a)
        return x + 1, c.n

    check(f, r(3))


class ListState(Plain):
    def __getstate__(self):
        return [("n", self.n + 1), ("items", self.items)]


class StrState(Plain):
    def __getstate__(self):
        return "abc"


class PairState(Plain):
    def __getstate__(self):
        return ({"n": 3}, {"extra": 4})


def test_getstate_returning_non_dicts():
    def lst(x):
        c = copy.deepcopy(ListState(2))
        s = copy.copy(ListState(5))
        return x + 1, c.n, c.items, s.n

    def string(x):
        c = copy.deepcopy(StrState(2))
        return x + 1, c.n

    def pair(x):
        c = copy.deepcopy(PairState(2))
        return x + 1, c.n, c.extra

    for fn in (lst, string, pair):
        check(fn, r(3))


class Registered:
    def __init__(self, n):
        self.n = n


copyreg.pickle(Registered, lambda o: (Registered, (o.n * 100,)))


class InDispatch:
    def __init__(self, n):
        self.n = n


copy._deepcopy_dispatch[InDispatch] = lambda o, memo: InDispatch(o.n + 1000)
copy._copy_dispatch[InDispatch] = lambda o: InDispatch(o.n + 2000)


def test_copyreg_and_copy_dispatch_tables():
    def f(x):
        a = Registered(2)
        b = InDispatch(3)
        return x + 1, copy.deepcopy(a).n, copy.copy(a).n, copy.deepcopy(b).n, copy.copy(b).n

    check(f, r(3))


class Slots:
    __slots__ = ("a", "b", "__weakref__")

    def __init__(self, a):
        self.a = a


class SlotsAndDict(Slots):
    def __init__(self, a):
        super().__init__(a)
        self.d = [a]


def test_slots():
    def f(x):
        s = Slots([1])
        t = SlotsAndDict([2])
        t.b = t.d
        c = copy.deepcopy(s)
        d = copy.deepcopy(t)
        e = copy.copy(t)
        return x + 1, c.a, hasattr(c, "b"), d.a, d.b, d.d, d.b is d.d, e.b is t.b

    check(f, r(3))


def test_an_object_referring_to_itself():
    def f(x):
        a = Plain(1)
        a.me = a
        a.items.append(a)
        c = copy.deepcopy(a)
        return x + 1, c.me is c, c.items[1] is c, c is a, c.n, c.items is a.items

    check(f, r(3))


class MyList(list):
    def __init__(self, *a):
        super().__init__(*a)
        self.tag = ["t"]


class MyDict(dict):
    def __init__(self, *a):
        super().__init__(*a)
        self.tag = ["u"]


def test_subclasses_of_list_and_dict_with_attributes():
    def f(x):
        l = MyList([1, [2]])
        d = MyDict({"a": [1]})
        cl, cd = copy.deepcopy(l), copy.deepcopy(d)
        sl, sd = copy.copy(l), copy.copy(d)
        return x + 1, cl, cd, sl, sd, type(cl), cl.tag, cd.tag, sl.tag is l.tag, cl[1] is l[1], sd["a"] is d["a"]

    check(f, r(3))


def test_instance_dict_deepcopy():
    def f(x):
        a = Plain(1)
        a.__deepcopy__ = lambda memo: "instance deepcopy"
        a.__copy__ = lambda: "instance copy (not used: copy looks on the class)"
        return x + 1, copy.deepcopy(a), copy.copy(a).n

    check(f, r(3))
