"""Subclasses of collections.UserDict and UserList built inside traced code:
their methods are plain Python over the instance's `data` (a dict or list), so
the translator inlines them (isUserFunction) and the object is a UserObject
whose `data` is a tracked container. transformers' KVSharingDict (a UserDict
the layers of mistral_large4 fill and read) broke with GB002 `__init__ is a
function` before. Each case compares with eager on values, types, identity and
mutated inputs (harness.check)."""

from collections import UserDict, UserList

import torch

from harness import check, r


class _Shared(UserDict):
    def to(self, device):
        for k in list(self.keys()):
            self[k] = tuple(v.to(device) for v in self[k])
        return self


class _WithMissing(UserDict):
    def __missing__(self, key):
        return len(key)


class _Items(UserList):
    pass


def test_user_dict_subclass_filled_read_and_returned():
    def f(x):
        s = _Shared()
        s["rope"] = (x, x + 1)
        k, v = s["rope"]
        s.update(nope=(x * 2,))
        t = s.to("cpu")
        # (the harness compares a UserDict with ==, Mapping's: its tensor values are returned through .data)
        return type(s), t is s, k * v, len(s), "rope" in s, "x" in s, list(s), s.get("nope"), s.get("y", 3), s.data

    def returned(x):
        s = _Shared(a=1)
        s["n"] = 2
        return s, s.data, x + len(s)

    check(f, r(3, 4), graphs=1, breaks=0)
    from xacc.jit import reset
    reset()
    check(returned, r(3), graphs=1, breaks=0)


def test_user_dict_init_arguments_and_missing():
    def f(x):
        a = _Shared({"a": x}, b=x + 1)
        m = _WithMissing(q=x)
        return a.data, m["abc"], m["q"] * 2, dict(a.items()), isinstance(a, dict), isinstance(a, UserDict)

    check(f, r(3), graphs=1, breaks=0)


def test_user_dict_missing_key_raises_as_in_eager():
    def f(x):
        s = _Shared(a=x)
        try:
            return s["b"]
        except KeyError as e:
            return x + len(e.args)

    check(f, r(3), min_graphs=0, max_recompiles=3)


def test_user_list_subclass():
    def f(x):
        items = _Items([x])
        items.append(x + 1)
        items.extend([x * 2])
        return type(items), len(items), items[1] + items[-1], items.data, isinstance(items, list)

    check(f, r(3), graphs=1, breaks=0)
