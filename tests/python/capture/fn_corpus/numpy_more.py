"""More NumPy beside torch (issue 18): grids, shifts, masks, dtype checks and
helpers on arrays a function builds or gets from a tensor."""

import numpy as np
import torch

from . import T, V, case


@case(T)
def np_meshgrid_ij(x):
    i, j = np.meshgrid(np.arange(10), np.arange(10), indexing="ij")
    return x * torch.from_numpy((i >= j).astype(np.float32))


@case(V)
def np_ifftshift_roundtrip(v):
    idx = np.fft.ifftshift(np.fft.fftshift(np.arange(10)))
    return v[torch.from_numpy(idx)]


@case(T)
def np_where_on_tensor_numpy(x):
    a = x.numpy()
    return torch.from_numpy(np.where(a > 0, a, 0.0))


@case(T)
def np_dtype_kind_check(x):
    a = x.numpy()
    if a.dtype == np.float32:
        return x * 2
    return x


@case(T)
def np_triu_mask(x):
    mask = np.triu(np.ones((10, 10), dtype=np.float32), 1)
    return x.masked_fill(torch.from_numpy(mask) > 0, 0.0)


@case(V)
def np_linspace_weights(v):
    w = np.linspace(0.0, 1.0, 10).astype(np.float32)
    return v * torch.from_numpy(w)


@case(T)
def np_clip_array(x):
    a = np.clip(x.numpy(), -0.5, 0.5)
    return torch.from_numpy(a).sum()


@case(T)
def np_stack_meshgrid(x):
    g = np.stack(np.meshgrid(np.arange(10), np.arange(10)), axis=-1)
    return x + torch.from_numpy(g.sum(-1)).float()


@case(T)
def np_eye_identity(x):
    return x @ torch.from_numpy(np.eye(10, dtype=np.float32))


@case(T)
def np_cumsum_positions(x):
    pos = np.cumsum(np.ones(10, dtype=np.int64)) - 1
    return x[:, torch.from_numpy(pos)]
