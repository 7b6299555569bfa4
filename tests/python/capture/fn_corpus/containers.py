"""list, dict, set and tuple operations: slicing, comprehensions, unpacking, views."""

import torch

from . import T, V, case


@case(T)
def list_append_extend(x):
    out = [x]
    out.append(x + 1)
    out.extend([x * 2, x * 3])
    return out


@case(T)
def list_insert_pop(x):
    xs = [x, x + 1, x + 2]
    xs.insert(1, x * 10)
    last = xs.pop()
    first = xs.pop(0)
    return xs, last - first


@case(T)
def list_remove_index(x):
    names = ["a", "b", "c"]
    names.remove("b")
    return x * names.index("c"), names


@case(T)
def list_slice_assign(x):
    xs = [x, x, x, x]
    xs[1:3] = [x * 2, x * 3]
    return xs


@case(T)
def list_slice_assign_grow(x):
    xs = [x, x]
    xs[1:1] = [x + 1, x + 2]
    return xs


@case(T)
def list_del_item(x):
    xs = [x, x + 1, x + 2, x + 3]
    del xs[1]
    del xs[-1:]
    return xs


@case(T)
def list_repeat(x):
    return 4 * [x]


@case(T)
def list_repeat_none(x):
    slots = [None] * 3
    slots[1] = x
    return slots


@case(T)
def list_concat(x):
    return [x] + [x * 2] + [x * 3]


@case(T)
def list_iadd(x):
    xs = [x]
    xs += [x + 1]
    return xs


@case(T)
def list_negative_index(x):
    xs = [x, x * 2, x * 3]
    return xs[-1] - xs[-2]


@case(T)
def list_step_slice(x):
    xs = list(x.chunk(10))
    return xs[::2], xs[::-1][:2]


@case(T)
def list_sort_inplace(x):
    sizes = [3, 1, 2]
    sizes.sort(reverse=True)
    return x[: sizes[0]], sizes


@case(T)
def list_reverse_inplace(x):
    xs = [x, x + 1]
    xs.reverse()
    return xs


@case(T)
def list_count_contains(x):
    names = ["a", "b", "a"]
    return x * names.count("a"), "b" in names, "z" not in names


@case(T)
def list_copy_clear(x):
    xs = [x, x]
    ys = xs.copy()
    xs.clear()
    return xs, ys


@case(T)
def list_equality(x):
    return x if [1, 2] == [1, 2] else -x


@case(T)
def list_comprehension_if(x):
    return [r * 2 for i, r in enumerate(x.chunk(5)) if i % 2 == 0]


@case(T)
def nested_comprehension(x):
    return [[x[i, j] for j in range(2)] for i in range(2)]


@case(T)
def dict_comprehension(x):
    return {f"p{i}": r.sum() for i, r in enumerate(x.chunk(3))}


@case(T)
def set_comprehension(x):
    sizes = {r.shape[0] for r in x.chunk(3)}
    return x * len(sizes), sizes


@case(T)
def generator_expression_sum(x):
    return sum(r.mean() for r in x.chunk(5))


@case(T)
def star_unpack(x):
    first, *rest = x.chunk(4)
    return first, rest


@case(T)
def star_unpack_middle(x):
    a, *mid, b = [x, x + 1, x + 2, x + 3]
    return a + b, mid


@case(T)
def nested_unpack(x):
    (a, b), c = (x, x * 2), x * 3
    return a + b + c


@case(T)
def star_in_call(x):
    shape = (5, 20)
    return x.reshape(*shape)


@case(T)
def star_list_build(x):
    parts = [x, x]
    return [*parts, x * 2], (*parts,)


@case(T)
def dict_merge_operator(x):
    a = {"x": x}
    b = {"y": x * 2}
    return a | b


@case(T)
def dict_star_merge(x):
    a = {"x": x}
    return {**a, "y": x + 1}


@case(T)
def dict_update(x):
    d = {"a": x}
    d.update({"b": x * 2}, c=x * 3)
    return d


@case(T)
def dict_get_setdefault(x):
    d = {"a": x}
    b = d.get("b", x * 0)
    d.setdefault("c", x + 1)
    return d, b


