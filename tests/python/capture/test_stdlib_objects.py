"""Enum members and dataclasses helpers inside a captured function: `Mode(v)`
answers the member (Note [Enum members] in TranslateObjects.cpp), and
dataclasses.replace/asdict run their Python references
(xacc/_src/capture/polyfills_dataclasses.py). Compared with eager through the
harness (values, types, identity, raised exceptions)."""

import dataclasses
import enum

import torch

from harness import check, r
from xacc.jit import counters, jit


class Mode(enum.Enum):
    TRAIN = "train"
    EVAL = "eval"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_enum_member_by_value():
    def f(x):
        m = Mode("eval")
        same = Mode(Mode.TRAIN)
        k = x * Level(2) if m is Mode.EVAL else x
        return k, m, m.value, m.name, same is Mode.TRAIN, Level(1).name

    check(f, r(3), graphs=1, breaks=0)


def test_enum_value_without_member_raises_like_eager():
    def f(x):
        return x, Mode("test")

    check(f, r(3), min_graphs=0)


@dataclasses.dataclass
class Config:
    hidden: int = 10
    scale: float = 0.5
    names: list = dataclasses.field(default_factory=list)
    t: object = None


@dataclasses.dataclass
class Outer:
    inner: Config
    tag: str = "o"


def test_dataclass_replace():
    def f(x):
        c = Config(3, names=["a"])
        d = dataclasses.replace(c, scale=2.0)
        return x * d.scale + d.hidden, d, d.names is c.names, c

    check(f, r(3), graphs=1, breaks=0)


def test_dataclass_asdict_nested():
    def f(x):
        o = Outer(Config(4, names=["n", "a"]))
        d = dataclasses.asdict(o)
        return x * d["inner"]["hidden"], d

    check(f, r(3), graphs=1, breaks=0)


def test_dataclass_asdict_of_a_tensor_field_matches_eager():
    def f(x):
        return dataclasses.asdict(Config(t=x))

    check(f, r(3), min_graphs=0)


def test_replace_of_a_non_dataclass_raises_like_eager():
    def f(x):
        return dataclasses.replace(x, a=1)

    check(f, r(3), min_graphs=0)


class CountingMeta(enum.EnumMeta):
    calls = 0

    def __call__(cls, *args, **kwargs):
        CountingMeta.calls += 1
        return super().__call__(*args, **kwargs)


class Counted(enum.Enum, metaclass=CountingMeta):
    A = 1


def test_enum_metaclass_with_its_own_call_runs_it():
    def f(x):
        return x * Counted(1).value

    jfn = jit(f)
    for _ in range(2):
        before = CountingMeta.calls
        x = torch.randn(3)
        assert torch.equal(jfn(x), x * 1)
        assert CountingMeta.calls == before + 1
