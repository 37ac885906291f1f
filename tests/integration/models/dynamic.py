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


class Lgamma(torch.nn.Module):
    """torch.lgamma, which the exporter's decomposition turns into ``prims::lgamma``."""

    def forward(self, x):
        return torch.lgamma(x.abs() + 1)


class Positions(torch.nn.Module):
    """An int32 cumsum (position ids from a mask): its decomposition converts the input to
    int64 with ``prims::convert_element_type``, as a transformers encoder's does."""

    def forward(self, mask):
        return torch.cumsum(mask, 1)


class DirectPrims(torch.nn.Module):
    """Calls a ``prims`` operator itself: no aten operator made it, no spec measures it."""

    def forward(self, x):
        return torch.ops.prims.lgamma(x.abs() + 1)


def lgamma():
    return {"model": Lgamma(), "inputs": (torch.rand(2, 3),), "name": "lgamma"}


def positions():
    return {"model": Positions(), "inputs": (torch.ones(2, 5, dtype=torch.int32),),
            "name": "positions"}


def direct_prims():
    return {"model": DirectPrims(), "inputs": (torch.rand(2, 3),), "name": "direct prims"}


class Ranked(torch.nn.Module):
    """Default overloads whose translation is missing: kthvalue, cummax, cummin."""

    def forward(self, x):
        return torch.kthvalue(x, 2, 1)[0] + torch.cummax(x, 1)[0][:, 0] \
            + torch.cummin(x, 1)[0][:, 0]


def ranked():
    return {"model": Ranked(), "inputs": (torch.rand(3, 4),), "name": "ranked"}
