"""torch.device / dtype / finfo / iinfo, distributions, random, autocast, misc APIs."""

import torch

from . import P, S, T, V, case


@case(T)
def torch_device_build(x):
    d = torch.device("cpu")
    return x.to(d), d.type


@case(T)
def torch_device_compare(x):
    return x * 2 if x.device == torch.device("cpu") else x


@case(T)
def torch_dtype_attrs(x):
    return x, x.dtype.is_floating_point, torch.float16.itemsize, torch.int64.is_signed


@case(T)
def torch_finfo(x):
    return x.clamp(min=torch.finfo(x.dtype).min, max=torch.finfo(x.dtype).max), torch.finfo(torch.float16).eps


@case(T)
def torch_iinfo(x):
    return x * torch.iinfo(torch.int8).max


@case(T)
def masked_fill_min_value(x):
    return x.masked_fill(x < 0, torch.finfo(x.dtype).min)


@case(T)
def torch_get_default_dtype(x):
    return x.to(torch.get_default_dtype())


@case(T)
def torch_is_tensor(x):
    return torch.is_tensor(x), torch.is_floating_point(x), torch.numel(x)


@case(T)
def distributions_normal(x):
    d = torch.distributions.Normal(x, torch.ones_like(x))
    return d.log_prob(x), d.mean


@case(P)
def distributions_categorical(p):
    d = torch.distributions.Categorical(probs=p)
    return d.entropy()


@case(T)
def distributions_kl(x):
    a = torch.distributions.Normal(x, 1.0)
    b = torch.distributions.Normal(torch.zeros_like(x), 1.0)
    return torch.distributions.kl_divergence(a, b)


@case(T)
def torch_seeded_randn(x):
    g = torch.Generator().manual_seed(0)
    return x + torch.randn(10, 10, generator=g)


@case(T)
def torch_cdist(x):
    return torch.cdist(x, x)


@case(T)
def torch_linalg(x):
    return torch.linalg.norm(x, dim=-1), torch.linalg.vector_norm(x)


@case(T)
def torch_fft(x):
    return torch.fft.rfft(x).abs()


@case(T)
def torch_meshgrid(x):
    a, b = torch.meshgrid(torch.arange(3), torch.arange(4), indexing="ij")
    return x[:3, :4] + a + b


@case(T)
def torch_broadcast_tensors(x):
    a, b = torch.broadcast_tensors(x[:1], x[:, :1])
    return a + b


@case(T)
def torch_autocast_disabled(x):
    with torch.autocast("cpu", enabled=False):
        return x @ x


@case(T)
def torch_inference_mode(x):
    with torch.inference_mode():
        y = x * 2
    return y.clone()


@case(T)
def torch_clone_memory_format(x):
    return x.clone(memory_format=torch.contiguous_format)


@case(T)
def torch_size_ops(x):
    s = x.shape
    return torch.Size([s[0], 1]), s.numel(), list(s), s == (10, 10)


@case(T)
def torch_tensor_from_shape(x):
    return torch.tensor(x.shape), torch.tensor([x.shape[0], 3])


@case(T)
def torch_as_tensor_list(x):
    return torch.as_tensor([1.0, 2.0]) + x[0, :2]


@case(T)
def torch_chunk_function(x):
    return torch.chunk(x, 3), torch.tensor_split(x, 3)


@case(S)
def torch_scalar_tensor_ops(s):
    return torch.maximum(s, torch.tensor(0.0)), torch.clamp(s, 0, 1)


@case(T)
def torch_nonzero(x):
    return torch.nonzero(x > 1)


@case(T)
def torch_count_nonzero(x):
    return torch.count_nonzero(x > 0)


@case(T)
def torch_searchsorted(x):
    edges = torch.linspace(-2, 2, 5)
    return torch.searchsorted(edges, x.contiguous())


@case(T)
def torch_histc_bucketize(x):
    return torch.bucketize(x, torch.tensor([-1.0, 0.0, 1.0]))


@case(V)
def torch_outer_kron(v):
    return torch.outer(v, v), torch.kron(v[:2], v[:3])


@case(T)
def torch_dtype_promotion(x):
    i = torch.arange(10)
    return x + i, (i * 1.5).dtype, torch.result_type(x, i)


@case(T)
def torch_jit_is_scripting(x):
    if torch.jit.is_scripting():
        return x
    return x * 3


@case(T)
def torch_no_grad_decorator(x):
    @torch.no_grad()
    def f(t):
        return t * 2
    return f(x)


@case(T)
def torch_set_printoptions_free(x):
    return x.abs().max() < float("inf")
