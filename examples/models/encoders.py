"""Encoders from `transformers` configurations (random weights, nothing downloaded), each in
float32, float16 and bfloat16, with a dynamic batch and sequence length:

    opsweep check examples/models/encoders.py:bert_f32
"""

import transformers

from . import _variants as v

VOCAB = 64
SMALL = dict(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
             intermediate_size=32, max_position_embeddings=32)


def _arch(name, model_class, config_class, **config):
    return v.configured(name, "encoder", v.ids(VOCAB), model_class, config_class,
                        sequence=v.SEQ, **config)


ARCHS = (
    _arch("bert", transformers.BertModel, transformers.BertConfig, **SMALL),
    _arch("roberta", transformers.RobertaModel, transformers.RobertaConfig,
          **{**SMALL, "max_position_embeddings": 40}),  # positions start after the pad id
    _arch("distilbert", transformers.DistilBertModel, transformers.DistilBertConfig,
          vocab_size=VOCAB, dim=16, n_layers=1, n_heads=2, hidden_dim=32,
          max_position_embeddings=32),
    _arch("albert", transformers.AlbertModel, transformers.AlbertConfig, embedding_size=16,
          **SMALL),
    _arch("electra", transformers.ElectraModel, transformers.ElectraConfig, embedding_size=16,
          **SMALL),
    _arch("deberta_v2", transformers.DebertaV2Model, transformers.DebertaV2Config,
          relative_attention=True, position_buckets=8, pos_att_type=["p2c", "c2p"], **SMALL),
    _arch("mpnet", transformers.MPNetModel, transformers.MPNetConfig,
          **{**SMALL, "max_position_embeddings": 40}),  # its buckets: 32, as its code assumes
    _arch("convbert", transformers.ConvBertModel, transformers.ConvBertConfig,
          embedding_size=16, head_ratio=2, conv_kernel_size=3, **SMALL),
)

ALL = v.define(ARCHS, globals())