@case(T)
def dict_pop(x):
    d = {"a": x, "b": x + 1}
    v = d.pop("a")
    w = d.pop("z", None)
    return d, v, w


@case(T)
def dict_items_loop(x):
    d = {"scale": 2.0, "shift": 1.0}
    y = x
    for k, v in d.items():
        y = y * v if k == "scale" else y + v
    return y


@case(T)
def dict_keys_list(x):
    d = {"b": x, "a": x + 1}
    return list(d.keys()), list(d.values())


@case(T)
def dict_view_eq(x):
    d1 = {"a": 1, "b": 2}
    d2 = {"b": 3, "a": 4}
    return x if d1.keys() == d2.keys() else -x


@case(T)
def dict_view_live(x):
    d = {"a": x}
    keys = d.keys()
    d["b"] = x + 1
    return len(keys), "b" in keys


@case(T)
def dict_in_check(x):
    d = {"mask": None}
    if "mask" in d and d["mask"] is None:
        return x
    return -x


@case(T)
def dict_del(x):
    d = {"a": x, "b": x}
    del d["a"]
    return d


@case(T)
def dict_from_list_of_pairs(x):
    return dict([("a", x), ("b", x.sum())])


@case(T)
def dict_fromkeys(x):
    return dict.fromkeys(["a", "b"], 0), x


@case(T)
def dict_len_iter(x):
    d = {"a": x, "b": x * 2}
    return sum(d[k] for k in d) * len(d)


@case(T)
def dict_copy(x):
    d = {"a": x}
    e = d.copy()
    e["b"] = x + 1
    return d, e


@case(T)
def dict_popitem(x):
    d = {"a": x, "b": x + 1}
    k, v = d.popitem()
    return k, v, d


@case(T)
def set_ops(x):
    a = {1, 2, 3}
    b = {2, 3, 4}
    return x * len(a & b), sorted(a | b), sorted(a - b), sorted(a ^ b)


@case(T)
def set_add_discard(x):
    s = set()
    s.add(3)
    s.add(3)
    s.discard(5)
    return x * len(s), 3 in s


@case(T)
def set_issubset(x):
    return x if {1}.issubset({1, 2}) else -x


@case(T)
def frozenset_membership(x):
    allowed = frozenset(["relu", "gelu"])
    return torch.relu(x) if "relu" in allowed else x


@case(T)
def tuple_index_count(x):
    t = (1, 2, 2, 3)
    return x * t.count(2) + t.index(3)


@case(T)
def tuple_concat_repeat(x):
    shape = (2,) + (5,) * 2
    return x.reshape(shape[0], -1), shape


@case(T)
def tuple_compare(x):
    return x if (1, 2) < (1, 3) else -x


@case(T)
def tuple_of_tensor_unbind(x):
    a, b = x.chunk(2)
    return b, a


@case(T)
def swap_variables(x):
    a, b = x, x * 2
    a, b = b, a
    return a - b


@case(V)
def list_of_lists_to_tensor(v):
    rows = [[1.0, 2.0], [3.0, 4.0]]
    return torch.tensor(rows) * v[0]


@case(T)
def list_index_by_tensor_shape(x):
    sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    return x * sizes[x.shape[0]]


@case(T)
def list_min_of_lists(x):
    return min([3, 1], [2, 5]), x


@case(T)
def list_in_dict_mutation(x):
    cache = {"k": []}
    cache["k"].append(x)
    cache["k"].append(x * 2)
    return cache


@case(T)
def same_list_twice(x):
    z = [x + 1, x]
    return {"z": z, "b": z}


@case(T)
def range_properties(x):
    r = range(2, 10, 2)
    return x[list(r)], len(r), r[1], 4 in r


@case(T, [1, 2, 3])
def mutate_input_list(x, xs):
    xs.append(4)
    return x * len(xs)


@case(T, {"scale": 2})
def read_input_dict(x, cfg):
    return x * cfg["scale"]


@case(T, {"a": 1})
def mutate_input_dict(x, d):
    d["b"] = 2
    return x * len(d)
