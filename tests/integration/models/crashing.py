"""Plain models for `opsweep check --jobs`: two that export, run and match, and one that
kills its process (os.abort) as the exporter traces it, after eager PyTorch ran it."""

import os

import torch


class Small(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, 3)

    def forward(self, x):
        return torch.relu(self.linear(x))


class Aborts(torch.nn.Module):
    def forward(self, x):
        tracing = isinstance(x, torch._subclasses.FakeTensor) or torch.compiler.is_exporting()
        if tracing:
            os.abort()
        return x * 2


def good_one():
    torch.manual_seed(0)
    return {"model": Small(4), "inputs": (torch.randn(2, 4),), "name": "good one"}


def good_two():
    torch.manual_seed(1)
    return {"model": Small(5), "inputs": (torch.randn(2, 5),), "name": "good two"}


def aborts():
    return {"model": Aborts(), "inputs": (torch.randn(2, 4),), "name": "aborts"}
