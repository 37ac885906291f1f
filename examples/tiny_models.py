"""Tiny real architectures from `transformers` configurations, randomly initialised (no
weights downloaded), for `opsweep check` (docs/check.md) and its tests:

    opsweep check examples/tiny_models.py:bert examples/tiny_models.py:resnet_half

Each callable returns the documented contract: a dict with the model, its example inputs,
and optionally dynamic_shapes, dynamic_inputs and a name.
"""

import torch
import transformers

SEED = 0


def _text(model_class, config, dtype=torch.float32, name="", dynamic=False):
    torch.manual_seed(SEED)
    model = model_class(config).eval().to(dtype)
    ids = torch.randint(0, config.vocab_size, (2, 8))
    case = {"model": model, "inputs": (ids,), "name": name}
    if dynamic:
        batch = torch.export.Dim("batch", min=2, max=16)
        case["dynamic_shapes"] = ({0: batch},)
        case["dynamic_inputs"] = (torch.randint(0, config.vocab_size, (3, 8)),)
    return case


def _bert_config():
    return transformers.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1,
                                   num_attention_heads=2, intermediate_size=32,
                                   max_position_embeddings=32)


def _llama_config():
    return transformers.LlamaConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1,
                                    num_attention_heads=2, num_key_value_heads=1,
                                    intermediate_size=32, max_position_embeddings=32,
                                    use_cache=False)


def bert():
    return _text(transformers.BertModel, _bert_config(), name="bert", dynamic=True)


def bert_half():
    return _text(transformers.BertModel, _bert_config(), torch.float16, "bert float16")


def llama():
    return _text(transformers.LlamaModel, _llama_config(), name="llama")


def llama_half():
    return _text(transformers.LlamaModel, _llama_config(), torch.float16, "llama float16")


def _image(model_class, config, dtype, name, side):
    torch.manual_seed(SEED)
    model = model_class(config).eval().to(dtype)
    return {"model": model, "inputs": (torch.randn(1, 3, side, side, dtype=dtype),), "name": name}


def _resnet_config():
    return transformers.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16],
                                     depths=[1, 1], layer_type="basic")


def _vit_config():
    return transformers.ViTConfig(image_size=16, patch_size=8, num_channels=3, hidden_size=16,
                                  num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=32)


def resnet():
    return _image(transformers.ResNetModel, _resnet_config(), torch.float32, "resnet", 32)


def resnet_half():
    return _image(transformers.ResNetModel, _resnet_config(), torch.bfloat16, "resnet bfloat16", 32)


def vit():
    return _image(transformers.ViTModel, _vit_config(), torch.float32, "vit", 16)


def vit_half():
    return _image(transformers.ViTModel, _vit_config(), torch.float16, "vit float16", 16)


ALL = ("bert", "bert_half", "llama", "llama_half", "resnet", "resnet_half", "vit", "vit_half")
