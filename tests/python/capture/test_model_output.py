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


def test_model_output_field_written_in_graph():
    # chinese_clip's get_text_features: `outputs.pooler_output = proj(...)`.
    def replace(x):
        o = _Out(logits=x, hidden=x + 1)
        o.hidden = o.hidden * 2
        return o, o.to_tuple(), o["hidden"]

    def add_last(x):
        o = _Out(logits=x)
        o.hidden = x * 3  # a field without a value, after every key: a new last item
        return o, tuple(o.keys()), o.to_tuple(), o[1]

    from xacc.jit import reset
    check(replace, r(3, 4), graphs=1, breaks=0)
    reset()
    check(add_last, r(3, 4), graphs=1, breaks=0)


def test_model_output_writes_it_does_not_model_break_and_match_eager():
    def before_later_key(x):
        o = _Out(logits=x, extra=(1,))
        o.hidden = x  # eager: a new item after `extra`; cls(**d) would put it before
        return o, tuple(o.keys()), o.to_tuple()

    def set_none(x):
        o = _Out(logits=x, hidden=x + 1)
        o.hidden = None  # the attribute only: the item keeps its value
        return o.hidden, o["hidden"], tuple(o.keys())

    def not_a_field(x):
        o = _Out(logits=x)
        o.note = "n"
        return o.note, tuple(o.keys()), o

    from xacc.jit import reset
    for fn in (before_later_key, set_none, not_a_field):
        reset()
        c = check(fn, r(3), min_graphs=0, max_recompiles=3)  # the value is what matters here
        assert c["breaks"] >= 1


def test_model_output_first_field_a_sequence():
    # ModelOutput.__post_init__ with only the first field set and not a tensor:
    # an iterable whose first item is not a (str, value) pair is that field's
    # item (mgp-str's `logits=(a, b, c)`, backbones' `feature_maps=(...)`),
    # as when other fields are set; one graph, eager's object.
    def tuple_of_tensors(x):
        o = _Out(logits=(x + 1, x * 2))
        return o, o.logits[1] + o[0][0], tuple(o.keys()), len(o)

    def list_of_pairs_of_tensors(x):
        o = _Out([(x, x + 1), (x * 3, x)])
        return o, o.to_tuple(), o.hidden

    def number_and_string(x):
        return _Out(3), _Out("ab"), _Out(logits=2.5), x + 1

    from xacc.jit import reset
    for fn in (tuple_of_tensors, list_of_pairs_of_tensors, number_and_string):
        reset()
        check(fn, r(3, 4), graphs=1, breaks=0)


def test_model_output_first_field_pairs_or_empty_match_eager():
    # (str, value) pairs set the named fields; an empty iterable leaves no item
    # and the attribute None. Not modelled: a break, eager's result.
    def pairs(x):
        o = _Out([("hidden", x + 1), ("logits", x)])
        return o, tuple(o.keys()), o.hidden

    def empty(x):
        o = _Out(())
        return tuple(o.keys()), o.logits, x + 1

    def empty_string(x):
        o = _Out("")
        return tuple(o.keys()), o.logits, x * 2

    def dict_first(x):
        o = _Out({"hidden": x})
        return tuple(o.keys()), o.hidden, o.logits

    from xacc.jit import reset
    for fn in (pairs, empty, empty_string, dict_first):
        reset()
        check(fn, r(3), min_graphs=0, max_recompiles=3)


def hasattr_on_outputs(x):
    o = _Out(logits=x * 2)
    n = 0
    if hasattr(o, "hidden"):  # a field, None: still an attribute
        n += 1
    if hasattr(o, "vision_hidden_states"):  # no field, not on the class
        n += 2
    if hasattr(o, "to_tuple"):  # a method of the class
        n += 4
    return o.logits + n, o


def hasattr_after_break(x):
    _, o = hasattr_on_outputs(x)
    print("break")  # `o` reaches the rest of the frame through a source
    n = 0
    if hasattr(o, "logits"):
        n += 1
    if hasattr(o, "vision_hidden_states"):
        n += 2
    return o.logits + n


def test_hasattr_on_a_model_output_is_answered():
    # transformers' capture_outputs asks hasattr(outputs, "vision_hidden_states");
    # it was GB011 'hasattr() on a container'.
    check(hasattr_on_outputs, r(3), graphs=1, breaks=0)
    check(hasattr_after_break, r(3), min_graphs=2)
    from xacc.explain import explain
    assert "GB011" not in [b.code for b in explain(hasattr_after_break)(torch.randn(3)).break_reasons]
    o = _Out(logits=torch.ones(2))
    o.vision_hidden_states = 1  # an instance attribute of an outside object: guarded, so answered anew
    from xacc.jit import jit

    def g(o, x):
        return x + (1 if hasattr(o, "vision_hidden_states") else 0)

    jg = jit(g)
    x = torch.zeros(2)
    torch.testing.assert_close(jg(o, x), x + 1)
    torch.testing.assert_close(jg(_Out(logits=torch.ones(2)), x), x)
