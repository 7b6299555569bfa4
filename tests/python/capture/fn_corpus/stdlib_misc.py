"""collections, copy, math, dataclasses, enum, contextlib, typing."""

import collections
import contextlib
import copy
import dataclasses
import enum
import math
from typing import NamedTuple

import torch

from . import T, V, case


@case(T)
def ordered_dict_build(x):
    d = collections.OrderedDict()
    d["a"] = x
    d["b"] = x * 2
    return d


@case(T)
def ordered_dict_from_pairs(x):
    d = collections.OrderedDict([("w", x), ("b", x.sum())])
    return list(d.keys()), d["w"] + d["b"]


@case(T)
def ordered_dict_move_to_end(x):
    d = collections.OrderedDict(a=x, b=x + 1)
    d.move_to_end("a")
    return list(d.values())


@case(T)
def defaultdict_list(x):
    groups = collections.defaultdict(list)
    for i, r in enumerate(x.chunk(4)):
        groups[i % 2].append(r)
    return {k: torch.cat(v) for k, v in groups.items()}


@case(T)
def defaultdict_int(x):
    counts = collections.defaultdict(int)
    for w in ["a", "b", "a"]:
        counts[w] += 1
    return x * counts["a"]


@case(T)
def counter_words(x):
    c = collections.Counter(["a", "b", "a", "c", "a"])
    return x * c["a"], c.most_common(1)


@case(T)
def deque_append(x):
    q = collections.deque(maxlen=2)
    for r in x.chunk(4):
        q.append(r)
    return torch.cat(list(q))


@case(T)
def deque_popleft(x):
    q = collections.deque([x, x * 2, x * 3])
    first = q.popleft()
    q.appendleft(first + 1)
    return list(q)


@case(T)
def namedtuple_build(x):
    Pair = collections.namedtuple("Pair", ["a", "b"])
    p = Pair(x, x * 2)
    return p.a + p.b


Stats = collections.namedtuple("Stats", "mean std")


@case(T)
def namedtuple_return(x):
    return Stats(x.mean(), x.std())


class Output(NamedTuple):
    logits: torch.Tensor
    loss: torch.Tensor


@case(T)
def typing_namedtuple(x):
    return Output(x * 2, x.sum())


@case(T)
def typing_namedtuple_fields(x):
    out = Output(logits=x, loss=x.mean())
    return out.loss, out[0], out._fields


@case(T)
def namedtuple_replace(x):
    out = Output(x, x.sum())
    return out._replace(loss=x.mean())


@case(T)
def namedtuple_unpack(x):
    logits, loss = Output(x, x.sum())
    return logits * loss


@case(T)
def copy_list(x):
    a = [x, x + 1]
    b = copy.copy(a)
    b.append(x * 2)
    return a, b


@case(T)
def deepcopy_dict(x):
    cfg = {"scale": 2, "dims": [1, 2]}
    c = copy.deepcopy(cfg)
    c["dims"].append(3)
    return x * c["scale"], cfg, c


@case(T)
def math_functions(x):
    return x * math.sqrt(2.0) + math.log(10) - math.exp(0.5)


@case(T)
def math_constants(x):
    return torch.sin(x * math.pi) + math.e


@case(T)
def math_isqrt_ceil_floor(x):
    n = math.ceil(x.shape[0] / 3)
    m = math.floor(7 / 2)
    return x[:n, :m], math.isqrt(17)


@case(T)
def math_prod_gcd(x):
    return x.reshape(math.prod(x.shape)), math.gcd(12, 18)


@case(T)
def math_inf_compare(x):
    best = math.inf
    for v in [3.0, 1.0, 2.0]:
        best = min(best, v)
    return x * best


@case(T)
def math_isclose(x):
    return x if math.isclose(0.1 + 0.2, 0.3) else -x


@case(T)
def math_sqrt_head_dim(x):
    d = x.shape[-1]
    return (x @ x.T) / math.sqrt(d)


@dataclasses.dataclass
class Config:
    hidden: int = 10
    scale: float = 0.5
    names: list = dataclasses.field(default_factory=list)


@case(T)
def dataclass_build(x):
    cfg = Config(hidden=5)
    return x[:, : cfg.hidden] * cfg.scale


@case(T)
def dataclass_replace(x):
    cfg = dataclasses.replace(Config(), scale=2.0)
    return x * cfg.scale


@case(T)
def dataclass_asdict(x):
    d = dataclasses.asdict(Config(3))
    return x * d["hidden"], d


@case(T)
def dataclass_field_mutation(x):
    cfg = Config()
    cfg.names.append("a")
    cfg.scale = 3.0
    return x * cfg.scale, cfg.names


@dataclasses.dataclass(frozen=True)
class Frozen:
    k: int


@case(T)
def frozen_dataclass(x):
    f = Frozen(4)
    return x[: f.k], f


class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class Act(enum.IntEnum):
    RELU = 0
    GELU = 1


@case(T)
def enum_compare(x):
    mode = Mode.EVAL
    if mode is Mode.TRAIN:
        return x * 0.9
    return x


@case(T)
def enum_value(x):
    return x, Mode("train").value, Mode.EVAL.name


@case(T)
def intenum_arith(x):
    return x * (Act.GELU + 1)


@case(T)
def enum_dispatch(x):
    acts = {Act.RELU: torch.relu, Act.GELU: torch.nn.functional.gelu}
    return acts[Act.GELU](x)


@case(T)
def contextlib_nullcontext(x):
    with contextlib.nullcontext():
        y = x * 2
    return y


@case(T)
def contextlib_suppress(x):
    with contextlib.suppress(KeyError):
        y = {"a": x}["a"] + 1
    return y


@case(T)
def contextmanager_user(x):
    log = []

    @contextlib.contextmanager
    def scope(name):
        log.append("enter " + name)
        yield name
        log.append("exit " + name)

    with scope("block"):
        y = x.relu()
    return y, log


@case(T)
def no_grad_block(x):
    with torch.no_grad():
        y = x * 2
    return y + 1


@case(T)
def enable_grad_flag(x):
    with torch.set_grad_enabled(False):
        return x.sum(), torch.is_grad_enabled()


@case(V)
def try_except_keyerror(v):
    d = {"a": v}
    try:
        return d["b"]
    except KeyError:
        return d["a"] * 2


@case(V)
def try_finally(v):
    out = []
    try:
        out.append(v + 1)
    finally:
        out.append(v - 1)
    return out
