"""The project's own custom_translation_table: its sin, measured as a target of its own."""

import torch
from onnxscript import opset18 as op


def sin(self):
    return op.Sin(self)


TABLE = {torch.ops.aten.sin.default: sin}
