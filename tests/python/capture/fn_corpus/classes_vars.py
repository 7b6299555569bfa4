"""vars(obj) and obj.__dict__ of objects made in the function: reading
configs back as dicts, copying attributes, checking what was set."""

import torch

from . import T, case


class Config:
    dropout = 0.0

    def __init__(self, hidden, heads):
        self.hidden = hidden
        self.heads = heads


@case(T)
def vars_len_and_keys_membership(x):
    c = Config(10, 2)
    d = vars(c)
    return x * len(d), "hidden" in d, "dropout" in d


@case(T)
def dict_attr_get_default(x):
    c = Config(10, 2)
    return x * c.__dict__.get("dropout", 0.5) + c.__dict__.get("heads")


@case(T)
def vars_sees_later_attribute(x):
    c = Config(10, 2)
    d = vars(c)
    c.scale = 3
    return x * d["scale"], len(d)


@case(T)
def vars_copy_is_a_snapshot(x):
    c = Config(10, 2)
    snap = vars(c).copy()
    c.heads = 4
    return x * snap["heads"] * c.heads, snap
