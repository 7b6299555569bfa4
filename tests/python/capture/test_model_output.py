"""transformers' ModelOutput (an OrderedDict dataclass returned by every HF
model): built, read by attribute, key, index and to_tuple() inside a graph;
returned from a captured frame as the same class with the same contents."""

from dataclasses import dataclass

import pytest
import torch

from harness import check, r

generic = pytest.importorskip("transformers.utils.generic")


@dataclass
class _Out(generic.ModelOutput):
    logits: torch.Tensor | None = None
    hidden: torch.Tensor | None = None
    extra: tuple | None = None


def test_model_output_built_and_read_in_graph():
    def f(x):
        o = _Out(logits=x * 2, hidden=x + 1)
        t = o.to_tuple()
        return o.logits + o["hidden"] + o[1] + t[0] + (0 if o.extra is None else 1) + len(o)

    check(f, r(3, 4), graphs=1, breaks=0)


def test_model_output_returned():
    def f(x):
        return _Out(x.sin(), hidden=None, extra=None)

    from xacc.jit import jit
    jf = jit(f)
    for _ in range(2):
        x = torch.randn(2, 3)
        got, want = jf(x), f(x)
        assert type(got) is _Out and list(got.keys()) == ["logits"]
        assert torch.allclose(got.logits, want.logits) and got.hidden is None
        assert torch.allclose(got[0], want[0])


def test_model_output_forbidden_method_is_a_break():
    def f(x):
        o = _Out(logits=x)
        try:
            o.pop("logits")
        except Exception:
            return x - 1
        return x

    check(f, r(3), min_graphs=0)


@dataclass
class _CacheOut(generic.ModelOutput):
    logits: torch.Tensor | None = None
    cache: torch.Tensor | None = None


@pytest.mark.skipif(not hasattr(generic, "_BCCacheNameMeta"), reason="transformers without the cache-name wrapper")
def test_model_output_old_cache_argument_name_is_renamed_as_in_eager():
    # transformers' metaclass wraps every ModelOutput __init__ and renames
    # past_key_values= to cache=; the translator models only the plain
    # arguments and leaves the renaming call to Python (one break).
    def f(x):
        o = _CacheOut(logits=x + 1, past_key_values=x * 3)
        return o.cache + o.logits

    check(f, r(3), min_graphs=1)
