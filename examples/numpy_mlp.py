"""A small model whose pre- and post-processing is NumPy: standardize the
features with NumPy, run a torch MLP, turn the logits into probabilities and a
report with NumPy again. Under `python -m xjit` the NumPy code is captured into
the same graphs as the torch code (docs/numpy-capture.md)."""

import numpy as np
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, d_in: int, d_hidden: int, d_out: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.tanh(self.fc1(x)))


def standardize(a: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    return (a - mean) / np.maximum(std, 1e-6)


def predict(model: MLP, a: np.ndarray, mean: np.ndarray, std: np.ndarray):
    x = torch.from_numpy(standardize(a, mean, std).astype(np.float32))
    with torch.no_grad():
        logits = model(x).numpy()
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return p, p.argmax(axis=1), -np.log(p.max(axis=1)).mean()


def main() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    train = rng.normal(3.0, 2.0, (256, 8))
    mean, std = train.mean(axis=0), train.std(axis=0, ddof=1)
    model = MLP(8, 16, 4)
    for step in range(4):
        batch = rng.normal(3.0, 2.0, (32, 8))
        p, labels, nll = predict(model, batch, mean, std)
        print(f"batch {step}: p[0] = {np.array2string(p[0], precision=5)} "
              f"classes = {np.bincount(labels, minlength=4).tolist()} nll = {nll:.5f}")


if __name__ == "__main__":
    main()
