"""Recurrent layers and cells as nn.Modules: the constructor parameters (sizes,
layers, direction, batch_first, dtype) are drawn into Example.init."""

import torch
import torch.nn as nn
from hypothesis import strategies as st

from opsweep.catalog.families import spec
from opsweep.model import TensorArg
from opsweep.catalog.strategies import examples

RNN_DTYPES = ("float32", "float64", "float16", "bfloat16")


def _factory(cls, **fixed):
    """A module constructor taking the dtype by name, so init stays plain data."""
    def make(dtype="float32", **init):
        return cls(**fixed, **init, dtype=getattr(torch, dtype))
    make.__name__ = cls.__name__
    return make


def _layer(*, lstm=False):
    def build(draw):
        dtype = draw(st.sampled_from(RNN_DTYPES))
        hin, hidden = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        layers, bidir = draw(st.integers(1, 2)), draw(st.booleans())
        batch_first = draw(st.booleans())
        init = {"input_size": hin, "hidden_size": hidden, "num_layers": layers,
                "bias": draw(st.booleans()), "batch_first": batch_first,
                "bidirectional": bidir, "dtype": dtype}
        hout = hidden
        if lstm and hidden > 1 and draw(st.booleans()):
            init["proj_size"] = hout = draw(st.integers(1, hidden - 1))
        seq, n = draw(st.integers(1, 4)), draw(st.integers(1, 2))
        batched = draw(st.booleans()) or draw(st.booleans())  # unbatched one time in four
        if not batched:
            x_shape, lead = (seq, hin), ()
        else:
            x_shape, lead = ((n, seq, hin) if batch_first else (seq, n, hin)), (n,)
        args = [TensorArg(x_shape, dtype)]
        if draw(st.booleans()):  # an initial state, else zeros
            states = layers * (2 if bidir else 1)
            h0 = TensorArg((states, *lead, hout), dtype)
            args.append((h0, TensorArg((states, *lead, hidden), dtype)) if lstm else h0)
        return tuple(args), {}, init
    return build


def _cell(*, lstm=False):
    def build(draw):
        dtype = draw(st.sampled_from(RNN_DTYPES))
        hin, hidden = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        init = {"input_size": hin, "hidden_size": hidden, "bias": draw(st.booleans()),
                "dtype": dtype}
        lead = (draw(st.integers(1, 3)),) if draw(st.booleans()) or draw(st.booleans()) else ()
        args = [TensorArg((*lead, hin), dtype)]
        if draw(st.booleans()):
            h = TensorArg((*lead, hidden), dtype)
            args.append((h, TensorArg((*lead, hidden), dtype)) if lstm else h)
        return tuple(args), {}, init
    return build


def rnn(name, build, module, *, ranks):
    return spec(name, examples(build), module=module, dtypes=RNN_DTYPES,
                ranks=ranks)


SPECS = [
    rnn("lstm", _layer(lstm=True), _factory(nn.LSTM), ranks=(2, 3)),
    rnn("gru", _layer(), _factory(nn.GRU), ranks=(2, 3)),
    rnn("rnn_tanh", _layer(), _factory(nn.RNN, nonlinearity="tanh"), ranks=(2, 3)),
    rnn("rnn_relu", _layer(), _factory(nn.RNN, nonlinearity="relu"), ranks=(2, 3)),
    rnn("lstm_cell", _cell(lstm=True), _factory(nn.LSTMCell), ranks=(1, 2)),
    rnn("gru_cell", _cell(), _factory(nn.GRUCell), ranks=(1, 2)),
    rnn("rnn_tanh_cell", _cell(), _factory(nn.RNNCell, nonlinearity="tanh"), ranks=(1, 2)),
    rnn("rnn_relu_cell", _cell(), _factory(nn.RNNCell, nonlinearity="relu"), ranks=(1, 2)),
]
