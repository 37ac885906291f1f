"""The project's model, as `opsweep check` and `catalog = "used"` take it."""

import torch


class Block(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.sin(x) + torch.cos(x))


def build():
    return {"model": Block(), "inputs": (torch.randn(2, 3),), "name": "block"}
