"""Two small models with a dynamic batch: one whose dynamic capture asks for the batch's
symbolic size (``sym_size``: a shape query, not an operator use), and one whose dynamic
capture fails because it branches on the batch size (so its uses come from a static one)."""

import torch

BATCH = torch.export.Dim("batch", min=2, max=64)


class Flatten(torch.nn.Module):
    """reshape(x.shape[0], -1) on a dynamic batch: the capture reads the batch's size."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(12, 3)

    def forward(self, x):
        return torch.relu(self.fc(x.reshape(x.shape[0], -1)))


class Branchy(torch.nn.Module):
    """Takes another path for a batch above 4: a guard on the dynamic batch, which
    torch.export refuses (the dynamic capture fails), while a static capture traces it."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        if x.shape[0] > 4:
            return self.fc(x) * 2
        return torch.relu(self.fc(x))


def flatten():
    torch.manual_seed(0)
    return {"model": Flatten(), "inputs": (torch.randn(3, 3, 4),), "name": "flatten",
            "dynamic_shapes": ({0: BATCH},), "dynamic_inputs": (torch.randn(5, 3, 4),)}


def branchy():
    torch.manual_seed(0)
    return {"model": Branchy(), "inputs": (torch.randn(3, 8),), "name": "branchy",
            "dynamic_shapes": ({0: BATCH},), "dynamic_inputs": (torch.randn(6, 8),)}
