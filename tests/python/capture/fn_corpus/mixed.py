"""Mixtures of the above, the shape of real model code."""

import functools
import itertools
import math
from collections import OrderedDict

import torch
import torch.nn.functional as F

from . import T, T3, V, case


@case(T, T, T)
def mlp_block(x, w1, w2):
    h = F.gelu(x @ w1)
    return x + F.dropout(h @ w2, p=0.1, training=False)


@case(T)
def multihead_split_merge(x):
    heads = 2
    b, d = x.shape
    q = x.view(b, heads, d // heads).transpose(0, 1)
    att = (q @ q.transpose(-1, -2)) / math.sqrt(d // heads)
    out = att.softmax(-1) @ q
    return out.transpose(0, 1).reshape(b, d)


@case(T)
def layer_outputs_dict(x):
    outputs = OrderedDict()
    h = x
    for i in range(3):
        h = torch.tanh(h)
        outputs[f"layer{i}"] = h
    return outputs


@case(T)
def hidden_states_tuple(x):
    all_hidden = ()
    h = x
    for _ in range(3):
        all_hidden = all_hidden + (h,)
        h = h * 0.5
    return h, all_hidden


@case(T)
def config_dict_driven(x):
    cfg = {"act": "relu", "norm": True, "eps": 1e-5}
    h = getattr(F, cfg["act"])(x)
    if cfg["norm"]:
        h = F.layer_norm(h, h.shape[-1:], eps=cfg["eps"])
    return h


@case(T)
def kwargs_dict_call(x):
    kw = {"dim": -1, "keepdim": True}
    return x.sum(**kw), x.mean(**kw)


@case(T)
def residual_stack(x):
    layers = [functools.partial(torch.mul, other=0.5), torch.tanh, torch.sigmoid]
    for f in layers:
        x = x + f(x)
    return x


@case(T)
def pairwise_distances_loop(x):
    pts = list(x[:4])
    return {(i, j): (a - b).norm() for (i, a), (j, b) in itertools.combinations(enumerate(pts), 2)}


@case(T)
def sinusoidal_positions(x):
    n, d = x.shape
    pos = torch.arange(n).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe = torch.zeros(n, d)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return x + pe


@case(T)
def causal_mask_builder(x):
    n = x.shape[0]
    mask = torch.full((n, n), float("-inf")).triu(1)
    return (x + mask).softmax(-1)


@case(T)
def loss_with_logging(x):
    losses = {}
    losses["l2"] = x.pow(2).mean()
    losses["l1"] = x.abs().mean()
    total = sum(losses.values())
    return total, {k: v.detach() for k, v in losses.items()}


@case(T3)
def batch_loop_unrolled(x):
    return torch.stack([F.normalize(sample, dim=-1) for sample in x])


@case(T)
def topk_gating(x):
    logits = x.softmax(-1)
    w, idx = logits.topk(2, dim=-1)
    w = w / w.sum(-1, keepdim=True)
    return w, idx


@case(T)
def clip_by_norm(x):
    norm = x.norm()
    scale = torch.clamp(1.0 / (norm + 1e-6), max=1.0)
    return x * scale


@case(T)
def ema_update(x):
    avg = torch.zeros_like(x)
    for decay in (0.9, 0.99):
        avg = decay * avg + (1 - decay) * x
    return avg


@case(T)
def optional_arguments(x):
    def f(t, scale=None, bias=None):
        if scale is not None:
            t = t * scale
        if bias is not None:
            t = t + bias
        return t
    return f(x), f(x, scale=2.0), f(x, bias=x)


@case(T)
def shape_arith_reshape(x):
    b, n = x.shape
    return x.reshape(b // 2, 2, n).mean(1)


@case(T)
def chunked_processing(x):
    outs = []
    for chunk in torch.split(x, 4, dim=0):
        outs.append(chunk.cumsum(-1))
    return torch.cat(outs, dim=0)


@case(V)
def list_of_tensors_to_dict_by_name(v):
    names = ["q", "k", "v"]
    parts = dict(zip(names, v.split([3, 3, 4])))
    return parts["q"].sum() + parts["k"].mean(), sorted(parts)


@case(T)
def accumulate_grad_free_stats(x):
    stats = {"min": [], "max": []}
    for row in x[:3]:
        stats["min"].append(row.min())
        stats["max"].append(row.max())
    return {k: torch.stack(v) for k, v in stats.items()}


@case(T)
def string_keyed_dispatch(x):
    ops = {"add": torch.add, "mul": torch.mul}
    return [ops[name](x, 2) for name in ("add", "mul")]


@case(T)
def nested_containers_return(x):
    return {"a": [x, (x + 1, {"b": x * 2})], "c": None, "d": 3}
