"""A model whose outputs diverge in onnxruntime at one node: avg_pool3d with
divisor_override (the artifact measures that argument failing at numerics, unbatched)."""

import torch


class M(torch.nn.Module):
    def forward(self, x):
        y = torch.relu(x) * 2
        z = torch.nn.functional.avg_pool3d(y, 2, divisor_override=3)
        return z + 1


def diverging():
    torch.manual_seed(0)
    return {"model": M(), "inputs": (torch.randn(1, 2, 4, 4, 4),), "name": "pool"}
