"""Tensor methods, indexing, in-place ops, dtypes and shapes."""

import torch

from . import B, I, IV, P, S, T, T3, V, case


@case(T, T)
def arithmetic_chain(x, y):
    return (x + y) * (x - y) / (y.abs() + 1)


@case(T)
def reductions(x):
    return x.sum(), x.mean(dim=0), x.max(dim=1).values, x.std(), x.norm()


@case(T)
def argmax_topk(x):
    v, i = x.topk(3, dim=-1)
    return x.argmax(-1), v, i


@case(T)
def sort_values_indices(x):
    s = x.sort(dim=-1, descending=True)
    return s.values, s.indices


@case(T)
def view_reshape_permute(x):
    return x.view(2, 5, 10).permute(2, 0, 1).reshape(10, -1)


@case(T3)
def transpose_contiguous(x):
    return x.transpose(1, 2).contiguous().view(2, -1)


@case(T)
def unsqueeze_expand(x):
    return x.unsqueeze(0).expand(3, 10, 10).sum(0)


@case(V)
def repeat_tile(v):
    return v.repeat(2, 1), v.tile((3,))


@case(T)
def squeeze_flatten(x):
    return x[None, :, None].squeeze().flatten()


@case(T)
def size_and_shape(x):
    b, n = x.size()
    return x.new_zeros(b, n * 2), x.size(-1), x.shape[-2:]


@case(T)
def numel_dim_ndim(x):
    return x * x.numel() / x.dim() + x.ndim


@case(T)
def basic_indexing(x):
    return x[0], x[:, 1], x[2:5, ::2], x[-1, -1], x[..., 0]


@case(T)
def none_indexing(x):
    return x[:, None, :] * x[None, :, :]


@case(T, IV)
def advanced_indexing(x, idx):
    return x[idx], x[idx, idx], x[:, idx]


@case(T, B)
def boolean_mask_select(x, m):
    return x[m]


@case(T)
def masked_fill_where(x):
    return x.masked_fill(x < 0, float("-inf")).softmax(-1)


@case(T)
def setitem_slice(x):
    y = x.clone()
    y[:, 0] = 0
    y[1] = 1.0
    return y


@case(T, B)
def setitem_mask(x, m):
    y = x.clone()
    y[m] = 0
    return y


@case(T)
def inplace_ops(x):
    y = x.clone()
    y.add_(1).mul_(2)
    y.clamp_(min=0)
    return y


@case(T)
def inplace_on_input(x):
    x.mul_(2)
    return x


@case(T)
def inplace_on_view(x):
    y = x.clone()
    y[:3].zero_()
    y.diagonal().fill_(7)
    return y


@case(T)
def augmented_assign(x):
    y = x * 1
    y += 1
    y *= 2
    y -= x
    return y


@case(T)
def dtype_conversions(x):
    return x.to(torch.float16).float(), x.long(), x.int().double(), x.bool()


@case(T)
def type_string_method(x):
    return x.to(torch.float16).type()


@case(T)
def to_dtype_of_other(x):
    y = torch.ones(3, dtype=torch.float64)
    return y.to(x.dtype), y.type_as(x)


@case(I)
def integer_division(i):
    return i // 3, i % 3, torch.div(i, 2, rounding_mode="floor")


@case(T)
def comparisons_logical(x):
    return (x > 0) & (x < 1), (x > 0) | (x < -1), ~(x > 0), torch.logical_xor(x > 0, x > 1)


@case(T)
def clamp_and_sign(x):
    return x.clamp(-0.5, 0.5), x.sign(), x.abs().sqrt(), x.exp().log()


@case(P)
def pow_rsqrt(p):
    return p ** 0.5, p.rsqrt(), 2 ** p, p.pow(3)


@case(T)
def cumsum_cumprod(x):
    return x.cumsum(0), x.cumprod(1), x.flip(0)


@case(T, T)
def matmul_variants(x, y):
    return x @ y, torch.mm(x, y), torch.matmul(x, y.t()), torch.einsum("ij,jk->ik", x, y)


@case(T3, T3)
def bmm_baddbmm(a, b):
    return torch.bmm(a, b), torch.baddbmm(a, a, b, beta=0.5)


@case(T)
def chunk_split_cat(x):
    a, b = x.chunk(2, dim=1)
    c = torch.split(x, [3, 7])
    return torch.cat([b, a], dim=1), c[1]


@case(T)
def stack_unbind(x):
    rows = x.unbind(0)
    return torch.stack(rows[::-1])


@case(T)
def gather_scatter(x):
    idx = x.argsort(dim=1)[:, :3]
    g = x.gather(1, idx)
    out = torch.zeros_like(x).scatter(1, idx, g)
    return g, out


@case(T)
def index_select_put(x):
    idx = torch.tensor([0, 2, 4])
    y = x.index_select(0, idx)
    z = x.clone().index_put_((idx,), torch.zeros(10))
    return y, z


@case(T)
def detach_requires_grad(x):
    w = x.clone().requires_grad_(True)
    return (w * 2).detach(), w.requires_grad


@case(T)
def new_tensors_like(x):
    return torch.zeros_like(x), torch.ones_like(x) * 2, torch.full_like(x, 3.0), x.new_ones(2)


@case(T)
def factory_functions(x):
    return x + torch.arange(10), torch.eye(10) @ x, torch.linspace(0, 1, 10), torch.empty(0).shape


@case(T)
def tril_triu_diag(x):
    return torch.tril(x), torch.triu(x, 1), torch.diag(x), x.trace()


@case(T)
def tensor_item_and_tolist(x):
    return x[0, 0].item(), x[0, :3].tolist()


@case(S)
def zero_dim_math(s):
    return s * 2 + 1, s.exp(), s.reshape(1)


@case(T)
def tensor_python_scalar_mix(x):
    n = x.shape[0]
    return x * (1.0 / n) + (n - 1)


@case(T)
def tensor_is_methods(x):
    return x.is_contiguous(), x.t().is_contiguous(), x.is_floating_point(), x.requires_grad


@case(T)
def tensor_device_attr(x):
    return torch.zeros(3, device=x.device, dtype=x.dtype), x.device.type


@case(T)
def nan_handling(x):
    y = x.clone()
    y[0, 0] = float("nan")
    return torch.nan_to_num(y), torch.isnan(y).sum(), y.nansum()


@case(T)
def where_scalar(x):
    return torch.where(x > 0, 1.0, -1.0)


@case(T)
def lerp_addcmul(x):
    return torch.lerp(x, x * 2, 0.3), torch.addcmul(x, x, x, value=0.5)


@case(T)
def unique_consecutive_sorted(x):
    v = torch.tensor([1, 1, 2, 3, 3])
    return torch.unique_consecutive(v), x


@case(I)
def bincount_argmax(i):
    return torch.bincount(i.flatten(), minlength=10)


@case(T)
def roll_narrow(x):
    return x.roll(2, dims=0), x.narrow(1, 2, 3)


@case(T)
def amax_logsumexp(x):
    return x.amax(dim=-1, keepdim=True), torch.logsumexp(x, dim=-1)


@case(T)
def tensor_equal_allclose(x):
    y = x.clone()
    return torch.equal(x, y), torch.allclose(x, y)


@case(T)
def tensor_bool_branch(x):
    if torch.all(x == x):
        return x + 1
    return x


@case(T)
def tensor_len_iter_sum(x):
    return sum(x[i] for i in range(len(x)))
