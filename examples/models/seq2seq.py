"""Encoder-decoders from `transformers` configurations (random weights, nothing downloaded, no
KV cache), each in float32, float16 and bfloat16, with a dynamic batch and dynamic source
and target lengths (whisper: the target's). The model is called
as a user exports it, with the encoder's and the decoder's inputs by keyword (`Seq2Seq`):

    opsweep check examples/models/seq2seq.py:t5_f32
"""

import torch
import transformers

from . import _variants as v

VOCAB = 64


class Seq2Seq(torch.nn.Module):
    """model(encoder input, decoder_input_ids) with the encoder's input by its keyword."""

    def __init__(self, model: torch.nn.Module, encoder_input: str = "input_ids") -> None:
        super().__init__()
        self.model = model
        self.encoder_input = encoder_input

    def forward(self, source: torch.Tensor, decoder_input_ids: torch.Tensor):
        return self.model(**{self.encoder_input: source}, decoder_input_ids=decoder_input_ids)


def _text_pair(batch: int, grow: int = 0) -> tuple:
    g = torch.Generator().manual_seed(v.SEED + batch)
    return (torch.randint(0, VOCAB, (batch, 8 + grow), generator=g),
            torch.randint(0, VOCAB, (batch, 6 + grow), generator=g))


def _audio_pair(batch: int, grow: int = 0) -> tuple:
    g = torch.Generator().manual_seed(v.SEED + batch)
    # whisper's encoder takes exactly 2 * max_source_positions frames of num_mel_bins: only
    # the decoder's length is dynamic
    return (torch.randn(batch, 8, 16, generator=g),
            torch.randint(0, VOCAB, (batch, 6 + grow), generator=g))


def _arch(name, model_class, config_class, family="encoder-decoder", source="input_ids",
          inputs=_text_pair, sequence=(True, True), **config):
    return v.Arch(name, family, "transformers",
                  lambda: Seq2Seq(model_class(config_class(**config)), source), inputs,
                  sequence=sequence)


BART = dict(vocab_size=VOCAB, d_model=16, encoder_layers=1, decoder_layers=1,
            encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=32,
            decoder_ffn_dim=32, max_position_embeddings=32, use_cache=False)

ARCHS = (
    _arch("t5", transformers.T5Model, transformers.T5Config, vocab_size=VOCAB, d_model=16,
          d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1, num_heads=2,
          relative_attention_num_buckets=8, decoder_start_token_id=0, use_cache=False),
    _arch("bart", transformers.BartModel, transformers.BartConfig, **BART),
    _arch("marian", transformers.MarianModel, transformers.MarianConfig,
          decoder_vocab_size=VOCAB, pad_token_id=VOCAB - 1, decoder_start_token_id=VOCAB - 1,
          **BART),
    _arch("pegasus", transformers.PegasusModel, transformers.PegasusConfig,
          pad_token_id=0, decoder_start_token_id=0, **BART),
    _arch("whisper", transformers.WhisperModel, transformers.WhisperConfig, family="audio",
          source="input_features", inputs=_audio_pair, sequence=(False, True), vocab_size=VOCAB, num_mel_bins=8,
          d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
          decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32,
          max_source_positions=8, max_target_positions=16, pad_token_id=VOCAB - 1,
          bos_token_id=0, eos_token_id=1, decoder_start_token_id=0, use_cache=False),
)

ALL = v.define(ARCHS, globals())
