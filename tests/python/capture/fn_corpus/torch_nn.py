"""torch.nn.functional and nn modules built inside the function."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import I, IV, T, T3, V, case


@case(T)
def activations(x):
    return F.relu(x), F.gelu(x), F.silu(x), torch.sigmoid(x), F.leaky_relu(x, 0.1), F.elu(x)


@case(T)
def softmax_variants(x):
    return F.softmax(x, dim=-1), F.log_softmax(x, dim=0), x.softmax(1)


@case(T, T)
def linear_functional(x, w):
    return F.linear(x, w), F.linear(x, w, w[0])


@case(T)
def layer_norm_functional(x):
    return F.layer_norm(x, (10,))


@case(T)
def normalize_functional(x):
    return F.normalize(x, dim=-1)


@case(T, IV)
def cross_entropy(x, target):
    return F.cross_entropy(x, target)


@case(T, T)
def mse_l1_losses(x, y):
    return F.mse_loss(x, y), F.l1_loss(x, y, reduction="sum"), F.smooth_l1_loss(x, y)


@case(T)
def dropout_eval(x):
    return F.dropout(x, p=0.5, training=False)


@case(T)
def pad_functional(x):
    return F.pad(x, (1, 1, 2, 0)), F.pad(x, (0, 2), value=-1.0)


@case(T3)
def conv1d_functional(x):
    w = torch.ones(4, 10, 3) * 0.1
    return F.conv1d(x, w, padding=1)


@case(T3)
def pooling(x):
    return F.avg_pool1d(x, 2), F.max_pool1d(x, 2), F.adaptive_avg_pool1d(x, 1)


@case(T3)
def interpolate(x):
    return F.interpolate(x, scale_factor=2, mode="nearest")


@case(T, T, T)
def attention_sdpa(q, k, v):
    return F.scaled_dot_product_attention(q[None], k[None], v[None])


@case(T)
def manual_attention(x):
    scores = x @ x.transpose(-2, -1) / x.shape[-1] ** 0.5
    mask = torch.triu(torch.ones(10, 10, dtype=torch.bool), 1)
    scores = scores.masked_fill(mask, float("-inf"))
    return scores.softmax(-1) @ x


@case(IV)
def one_hot_embedding(i):
    w = torch.arange(50, dtype=torch.float32).reshape(10, 5)
    return F.one_hot(i, 10), F.embedding(i, w)


@case(T)
def softmax_module_inline(x):
    return nn.Softmax(dim=-1)(x)


@case(T)
def relu_module_inline(x):
    act = nn.ReLU()
    return act(x)


@case(T)
def sequential_inline(x):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(10, 4), nn.Tanh())
    return m(x)


@case(T)
def linear_inline(x):
    torch.manual_seed(0)
    return nn.Linear(10, 3)(x)


@case(T)
def layernorm_module_inline(x):
    return nn.LayerNorm(10)(x)


@case(T)
def identity_and_flatten_modules(x):
    return nn.Identity()(x), nn.Flatten(0)(x)


@case(T)
def module_dict_inline(x):
    acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
    return acts["tanh"](x)


@case(T)
def gelu_approximate(x):
    return F.gelu(x, approximate="tanh"), nn.GELU(approximate="tanh")(x)


@case(T)
def glu_and_softplus(x):
    return F.glu(x, dim=-1), F.softplus(x), F.hardtanh(x)


@case(T)
def cosine_similarity(x):
    return F.cosine_similarity(x, x.flip(0), dim=-1)


@case(T, T)
def binary_cross_entropy_logits(x, y):
    return F.binary_cross_entropy_with_logits(x, (y > 0).float())


@case(T)
def kl_div_loss(x):
    return F.kl_div(x.log_softmax(-1), x.softmax(0), reduction="batchmean")


@case(T3)
def group_norm_functional(x):
    return F.group_norm(x, 2)


@case(T3)
def batch_norm_functional_eval(x):
    mean = torch.zeros(10)
    var = torch.ones(10)
    return F.batch_norm(x, mean, var, training=False)


@case(T)
def rms_norm_manual(x):
    eps = 1e-6
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


@case(T)
def rotary_halves(x):
    x1, x2 = x[..., :5], x[..., 5:]
    return torch.cat((-x2, x1), dim=-1)


@case(I)
def embedding_module_inline(i):
    torch.manual_seed(0)
    return nn.Embedding(10, 4)(i)


@case(T)
def parameter_inline(x):
    w = nn.Parameter(torch.ones(10))
    return x * w


@case(T)
def init_functions(x):
    w = torch.empty(10, 10)
    nn.init.constant_(w, 0.5)
    return x @ w


class _SiLUOnly(nn.Module):
    """nn.Module's constructor and a forward of its own (transformers' SiLUActivation)."""

    def forward(self, x):
        return F.silu(x)


class _Instantier(dict):
    """transformers' ClassInstantier: every lookup builds a new module."""

    def __getitem__(self, key):
        return super().__getitem__(key)()


_ACTS = _Instantier(silu=_SiLUOnly, gelu=nn.GELU)


@case(T)
def activation_registry_inline(x):
    return _ACTS["silu"](x) + _ACTS["gelu"](x)


@case(T)
def module_list_comprehension_inline(x):
    layers = nn.ModuleList([nn.Tanh() for _ in range(3)])
    for layer in layers[1:]:
        x = layer(x)
    return x, len(layers)


@case(T)
def sequential_children_identity_inline(x):
    a = nn.ReLU()
    m = nn.Sequential(a, nn.Sequential(nn.Tanh(), a))
    return m(x), m[0] is a, m[1][1] is a, m
