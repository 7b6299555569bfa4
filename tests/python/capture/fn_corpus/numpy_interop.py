"""NumPy beside torch: constants built with NumPy, conversions, dtype info."""

import numpy as np
import torch

from . import T, V, case


@case(T)
def np_constant_arange(x):
    return x + torch.from_numpy(np.arange(10, dtype=np.float32))


@case(T)
def np_sqrt_scalar(x):
    return x / np.sqrt(x.shape[-1])


@case(T)
def np_pi(x):
    return torch.cos(x * np.pi)


@case(T)
def np_linspace_tensor(x):
    return x * torch.tensor(np.linspace(0, 1, 10), dtype=torch.float32)


@case(T)
def np_prod_shape(x):
    return x.reshape(int(np.prod(x.shape)))


@case(T)
def np_iinfo(x):
    return x.clamp(max=float(np.iinfo(np.int16).max))


@case(T)
def np_finfo(x):
    return x + np.finfo(np.float32).eps


@case(T)
def np_meshgrid(x):
    a, b = np.meshgrid(np.arange(3), np.arange(2))
    return x[: a.shape[0], : a.shape[1]] + torch.from_numpy(a + b)


@case(T)
def np_array_attributes(x):
    a = np.zeros((2, 5))
    return x[: a.shape[0], : a.shape[1]], a.ndim, a.size


@case(T)
def np_fftshift(x):
    k = np.fft.fftshift(np.arange(10))
    return x[:, torch.from_numpy(k)]


@case(T)
def tensor_numpy_roundtrip(x):
    a = x.numpy()
    return torch.from_numpy(a * 2)


@case(T)
def np_random_seeded(x):
    rng = np.random.default_rng(0)
    return x + torch.from_numpy(rng.standard_normal(10).astype(np.float32))


@case(T)
def np_float_scalar(x):
    return x * np.float32(0.5)


@case(T)
def np_int_index(x):
    i = np.int64(3)
    return x[int(i)]


@case(T)
def np_where_const(x):
    mask = np.where(np.arange(10) % 2 == 0, 1.0, 0.0).astype(np.float32)
    return x * torch.from_numpy(mask)


@case(T)
def np_log_exp_scalar(x):
    return x * float(np.log(np.exp(2.0)))


@case(T)
def np_concatenate(x):
    a = np.concatenate([np.ones(5), np.zeros(5)]).astype(np.float32)
    return x * torch.as_tensor(a)


@case(T)
def torch_tensor_from_np_list(x):
    return x + torch.tensor([np.float32(1.0)] * 10)


@case(V)
def np_argmax_of_list(v):
    scores = [0.1, 0.7, 0.2]
    return v * int(np.argmax(scores))


@case(T)
def np_dtype_compare(x):
    return x, np.dtype("float32") == np.float32


@case(T)
def np_ceil_div(x):
    n = int(np.ceil(x.shape[0] / 3))
    return x[:n]


@case(T)
def np_stack_arrays(x):
    a = np.stack([np.arange(10), np.arange(10)[::-1]]).astype(np.float32)
    return x[:2] * torch.from_numpy(a.copy())
