"""Scaled dot-product attention, one spec per calling convention."""

import torch.nn.functional as F
from hypothesis import strategies as st

from opsweep.catalog.families import spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples

SDPA_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _qkv(draw, *, gqa=False):
    """q (*batch, Hq, L, E), k (*batch, Hkv, S, E), v (*batch, Hkv, S, Ev); with `gqa`,
    Hq is a multiple of Hkv, otherwise the heads agree."""
    dtype = draw(st.sampled_from(SDPA_DTYPES))
    hkv = draw(st.integers(1, 2))
    hq = hkv * draw(st.integers(1, 3)) if gqa else hkv
    batch = (draw(st.integers(1, 2)),) if gqa or draw(st.booleans()) else ()
    L, S, E, Ev = (draw(st.integers(1, 5)) for _ in range(4))
    q = TensorArg(batch + (hq, L, E), dtype)
    k = TensorArg(batch + (hkv, S, E), dtype)
    v = TensorArg(batch + (hkv, S, Ev), dtype)
    return q, k, v


def _scale(draw):
    return {"scale": draw(st.sampled_from([0.5, 1.0]))} if draw(st.booleans()) else {}


def _plain(draw):
    return _qkv(draw), _scale(draw)


def _mask(*, boolean):
    def build(draw):
        q, k, v = _qkv(draw)
        L, S = q.shape[-2], k.shape[-2]
        shape = draw(st.sampled_from([(L, S), (1, L, S), (*q.shape[:-2], L, S)]))
        mask = TensorArg(shape, "bool") if boolean else TensorArg(shape, q.dtype, -2.0, 0.0)
        return (q, k, v), {"attn_mask": mask, **_scale(draw)}
    return build


def _causal(draw):
    return _qkv(draw), {"is_causal": True, **_scale(draw)}


def _gqa(draw):
    return _qkv(draw, gqa=True), {"enable_gqa": True, **_scale(draw)}


def sdpa(name, build, *, ranks=(3, 4), fixed=None):
    return spec(name, examples(build), fn=F.scaled_dot_product_attention,
                aten=("scaled_dot_product_attention",), dtypes=SDPA_DTYPES, ranks=ranks,
                fixed=fixed or {})


SPECS = [
    sdpa("scaled_dot_product_attention", _plain),
    sdpa("sdpa_bool_mask", _mask(boolean=True)),
    sdpa("sdpa_float_mask", _mask(boolean=False)),
    sdpa("sdpa_causal", _causal, fixed={
        "is_causal": "a second spec measures the other value (False: see scaled_dot_product_attention)"}),
    sdpa("sdpa_gqa", _gqa, ranks=(4, 4), fixed={
        "enable_gqa": "a second spec measures the other value (False: see scaled_dot_product_attention)"}),  # grouped heads always come with a batch
]
