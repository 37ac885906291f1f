"""Plain `torch.nn` modules a user writes (an MLP, a small CNN, LSTM and GRU sequence models,
a Transformer encoder layer), randomly initialised, each in float32, float16 and bfloat16,
with a dynamic batch:

    opsweep check examples/models/plain.py:lstm_f32
"""

import torch
from torch import nn

from . import _variants as v

WIDTH = 16


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


def _encoder_layer() -> nn.Module:
    return nn.TransformerEncoderLayer(d_model=WIDTH, nhead=2, dim_feedforward=32,
                                      batch_first=True)


ARCHS = (
    v.Arch("mlp", "plain", "torch.nn", _mlp, v.floats(WIDTH)),
    v.Arch("cnn", "plain", "torch.nn", _cnn, v.image(32)),
    v.Arch("lstm", "plain", "torch.nn", lambda: Recurrent(nn.LSTM), v.floats(8, WIDTH)),
    v.Arch("gru", "plain", "torch.nn", lambda: Recurrent(nn.GRU), v.floats(8, WIDTH)),
    v.Arch("transformer_layer", "plain", "torch.nn", _encoder_layer, v.floats(8, WIDTH)),
)

ALL = v.define(ARCHS, globals())
