"""torch's grad and autocast modes, tensors made leaves, distributions and nn
containers built inside a function (issue 18)."""

import torch
from torch import nn

from . import P, T, V, case


@case(T)
def no_grad_nested_enable(x):
    with torch.no_grad():
        y = x * 2
        with torch.enable_grad():
            z = y + 1
    return y, z


@case(T)
def set_grad_enabled_false(x):
    with torch.set_grad_enabled(False):
        y = x.sin()
    return y + 1


@case(T)
def is_grad_enabled_branch(x):
    if torch.is_grad_enabled():
        return x * 2
    return x


@case(T)
def autocast_cpu_disabled_matmul(x):
    with torch.autocast(device_type="cpu", enabled=False):
        y = x @ x.T
    return y.sum()


@case(T)
def autocast_is_enabled_query(x):
    return x + 1, torch.is_autocast_enabled("cpu")


@case(T)
def inference_mode_disabled(x):
    with torch.inference_mode(False):
        return x * 3


@case(T)
def detach_then_leaf(x):
    w = x.detach().clone().requires_grad_()
    return w.is_leaf, w.requires_grad, (w * 2).detach()


@case(T)
def requires_grad_false_on_copy(x):
    y = x.clone().requires_grad_(False)
    return y * 2


@case(T)
def module_list_inline(x):
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
    for layer in layers:
        x = layer(x)
    return x


@case(T)
def sequential_stateless_inline(x):
    m = nn.Sequential(nn.ReLU(), nn.Dropout(p=0.0), nn.Softplus())
    return m(x)


@case(T)
def distributions_uniform_sample_free(x):
    d = torch.distributions.Uniform(torch.zeros(10), torch.ones(10))
    return d.log_prob(x.clamp(0.01, 0.99)), d.entropy()


@case(P)
def distributions_bernoulli_probs(p):
    d = torch.distributions.Bernoulli(probs=p / (p.max() + 1))
    return d.entropy(), d.mean


@case(T)
def distributions_normal_no_validate(x):
    d = torch.distributions.Normal(x, torch.ones_like(x), validate_args=False)
    return d.log_prob(x)


@case(V)
def distributions_independent_normal(v):
    d = torch.distributions.Independent(torch.distributions.Normal(v, 1.0), 1)
    return d.log_prob(v)
