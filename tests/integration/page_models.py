"""Tiny models for the models page's tests (tests/integration/test_models_page.py): one whose
export fails at an operator the table measures failing (its page links that operator and
shows the table's repro), in float32 and in float16, beside models of the public set."""

import torch
from torch import nn


class _Lgamma(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.lgamma(self.linear(x).abs() + 1)


def _lgamma(dtype: torch.dtype, name: str) -> dict:
    torch.manual_seed(0)
    return {"model": _Lgamma().to(dtype), "inputs": (torch.randn(4, 8, dtype=dtype),),
            "name": name}


def lgamma_f32() -> dict:
    return _lgamma(torch.float32, "lgamma <b>f32</b>")  # a name with markup: shown escaped


def lgamma_f16() -> dict:
    return _lgamma(torch.float16, "lgamma f16")
