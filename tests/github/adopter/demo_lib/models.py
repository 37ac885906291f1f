"""The project's models, as `opsweep check` and `catalog = "used"` take them."""

import torch


class Block(torch.nn.Module):
    def forward(self, x):
        return torch.relu(torch.sin(x) + torch.cos(x))


def build():
    return {"model": Block(), "inputs": (torch.randn(2, 3),), "name": "block"}


def build_large():
    """A deeper model made of the library's own layers, imported from the installed package
    as a library's models do (here when built, so that this file also loads by its path)."""
    import demo_lib
    from demo_lib.packaged import Residual

    model = torch.nn.Sequential(Block(), Residual(), Residual())
    return {"model": model, "inputs": (torch.randn(4, 8),),
            "name": f"large {demo_lib.__version__}"}
