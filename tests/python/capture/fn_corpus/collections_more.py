"""collections containers built and used inside the function (OrderedDict,
defaultdict, Counter, deque, namedtuple), dicts passed in, and try/except
around lookups: written as users write them (issue 18 criterion 4)."""

import collections

import torch

from . import T, V, case


@case(T)
def ordered_dict_popitem(x):
    d = collections.OrderedDict()
    d["first"] = x
    d["second"] = x + 1
    d["third"] = x * 3
    k, v = d.popitem()
    k0, v0 = d.popitem(last=False)
    return k, v + v0, k0, list(d)


@case(T)
def ordered_dict_move_to_front(x):
    d = collections.OrderedDict(a=x, b=x * 2, c=x * 3)
    d.move_to_end("c", last=False)
    return [k for k in d], torch.stack(list(d.values()))


@case(T)
def ordered_dict_returned(x):
    out = collections.OrderedDict()
    for i, chunk in enumerate(x.split(5)):
        out[f"part{i}"] = chunk.relu()
    return out


@case(T)
def ordered_dict_isinstance(x):
    d = collections.OrderedDict([("x", x)])
    if isinstance(d, dict) and type(d) is collections.OrderedDict:
        return x + 1
    return x - 1


@case(T)
def ordered_dict_get_setdefault(x):
    d = collections.OrderedDict()
    d.setdefault("w", x)
    d.setdefault("w", x * 10)
    return d.get("w") + (d.get("missing") is None), len(d), "w" in d


@case(T)
def defaultdict_set(x):
    seen = collections.defaultdict(set)
    for name in ["conv", "bn", "conv", "fc"]:
        seen[name[0]].add(name)
    return x * len(seen["c"]), sorted(seen)


@case(T)
def defaultdict_returned(x):
    buckets = collections.defaultdict(list)
    for i, row in enumerate(x[:4]):
        buckets["even" if i % 2 == 0 else "odd"].append(row)
    return buckets


@case(T)
def defaultdict_lambda_factory(x):
    d = collections.defaultdict(lambda: 0.5)
    d["scale"] *= 4
    return x * d["scale"] + d["bias"], len(d)


@case(T)
def defaultdict_nested(x):
    tree = collections.defaultdict(dict)
    tree["layer1"]["w"] = x
    tree["layer2"]["w"] = x.t()
    return tree["layer1"]["w"] @ tree["layer2"]["w"]


@case(T)
def counter_most_common_all(x):
    c = collections.Counter("abracadabra")
    top = c.most_common()
    return x * top[0][1], top


@case(T)
def counter_update_total(x):
    c = collections.Counter()
    c.update(["relu", "gelu", "relu"])
    c.update({"gelu": 2})
    return x * c.total(), c["relu"], c["tanh"]


@case(T)
def counter_returned(x):
    shapes = collections.Counter(tuple(t.shape) for t in x.split(3))
    return shapes, x.sum()


@case(T)
def deque_maxlen_window(x):
    window = collections.deque(maxlen=3)
    for row in x:
        window.append(row)
    return torch.stack(list(window)).mean(0), window.maxlen, len(window)


@case(T)
def deque_rotate_extend(x):
    q = collections.deque([x[0], x[1]])
    q.extend([x[2], x[3]])
    q.rotate(1)
    q.extendleft([x[4]])
    return torch.stack(list(q))


@case(T)
def deque_as_queue(x):
    q = collections.deque([x])
    out = []
    while q:
        t = q.popleft()
        if t.shape[0] > 2:
            half = t.shape[0] // 2
            q.append(t[:half])
            q.append(t[half:])
        else:
            out.append(t.sum())
    return torch.stack(out)


@case(T)
def deque_returned(x):
    q = collections.deque([x, x + 1], maxlen=4)
    q.appendleft(x - 1)
    return q


@case(T)
def deque_index_and_pop(x):
    q = collections.deque([x * i for i in range(4)])
    last = q.pop()
    return q[0] + q[-1] + last, len(q)


Point = collections.namedtuple("Point", ["x", "y"])


@case(T)
def namedtuple_replace_asdict(x):
    p = Point(x, x * 2)
    q = p._replace(y=x * 3)
    return q._asdict(), q.y - p.y


@case(T)
def namedtuple_make(x):
    p = Point._make([x.sum(), x.mean()])
    return p, p.x / p.y


@case(T)
def nested_try_except(x):
    cfg = {"scale": 2}
    try:
        try:
            s = cfg["shift"]
        except KeyError:
            s = cfg["offset"]
    except KeyError:
        s = 0
    return x * cfg["scale"] + s


@case(T)
def dict_get_default_chain(x):
    cfg = {"dropout": 0.1}
    p = cfg.get("dropout", 0.0)
    q = cfg.get("attention_dropout", p)
    return x * (1 - p) * (1 - q)


@case({"a": 1}, T)
def defaultdict_from_mapping(d, x):
    dd = collections.defaultdict(int, d)
    dd["b"] += 2
    return x * (dd["a"] + dd["b"]), dict(dd)
