"""The instance dict of an object made in the frame (`obj.__dict__`, `vars(obj)`;
Note [Instance dicts] in csrc/lib/capture/translate/TranslateVars.cpp): its type
is dict, and its keys/values/items views are live views of the object's
attributes, as in Python; `copy.deepcopy(obj.__dict__)` (how configuration
classes serialize themselves) iterates one. Each was a break before
(GB010/GB011: `.items` or type() of the view); each is compared with eager."""

import copy

import torch

from harness import check, r


class Config:
    def __init__(self, width, sizes):
        self.width = width
        self.sizes = sizes
        self.name = "cfg"


def test_type_and_views_of_the_instance_dict():
    def f(x):
        c = Config(3, [1, 2])
        d = c.__dict__
        seen = []
        for k, v in d.items():
            if k == "width":
                c.name = "renamed"  # a later entry's new value is seen, as in Python
            seen.append((k, v))
        return (x * c.width, type(d) is dict, isinstance(vars(c), dict), seen, list(d.keys()), list(d.values()),
                "sizes" in d.keys(), "other" in vars(c).keys(), len(d.items()))

    check(f, r(3), graphs=1, breaks=0)


def test_deepcopy_of_the_instance_dict():
    def f(x):
        c = Config(2, [1, [2]])
        out = copy.deepcopy(c.__dict__)
        out["sizes"][1].append(3)
        out.pop("name")
        return x + c.width, out, c.sizes, out["sizes"] is c.sizes, type(out)

    check(f, r(3), graphs=1, breaks=0)


def test_a_view_returned_is_the_rebuilt_objects():
    def f(x):
        c = Config(4, [5])
        return x + 1, c, c.__dict__.items(), vars(c).keys()

    check(f, r(3), graphs=1, breaks=0)
