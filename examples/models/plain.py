"""Plain `torch.nn` modules a user writes (an MLP, a small CNN, LSTM and GRU sequence models,
a Transformer encoder layer, a temporal 1-D CNN, a one-level U-Net), randomly initialised,
each in float32, float16 and bfloat16, with a dynamic batch (and time, for the sequence
models):

    opsweep check examples/models/plain.py:lstm_f32
"""

import torch
from torch import nn

from . import _variants as v

WIDTH = 16
SEQUENCE = v.floats(8, WIDTH, sequence=True)  # (batch, time, features), the time dynamic


class Recurrent(nn.Module):
    """An LSTM or GRU over (batch, time, features), then a linear head on every step."""

    def __init__(self, cell: type[nn.Module]) -> None:
        super().__init__()
        self.rnn = cell(WIDTH, WIDTH, num_layers=1, batch_first=True)
        self.head = nn.Linear(WIDTH, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.head(out)


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(WIDTH, 32), nn.GELU(), nn.Linear(32, WIDTH), nn.LayerNorm(WIDTH))


def _cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))


class TemporalConv(nn.Module):
    """Two 1-D convolutions over (batch, time, features), the time axis kept."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(WIDTH, WIDTH, 3, padding=1), nn.ReLU(),
                                 nn.Conv1d(WIDTH, WIDTH, 3, padding=2, dilation=2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.transpose(1, 2)).transpose(1, 2)


class UNet(nn.Module):
    """A one-level U-Net: down by pooling, up by nearest interpolation, a skip concat."""

    def __init__(self) -> None:
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.mid = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.out = nn.Conv2d(16, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = self.down(x)
        up = nn.functional.interpolate(self.mid(skip), scale_factor=2.0, mode="nearest")
        return self.out(torch.cat([skip, up], dim=1))


def _encoder_layer() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=WIDTH, nhead=2, dim_feedforward=32,
                                      batch_first=True)


ARCHS = (
    v.Arch("mlp", "plain", "torch.nn", _mlp, v.floats(WIDTH)),
    v.Arch("cnn", "plain", "torch.nn", _cnn, v.image(32)),
    v.Arch("lstm", "plain", "torch.nn", lambda: Recurrent(nn.LSTM), SEQUENCE, sequence=v.SEQ),
    v.Arch("gru", "plain", "torch.nn", lambda: Recurrent(nn.GRU), SEQUENCE, sequence=v.SEQ),
    v.Arch("transformer_layer", "plain", "torch.nn", _encoder_layer, SEQUENCE,
           sequence=v.SEQ),
    v.Arch("temporal_conv", "plain", "torch.nn", TemporalConv, SEQUENCE, sequence=v.SEQ),
    v.Arch("unet", "plain", "torch.nn", UNet, v.image(32)),
)

ALL = v.define(ARCHS, globals())
