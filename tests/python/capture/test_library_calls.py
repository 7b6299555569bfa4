"""Constructs that real model libraries (transformers) use and that must
capture without a graph break: imports inside functions, "am I being
traced?" queries, trace-time constant helpers, isinstance against a tuple of
classes, mutation of a frame's own **kwargs, closures with annotations,
Mapping.get, dict-subclass registries read through super()."""

import functools

import torch

from harness import check, r


def test_import_inside_function():
    def f(x):
        import torch.nn.functional as F
        from torch import nn  # noqa: F401
        import math
        return F.relu(x) * math.pi

    check(f, r(4, 3), graphs=1, breaks=0)


def test_import_of_unimported_module_is_a_break_not_an_error():
    def f(x):
        y = x + 1
        import xacc_test_module_that_does_not_exist  # noqa: F401
        return y

    jf = __import__("xacc").jit(f)
    try:
        jf(torch.randn(3))
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("the import must run in Python and raise there")


def test_tracer_queries_answer_as_a_tracer():
    def f(x):
        if torch.compiler.is_compiling():
            x = x + 1
        if torch.jit.is_tracing() or torch.jit.is_scripting():
            x = x * 100
        return x * 2

    # Eager Python sees is_compiling() False; the captured graph is the traced
    # path. Compare against the traced path's own eager value.
    jf = __import__("xacc").jit(f)
    x = torch.randn(5)
    from xacc.jit import counters
    assert torch.allclose(jf(x), (x + 1) * 2)
    c = counters()
    assert c["graphs"] == 1 and c["breaks"] == 0, c


def _marked(fn):
    fn._dynamo_marked_constant = True
    return fn


@functools.lru_cache
@_marked
def _scale_for(name: str) -> float:
    return {"a": 2.0, "b": 3.0}[name]


def test_marked_constant_helper_is_called_at_capture_time():
    def f(x):
        return x * _scale_for("b")

    check(f, r(4), graphs=1, breaks=0)


class _Box:
    pass


def test_isinstance_tuple_of_classes():
    def f(x, m):
        if isinstance(m, (torch.Tensor, _Box)) and len(m.shape) == 2:
            return x + m
        return x

    check(f, lambda i: (torch.randn(3, 3), torch.randn(3, 3)), graphs=1, breaks=0)


def test_own_kwargs_dict_is_mutable():
    def inner(x, scale=1.0):
        return x * scale

    def f(x, **kwargs):
        extra = kwargs.pop("extra", None)
        kwargs["scale"] = 3.0
        y = inner(x, **kwargs)
        return y if extra is None else y + extra

    jf = __import__("xacc").jit(f)
    x, e = torch.randn(4), torch.randn(4)
    from xacc.jit import counters
    kw = {"extra": e, "scale": 2.0}
    assert torch.allclose(jf(x, **kw), f(x, **kw))
    assert kw == {"extra": e, "scale": 2.0}  # the caller's dict is untouched
    assert counters()["breaks"] == 0, counters()


def test_closure_with_annotations():
    def make(t: torch.Tensor):
        def inner(a: torch.Tensor) -> torch.Tensor:
            return a + t
        return inner

    def f(x, y):
        return make(y)(x) * 2

    check(f, lambda i: (torch.randn(3), torch.randn(3)), graphs=1, breaks=0)


def test_constant_string_methods():
    def f(x, mode: str = "paged|eager"):
        if mode.startswith("paged|") and mode.removeprefix("paged|") == "eager":
            return x * 2
        return x

    check(lambda x: f(x), r(3), graphs=1, breaks=0)


class _Registry(dict):
    """A dict subclass read through super() (transformers' output registry)."""

    def get(self, model):
        return super().get(str(model.__class__)) or {}


_REGISTRY = _Registry()
_REGISTRY[str(torch.nn.Linear)] = {"scale": 3.0}


def test_dict_subclass_registry_read_through_super():
    lin, act = torch.nn.Linear(4, 4), torch.nn.ReLU()

    def f(x):
        s = _REGISTRY.get(lin).get("scale", 1.0)
        t = _REGISTRY.get(act).get("scale", 1.0)  # a class not registered: {}
        return x * s + t

    check(f, r(2, 4), graphs=1, breaks=0)


from collections.abc import Mapping  # noqa: E402


class _Interface(Mapping):
    """A Mapping with its own __getitem__ (transformers' attention registry)."""

    _global = {"double": lambda x: x * 2}

    def __init__(self):
        self._local = {}

    def __getitem__(self, key):
        if key in self._local:
            return self._local[key]
        return self._global[key]

    def __iter__(self):
        return iter({**self._global, **self._local})

    def __len__(self):
        return len(self._global.keys() | self._local.keys())

    def pick(self, name, default):
        return super().get(name, default)


_IFACE = _Interface()


def test_mapping_get_and_user_getitem():
    def f(x):
        a = _IFACE["double"](x)
        b = _IFACE.pick("missing", lambda y: y + 1)(x)  # KeyError inside Mapping.get -> default
        c = _IFACE.pick("double", None)(x)
        return a + b + c

    check(f, r(3), graphs=1, breaks=0)


def test_getattr_default_on_none():
    def f(x, cache=None):
        if getattr(cache, "is_compileable", False):
            return x * 0
        return x + 1

    check(lambda x: f(x), r(3), graphs=1, breaks=0)


def test_finfo_min_of_a_dtype():
    def f(x):
        m = torch.finfo(x.dtype).min
        return torch.where(x > 0, x, torch.full_like(x, m)) + torch.iinfo(torch.int32).max * 0

    check(f, r(5), graphs=1, breaks=0)


class _Rotary(torch.nn.Module):
    @torch.no_grad()
    def forward(self, x):
        return x.cos()


class _UsesRotary(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rot = _Rotary()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        c = self.rot(x)
        for layer in self.layers[:2]:
            x = layer(x)
        return x + c


def test_no_grad_decorated_forward_and_module_list_slice():
    m = _UsesRotary()
    from xacc.jit import counters, jit
    jm = jit(m)
    for i in range(2):
        x = torch.randn(2, 4, requires_grad=True)
        want, got = m(x), jm(x)
        assert torch.allclose(want, got, atol=1e-6)
        got.sum().backward()
    c = counters()
    assert c["breaks"] == 0 and c["graphs"] == 1, c
