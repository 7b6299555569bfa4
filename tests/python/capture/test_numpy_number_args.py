"""NumPy functions known to be pure (Note [NumPy on constants] in
TranslateNumpy.cpp) on Python numbers that are graph inputs (a float argument
of the frame): the number specializes, as for a builtin, and the result is the
NumPy scalar eager computes (np.float64), usable where torch takes a Python
float. transformers' VITS spline: `constant = np.log(np.exp(1 - min_derivative)
- 1)` stored into a tensor with `t[..., 0] = constant` broke with GB018 (an
ndarray passed to a torch function)."""

import numpy as np
import torch
import torch.nn.functional as F
from harness import check

from xacc.jit import counters, jit


def spline_pad(x, min_derivative):
    constant = np.log(np.exp(1 - min_derivative) - 1)
    y = F.pad(x, (1, 1))
    y[..., 0] = constant
    y[..., -1] = constant
    return y, constant


def test_numpy_ufunc_of_a_float_argument_is_a_numpy_scalar():
    c = check(spline_pad, lambda i: (torch.randn(3, 4), 1e-3), graphs=1, breaks=0)
    assert c["recompiles"] == 0


def test_a_new_float_value_recompiles_and_matches_eager():
    jf = jit(spline_pad)
    for d in (1e-3, 2e-3, 1e-3):
        x = torch.randn(2, 3)
        got, c_got = jf(x, d)
        want, c_want = spline_pad(x, d)
        assert type(c_got) is type(c_want) is np.float64 and c_got == c_want
        assert torch.equal(got, want)
    assert counters()["breaks"] == 0 and counters()["recompiles"] == 1

