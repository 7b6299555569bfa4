"""Constructs of third-party model code (transformers and friends) that the
translator captures: nested containers running the same forward, methods of
constant strings, registry objects with a Python __getitem__."""

import collections
import inspect
from collections.abc import Mapping

import pytest
import torch
import torch.nn as nn

from harness import check, compare_call, r
from xacc.jit import counters, jit


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
        self.skip = nn.Sequential(nn.Linear(8, 8))

    def forward(self, x):
        return self.body(x) + self.skip(x)


def test_same_forward_nested_in_itself_is_not_recursion():
    # Sequential.forward -> Block.forward -> Sequential.forward: inlined.
    model = nn.Sequential(Block(), nn.Sequential(Block(), nn.Sequential(Block())))
    check(model, r(2, 8), graphs=1, breaks=0)


class Configured(nn.Module):
    def __init__(self, impl):
        super().__init__()
        self.impl = impl
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        impl = self.impl
        if impl.startswith("paged|") and impl != "paged|eager":
            impl = impl.removeprefix("paged|")
        scale = 2.0 if impl.upper() == "SDPA" else 3.0
        return self.fc(x) * scale + len(impl.split("|"))


@pytest.mark.parametrize("impl", ["sdpa", "paged|sdpa", "paged|eager"])
def test_methods_of_constant_strings_run_at_capture_time(impl):
    check(Configured(impl), r(2, 8), graphs=1, breaks=0)


def test_string_method_on_a_bad_argument_is_a_break_not_an_error():
    def f(x, s):
        return x + s.index("z")  # ValueError at capture: the frame breaks, Python raises

    jf = jit(f)
    try:
        jf(torch.ones(2), "abc")
    except ValueError:
        pass
    else:
        raise AssertionError("expected ValueError")


class Registry:
    """A mapping class of a library: __getitem__ in Python, local overrides."""

    _global = {"double": lambda t: t * 2, "square": lambda t: t * t}

    def __init__(self):
        self._local = {}

    def __getitem__(self, key):
        if key in self._local:
            return self._local[key]
        return self._global[key]


REGISTRY = Registry()


def test_object_with_python_getitem_is_inlined():
    def f(x):
        return REGISTRY["double"](x) + REGISTRY["square"](x)

    check(f, r(3), graphs=1, breaks=0)


def apply_chunked(fn, *tensors):
    """transformers.pytorch_utils.apply_chunking_to_forward's argument check."""
    n = len(inspect.signature(fn).parameters)
    if n != len(tensors):
        raise ValueError(f"{n} != {len(tensors)}")
    return fn(*tensors)


