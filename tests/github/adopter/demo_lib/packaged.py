"""A model that imports the project's own package, as most projects' models do: it loads
only where the project is installed (the action's `install: "-e ."`)."""

import torch

import demo_lib


class Residual(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.sin(x) + x)


def build():
    return {"model": Residual(), "inputs": (torch.randn(2, 3),),
            "name": f"residual {demo_lib.__version__}"}
