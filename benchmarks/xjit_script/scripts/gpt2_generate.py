"""Greedy generation of 200 tokens with a GPT-2-small-sized model (12 layers,
d_model 768, 12 heads, vocab 50257; random weights), written in plain torch.
A static KV cache (allocated for the whole sequence, written with index_copy,
attention masked to the filled positions) keeps every decode step at one new
token and the same shapes. `--quick`: 40 tokens, 4 layers. `--floor`: imports and
set-up only, no token (the fixed cost run.py reports beside the script)."""

import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

QUICK = "--quick" in sys.argv
LAYERS, D, HEADS, VOCAB, CTX = (4 if QUICK else 12), 768, 12, 50257, 1024
STEPS = 40 if QUICK else 200


class Attention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, pos: torch.Tensor,
                mask: torch.Tensor) -> tuple:
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(x).split(d, dim=2)
        q = q.view(b, t, self.heads, hd).transpose(1, 2)
        k_cache = k_cache.index_copy(2, pos, k.view(b, t, self.heads, hd).transpose(1, 2))
        v_cache = v_cache.index_copy(2, pos, v.view(b, t, self.heads, hd).transpose(1, 2))
        att = (q @ k_cache.transpose(-2, -1)) / math.sqrt(hd)
        y = att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v_cache
        return self.proj(y.transpose(1, 2).reshape(b, t, d)), k_cache, v_cache


class Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, pos: torch.Tensor,
                mask: torch.Tensor) -> tuple:
        a, k, v = self.attn(self.ln1(x), k_cache, v_cache, pos, mask)
        x = x + a
        return x + self.out(F.gelu(self.fc(self.ln2(x)))), k, v


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(CTX, D)
        self.blocks = nn.ModuleList([Block(D, HEADS) for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(D)

    def forward(self, idx: torch.Tensor, pos: torch.Tensor, ks: list, vs: list) -> tuple:
        x = self.tok(idx) + self.pos(pos)
        mask = torch.arange(ks[0].shape[2])[None, :] <= pos[:, None]  # [t, cache length]
        new_k, new_v = [], []
        for blk, k, v in zip(self.blocks, ks, vs):
            x, k, v = blk(x, k, v, pos, mask)
            new_k.append(k)
            new_v.append(v)
        logits = self.ln_f(x[:, -1, :]) @ self.tok.weight.t()
        return logits, new_k, new_v


@torch.no_grad()
def generate(model: GPT, prompt: torch.Tensor, steps: int) -> list:
    b, t = prompt.shape
    empty = torch.zeros(b, HEADS, t + steps, D // HEADS)
    ks, vs = [empty] * LAYERS, [empty] * LAYERS
    logits, ks, vs = model(prompt, torch.arange(t), ks, vs)
    out = []
    for i in range(steps):
        nxt = logits.argmax(dim=-1, keepdim=True)
        out.append(int(nxt[0, 0]))
        logits, ks, vs = model(nxt, torch.tensor([t + i]), ks, vs)
    return out


def main() -> None:
    torch.manual_seed(0)
    model = GPT().eval()
    prompt = torch.randint(0, VOCAB, (1, 8))
    if "--floor" in sys.argv:
        return
    tokens = generate(model, prompt, STEPS)
    print("tokens:", tokens[:10], "... checksum:", sum(tokens))


if __name__ == "__main__":
    main()
