"""Containers the way model code uses them: shape tuples extended for a
reshape, tuples accumulated layer by layer, None filtered out of lists and
dicts, stacks, index maps, tuples of slices, torch.Size against tuples
(issue 18)."""

import operator

import torch

from . import T, T3, case


@case(T3)
def size_tuple_plus_heads(x):
    new_shape = x.size()[:-1] + (2, 5)
    return x.view(new_shape).permute(0, 2, 1, 3), new_shape


@case(T)
def tuple_accumulated_per_layer(x):
    all_states = ()
    h = x
    for k in range(3):
        all_states = all_states + (h,)
        h = torch.relu(h * (k + 1))
    return h, all_states


@case(T)
def filter_none_from_dict(x):
    out = {"logits": x, "loss": None, "hidden": x * 2, "attn": None}
    return {k: v for k, v in out.items() if v is not None}


@case(T)
def cat_non_none(x):
    parts = [t for t in (x, None, x * 2, None) if t is not None]
    return torch.cat(parts, dim=0), len(parts)


@case(T)
def head_and_rest(x):
    first, *rest = x.chunk(4)
    return first, torch.stack(rest[:2])


@case(T)
def tuple_reversed_slice(x):
    layers = (torch.relu, torch.tanh, torch.sigmoid)
    for f in layers[::-1]:
        x = f(x)
    return x


@case(T)
def nested_config_dict(x):
    cfg = {"block": {"scale": 2.0, "shift": {"value": 1}}, "name": "b"}
    return x * cfg["block"]["scale"] + cfg["block"]["shift"]["value"], cfg


@case(T)
def sort_pairs_itemgetter(x):
    pairs = [("c", 3), ("a", 1), ("b", 2)]
    pairs = sorted(pairs, key=operator.itemgetter(1), reverse=True)
    return [x * w for _, w in pairs], [n for n, _ in pairs]


@case(T)
def kwargs_from_dict(x):
    opts = {"dim": 1, "keepdim": True}
    return x.sum(**opts), x.amax(**opts)


@case(T)
def set_difference_sorted(x):
    keep = sorted(set(range(5)) - {1, 3})
    return x[keep], keep


@case(T)
def list_as_stack(x):
    stack = [x]
    stack.append(x * 2)
    stack.append(x + 1)
    top = stack.pop()
    return top - stack.pop(), len(stack)


@case(T)
def index_map_of_names(x):
    names = ["q", "k", "v"]
    index = {name: i for i, name in enumerate(names)}
    parts = x.split(3)
    return parts[index["k"]] + parts[index["v"]], index


@case(T)
def tuple_of_slices_index(x):
    region = tuple(slice(0, s // 2) for s in x.shape)
    return x[region]


@case(T)
def size_equals_tuple(x):
    return x * 2 if x.shape == (10, 10) else x, x.shape == (10, 10), tuple(x.shape) == [10, 10]


@case(T)
def shape_list_edited(x):
    shape = list(x.shape)
    shape[-1] = 5
    shape.insert(0, 2)
    return x.reshape(shape), shape


@case(T)
def empty_dict_falsy(x):
    extra = {}
    if not extra:
        extra["bias"] = x.mean()
    return x + extra["bias"], len(extra)


@case(T)
def list_index_lookup(x):
    order = ["relu", "tanh", "sigmoid"]
    k = order.index("tanh")
    return x * k, order[k:]
