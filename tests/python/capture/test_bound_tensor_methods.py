"""A Tensor method bound before a break in its own argument list
(higgs_audio_v2's `hidden_states.masked_scatter(mask, norm(hidden_states[mask]))`:
the boolean-mask index breaks, and the resume function receives the bound
`hidden_states.masked_scatter` on its stack). The resume function's entry must
hold for the next call's new tensor: no recompile per call (Note [Bound tensor
methods as inputs])."""

import torch

from harness import check
from xacc.explain import explain


def scatter_norm(x, mask):
    return x.masked_scatter(mask.unsqueeze(-1), torch.nn.functional.layer_norm(x[mask], (4,)))


def scatter_twice(x, mask):
    y = x.masked_scatter(mask.unsqueeze(-1), x[mask] * 2)
    return y.masked_fill(~mask.unsqueeze(-1), 0.5).add(x[~mask].sum())


def make(i):
    g = torch.Generator().manual_seed(i)
    x = torch.randn(2, 5, 4, generator=g)
    mask = torch.tensor([[1, 0, 1, 1, 0], [0, 1, 1, 0, 1]], dtype=torch.bool)
    return x, mask


def test_bound_method_on_resume_stack_does_not_recompile():
    for fn in (scatter_norm, scatter_twice):
        out = explain(fn)(*make(0))
        assert out.break_reasons, "the boolean-mask index is expected to break"
        check(fn, make, calls=4, max_recompiles=0)


def test_bound_method_of_a_new_tensor_each_call_is_that_tensor():
    # The method is bound to the call's own x: a stale tensor from the first
    # call must never be used.
    def fn(x, mask):
        return x.masked_scatter(mask.unsqueeze(-1), x[mask] + 1)
    check(fn, lambda i: (torch.full((2, 5, 4), float(i)), make(i)[1]), calls=3, max_recompiles=0)
