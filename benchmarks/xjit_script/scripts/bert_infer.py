"""Inference over 500 batches (batch 1, 8 tokens) of a BERT-base-sized
encoder (12 layers, hidden 768, 12 heads, intermediate 3072; random weights),
transformers' BertModel built from a config. `--quick`: 100 batches, 4 layers. `--floor`: imports and set-up
only, no batch (the fixed cost run.py reports beside the script)."""

import sys

import torch
from transformers import BertConfig, BertModel

QUICK = "--quick" in sys.argv
BATCHES = 100 if QUICK else 500


@torch.no_grad()
def infer(model: BertModel, batches: list) -> float:
    total = 0.0
    for ids, mask in batches:
        out = model(input_ids=ids, attention_mask=mask).last_hidden_state
        total += float(out[:, 0].pow(2).mean())
    return total


def main() -> None:
    torch.manual_seed(0)
    cfg = BertConfig(num_hidden_layers=4 if QUICK else 12, hidden_size=768, num_attention_heads=12,
                     intermediate_size=3072, attn_implementation="eager")
    model = BertModel(cfg).eval()
    batches = [(torch.randint(0, cfg.vocab_size, (1, 8)), torch.ones(1, 8, dtype=torch.long))
               for _ in range(16)]
    if "--floor" in sys.argv:
        return
    total = infer(model, [batches[i % len(batches)] for i in range(BATCHES)])
    print(f"checksum {total:.3f}")


if __name__ == "__main__":
    main()
