"""Which frames the hook translates (convert.should_skip): user code and
third-party model code yes; the standard library, torch internals, xacc and
third-party infrastructure no; torch.nn.modules' forward yes."""

import inspect
import json

import numpy
import pytest
import torch

from xacc._src.capture import convert


def test_user_code_is_translated():
    def f(x):
        return x + 1
    assert not convert.should_skip(f.__code__)


def test_stdlib_torch_internals_and_xacc_are_skipped():
    assert convert.should_skip(json.dumps.__code__)
    assert convert.should_skip(torch.nn.Module._call_impl.__code__)
    assert convert.should_skip(torch.functional.einsum.__code__)
    assert convert.should_skip(convert.callback.__code__)
    assert convert.should_skip(numpy.lib.format.read_magic.__code__)


def test_nn_modules_forward_only():
    assert not convert.should_skip(torch.nn.Linear.forward.__code__)
    assert convert.should_skip(torch.nn.Linear.__init__.__code__)


def test_transformers_model_code_is_translated_but_not_its_utilities():
    transformers = pytest.importorskip("transformers")
    from transformers.models.bert import modeling_bert
    from transformers.utils import generic
    # Model code behind transformers' own decorators (deprecate_kwarg wraps forward in
    # transformers/utils/deprecation.py, a utility) is still translated.
    for fn in (modeling_bert.BertSelfAttention.forward, modeling_bert.BertEmbeddings.forward):
        assert not convert.should_skip(inspect.unwrap(fn).__code__)
    assert convert.should_skip(generic.ModelOutput.__post_init__.__code__)
    assert convert.should_skip(transformers.utils.logging.get_logger.__code__)


def test_module_bodies_are_skipped():
    code = compile("x = 1", "<m>", "exec")
    assert convert.should_skip(code)


def test_xacc_own_modules_are_skipped():
    # The whole package is a skip directory: xacc/_src and the public modules
    # outside it (xacc/explain.py) alike.
    from xacc._src import jit as jit_impl
    from xacc.explain import explain
    assert convert.should_skip(jit_impl.reset.__code__)
    assert convert.should_skip(jit_impl._ensure_installed.__code__)
    assert convert.should_skip(explain.__code__)
