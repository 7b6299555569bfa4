"""200 training steps (SGD with momentum) of a small CNN on random 32x32
images, 10 classes, batch 32. `--quick`: 40 steps. `--floor`: imports and set-up
only (the optimizer imports torch._dynamo), no step: the fixed cost run.py
reports beside the script."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = 40 if "--quick" in sys.argv else 200


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.c3 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc = nn.Linear(64 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = F.max_pool2d(F.relu(self.c3(x)), 2)
        return self.fc(x.flatten(1))


def loss_fn(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x), y)


def main() -> None:
    torch.manual_seed(0)
    model = SmallCNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = [(torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))) for _ in range(8)]
    if "--floor" in sys.argv:
        return
    for step in range(STEPS):
        x, y = data[step % len(data)]
        opt.zero_grad()
        loss = loss_fn(model, x, y)
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
