"""Decoders from `transformers` configurations (random weights, nothing downloaded, no KV
cache), each in float32, float16 and bfloat16, with a dynamic batch and sequence length:

    opsweep check examples/models/decoders.py:llama_bf16
"""

import transformers

from . import _variants as v

VOCAB = 64
SMALL = dict(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
             intermediate_size=32, max_position_embeddings=32, use_cache=False)


def _arch(name, model_class, config_class, **config):
    return v.configured(name, "decoder", v.ids(VOCAB), model_class, config_class,
                        sequence=v.SEQ, **config)


ARCHS = (
    _arch("gpt2", transformers.GPT2Model, transformers.GPT2Config, vocab_size=VOCAB, n_embd=16,
          n_layer=1, n_head=2, n_inner=32, n_positions=32, bos_token_id=0, eos_token_id=0,
          use_cache=False),
    _arch("llama", transformers.LlamaModel, transformers.LlamaConfig, num_key_value_heads=1,
          **SMALL),
    _arch("mistral", transformers.MistralModel, transformers.MistralConfig,
          num_key_value_heads=1, **SMALL),
    _arch("qwen2", transformers.Qwen2Model, transformers.Qwen2Config, num_key_value_heads=1,
          **SMALL),
    _arch("phi", transformers.PhiModel, transformers.PhiConfig, partial_rotary_factor=0.5,
          **SMALL),
    _arch("gpt_neox", transformers.GPTNeoXModel, transformers.GPTNeoXConfig, **SMALL),
    _arch("opt", transformers.OPTModel, transformers.OPTConfig, vocab_size=VOCAB,
          hidden_size=16, num_hidden_layers=1, num_attention_heads=2, ffn_dim=32,
          word_embed_proj_dim=16, max_position_embeddings=32, use_cache=False),
    _arch("bloom", transformers.BloomModel, transformers.BloomConfig, vocab_size=VOCAB,
          hidden_size=16, n_layer=1, n_head=2, use_cache=False),
    _arch("gemma", transformers.GemmaModel, transformers.GemmaConfig, num_key_value_heads=1,
          head_dim=8, **SMALL),
    _arch("stablelm", transformers.StableLmModel, transformers.StableLmConfig,
          num_key_value_heads=1, **SMALL),
)

ALL = v.define(ARCHS, globals())