class Chunked(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def chunk(self, x):
        return self.fc(x).relu()

    def forward(self, x):
        return apply_chunked(self.chunk, x)


def test_inspect_signature_of_a_known_function_is_a_constant():
    check(Chunked(), r(2, 8), graphs=1, breaks=0)


def test_inspect_signature_mismatch_still_raises():
    def g(x, y):
        return x + y

    def f(x):
        return apply_chunked(g, x)

    with pytest.raises(ValueError):
        jit(f)(torch.ones(2))


class _ClassRegistry(dict):
    """transformers' _CanRecordRegistry: keyed by str(cls), read via super().get."""

    def get(self, model):
        return super().get(str(model.__class__)) or {}


CLASS_REGISTRY = _ClassRegistry()


class Recorded(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        flags = CLASS_REGISTRY.get(self)
        y = self.fc(x)
        return y * flags["scale"] if "scale" in flags else y


def test_dict_subclass_registry_read_is_guarded():
    m = Recorded()
    check(m, r(2, 8), graphs=1, breaks=0)
    jm = jit(m)
    x = torch.randn(2, 8)
    CLASS_REGISTRY[str(Recorded)] = {"scale": 3.0}  # a new entry: the guard on the registry recompiles
    try:
        compare_call(m, jm, (x,))
        torch.testing.assert_close(jm(x), m.fc(x) * 3.0)
        CLASS_REGISTRY[str(Recorded)] = {"scale": 5.0}  # same size, new value: the item guard
        torch.testing.assert_close(jm(x), m.fc(x) * 5.0)
    finally:
        CLASS_REGISTRY.clear()
    torch.testing.assert_close(jm(x), m.fc(x))


class Flags:
    """A library object with its own __contains__ written in Python."""

    def __init__(self):
        self.names = set()

    def __contains__(self, name):
        return name in self.names


class Registered(Mapping):
    """A Mapping subclass (transformers' attention registry): `in` is Mapping.__contains__."""

    def __init__(self):
        self._local = {}

    def __getitem__(self, key):
        return self._local[key]

    def __iter__(self):
        return iter(self._local)

    def __len__(self):
        return len(self._local)


FLAGS = Flags()
REGISTERED = Registered()
QUEUE = collections.deque([1, 2])


def flag_set(x):
    return x * 3 if "fast" in FLAGS else x + 1


def name_registered(x):
    return x * 3 if "sdpa" not in REGISTERED else x + 1


def in_queue(x):
    return x * 3 if 3 in QUEUE else x + 1


@pytest.mark.parametrize("f,add,remove,breaks", [
    (flag_set, lambda: FLAGS.names.add("fast"), lambda: FLAGS.names.discard("fast"), 0),
    (name_registered, lambda: REGISTERED._local.update(sdpa=1), lambda: REGISTERED._local.clear(), 0),
    # a __contains__ in C: a break, the test runs natively
    (in_queue, lambda: QUEUE.append(3), lambda: 3 in QUEUE and QUEUE.remove(3), 1),
], ids=["python-contains", "mapping-contains", "c-contains"])
def test_in_on_an_object_from_outside_follows_its_state(f, add, remove, breaks):
    # `k in obj` for an object read from a global: the answer at the next call
    # follows the object's contents (guards through the code that answers it).
    remove()
    j, x = jit(f), torch.randn(3)
    try:
        for change in (None, add, remove):
            if change:
                change()
            compare_call(f, j, (x,))
        assert counters()["breaks"] == breaks, counters()
    finally:
        remove()


class Layers:
    """A library object with its own __len__ written in Python (transformers' caches)."""

    def __init__(self):
        self.layers = [1, 2]

    def __len__(self):
        return len(self.layers)


class BadLength:
    def __init__(self):
        self.n = -1

    def __len__(self):
        return self.n


LAYERS = Layers()
BAD_LENGTH = BadLength()


def count_layers(x):
    return x * len(LAYERS)


def length_of(x, obj):
    return x + len(obj)


def test_len_of_an_object_from_outside_follows_its_state():
    # len(obj) of a global whose class defines __len__ in Python: inlined, so
    # the next call's answer follows the object's state (was a GB011 break).
    LAYERS.layers = [1, 2]
    j, x = jit(count_layers), torch.randn(3)
    for change in (None, lambda: LAYERS.layers.append(3), lambda: LAYERS.layers.clear()):
        if change:
            change()
        compare_call(count_layers, j, (x,))
    c = counters()
    assert c["breaks"] == 0 and c["internal_errors"] == 0, c


def test_len_follows_a_len_replaced_on_the_class():
    obj = Layers()
    j, x = jit(length_of), torch.randn(3)
    compare_call(length_of, j, (x, obj))
    old = Layers.__len__
    Layers.__len__ = lambda self: 7
    try:
        assert torch.equal(j(x, obj), x + 7)
    finally:
        Layers.__len__ = old
    assert torch.equal(j(x, obj), x + 2)


@pytest.mark.parametrize("n,exc", [(-1, ValueError), ("2", TypeError), (2.0, TypeError)])
def test_len_with_a_bad_result_raises_as_in_python(n, exc):
    BAD_LENGTH.n = n
    j = jit(length_of)
    with pytest.raises(exc):
        length_of(torch.ones(2), BAD_LENGTH)
    with pytest.raises(exc):
        j(torch.ones(2), BAD_LENGTH)


def test_len_of_an_object_with_a_c_len_is_a_break():
    j, x = jit(length_of), torch.randn(3)
    compare_call(length_of, j, (x, collections.deque([1, 2, 3])))
    assert counters()["breaks"] == 1, counters()
