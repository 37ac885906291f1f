"""torch.fft: complex-to-complex, real-to-complex and complex-to-real transforms in
1, 2 and n dimensions, shifts, frequencies and the short-time transforms."""

import torch
from hypothesis import strategies as st

from opsweep.catalog.families import EXAMPLE_TABLE, no_translation, optional, present, spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples, shapes

REAL = ("float32", "float64")
CPLX = ("complex64", "complex128")
NORMS = st.sampled_from([None, "backward", "ortho", "forward"])


def _dtypes(kind):
    """c2c takes real or complex input, r2c real, c2r complex."""
    return {"c2c": REAL + CPLX, "r2c": REAL, "c2r": CPLX}[kind]


def _fft(kind, ndim):
    """ndim 1: `n`/`dim`; 2: `s`/`dim` pair; 0 (n-d): optional `s`/`dim` of any length.
    A complex-to-real transform's default output length is 2*(m-1): m >= 2 then."""
    def build(draw):
        dtype = draw(st.sampled_from(_dtypes(kind)))
        lo = 1 if ndim == 1 else 2
        min_side = 2 if kind == "c2r" else 1
        shape = draw(shapes(min_rank=lo, max_rank=3, min_side=min_side, max_side=5))
        x = TensorArg(shape, dtype)
        kwargs = {}
        norm = draw(NORMS)
        if norm is not None:
            kwargs["norm"] = norm
        if ndim == 1:
            kwargs["dim"] = draw(st.integers(-len(shape), len(shape) - 1))
            if draw(st.booleans()):
                kwargs["n"] = draw(st.integers(1, 6))
            return (x,), kwargs
        if ndim == 2:
            dims = draw(st.sampled_from([(-2, -1), (0, -1), (-1, 0)]))
        else:
            count = draw(st.integers(1, len(shape)))
            dims = tuple(draw(st.permutations(range(len(shape))))[:count])
        if ndim == 2 or draw(st.booleans()):
            kwargs["dim"] = dims
        if draw(st.booleans()):
            kwargs["s"] = tuple(draw(st.integers(1, 6)) for _ in dims)
            kwargs["dim"] = dims
        return (x,), kwargs
    return build


def _shift(draw):
    dtype = draw(st.sampled_from(REAL + CPLX + ("int64",)))
    x = TensorArg(draw(shapes(min_rank=1, max_rank=4)), dtype)
    if draw(st.booleans()):
        return (x,), {}
    count = draw(st.integers(1, x.rank))
    return (x,), {"dim": tuple(draw(st.permutations(range(x.rank)))[:count])}


def _freq(draw):
    """n, maybe d, and maybe a dtype other than the default (eager refuses an integral one:
    fftfreq requires a floating point or complex dtype; a complex one has no arange)."""
    return (draw(st.integers(1, 6)),), present(
        d=draw(optional(st.sampled_from([0.5, 2.0]))),
        dtype=draw(optional(st.sampled_from([torch.float64, torch.float16]))))


def _stft(draw):
    dtype = draw(st.sampled_from(REAL))
    n_fft = draw(st.integers(1, 4))
    length = draw(st.integers(n_fft, 6))
    x = TensorArg(((draw(st.integers(1, 2)),) if draw(st.booleans()) else ()) + (length,), dtype)
    win = draw(st.integers(1, n_fft))
    kwargs = {"n_fft": n_fft, "hop_length": draw(st.integers(1, n_fft)), "win_length": win,
              "center": draw(st.booleans()), "normalized": draw(st.booleans()),
              "onesided": draw(st.booleans()),
              "return_complex": draw(st.booleans())}  # False: the real (..., 2) view
    if draw(st.booleans()):
        kwargs["window"] = TensorArg((win,), dtype, 0.5, 1.0)
    return (x,), kwargs


def _istft(draw):
    dtype = draw(st.sampled_from(CPLX))
    n_fft = draw(st.integers(1, 4))
    frames = draw(st.integers(2, 5))
    lead = (draw(st.integers(1, 2)),) if draw(st.booleans()) else ()
    x = TensorArg(lead + (n_fft // 2 + 1, frames), dtype)
    # a rectangular window with hop <= win_length overlaps everywhere (NOLA holds); eager
    # fails on n_fft=1 with center=True (its window envelope trim reduces an empty tensor)
    return (x,), {"n_fft": n_fft, "hop_length": draw(st.integers(1, n_fft)),
                  "center": n_fft > 1 and draw(st.booleans()),
                  "normalized": draw(st.booleans())}


def fft(name, kind, ndim):
    return spec(name, examples(_fft(kind, ndim)), fn=getattr(torch.fft, name[4:]),
                dtypes=_dtypes(kind), ranks=(1 if ndim == 1 else 2, 3))


SPECS = [
    fft("fft_fft", "c2c", 1), fft("fft_ifft", "c2c", 1),
    fft("fft_rfft", "r2c", 1), fft("fft_irfft", "c2r", 1),
    fft("fft_hfft", "c2r", 1), fft("fft_ihfft", "r2c", 1),
    fft("fft_fft2", "c2c", 2), fft("fft_ifft2", "c2c", 2),
    fft("fft_rfft2", "r2c", 2), fft("fft_irfft2", "c2r", 2),
    fft("fft_hfft2", "c2r", 2), fft("fft_ihfft2", "r2c", 2),
    fft("fft_fftn", "c2c", 0), fft("fft_ifftn", "c2c", 0),
    fft("fft_rfftn", "r2c", 0), fft("fft_irfftn", "c2r", 0),
    fft("fft_hfftn", "c2r", 0), fft("fft_ihfftn", "r2c", 0),
    spec("fft_fftshift", examples(_shift), fn=torch.fft.fftshift,
         dtypes=REAL + CPLX + ("int64",), ranks=(1, 4)),
    spec("fft_ifftshift", examples(_shift), fn=torch.fft.ifftshift,
         dtypes=REAL + CPLX + ("int64",), ranks=(1, 4)),
    spec("fft_fftfreq", examples(_freq), fn=torch.fft.fftfreq, ranks=(0, 0),
         gap=no_translation("fft_fftfreq", closed_by=EXAMPLE_TABLE)),
    spec("fft_rfftfreq", examples(_freq), fn=torch.fft.rfftfreq, ranks=(0, 0),
         gap=no_translation("fft_rfftfreq", closed_by=EXAMPLE_TABLE)),
    spec("stft", examples(_stft), fn=torch.stft, dtypes=REAL, ranks=(1, 2)),
    spec("istft", examples(_istft), fn=torch.istft, dtypes=CPLX, ranks=(2, 3)),
]
