"""Vision models from `transformers` configurations (random weights, nothing downloaded) on
32×32 images, each in float32, float16 and bfloat16, with a dynamic batch:

    opsweep check examples/models/vision.py:swin_f16
"""

import transformers

from . import _variants as v

SIDE = 32
VIT = dict(image_size=SIDE, patch_size=8, num_channels=3, hidden_size=16, num_hidden_layers=1,
           num_attention_heads=2, intermediate_size=32)


def _arch(name, model_class, config_class, **config):
    return v.configured(name, "vision", v.image(SIDE), model_class, config_class, **config)


ARCHS = (
    _arch("vit", transformers.ViTModel, transformers.ViTConfig, **VIT),
    _arch("deit", transformers.DeiTModel, transformers.DeiTConfig, **VIT),
    _arch("dinov2", transformers.Dinov2Model, transformers.Dinov2Config, image_size=SIDE,
          patch_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
          mlp_ratio=2),
    _arch("swin", transformers.SwinModel, transformers.SwinConfig, image_size=SIDE,
          patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4),
    _arch("convnext", transformers.ConvNextModel, transformers.ConvNextConfig,
          hidden_sizes=[16, 32], depths=[1, 1], num_stages=2),
    _arch("resnet", transformers.ResNetModel, transformers.ResNetConfig, embedding_size=8,
          hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic"),
    _arch("regnet", transformers.RegNetModel, transformers.RegNetConfig, embedding_size=8,
          hidden_sizes=[8, 16], depths=[1, 1], groups_width=8, layer_type="x"),
    _arch("mobilenet_v2", transformers.MobileNetV2Model, transformers.MobileNetV2Config,
          image_size=SIDE, depth_multiplier=0.25, min_depth=4, finegrained_output=False),
    _arch("efficientnet", transformers.EfficientNetModel, transformers.EfficientNetConfig,
          image_size=SIDE, width_coefficient=0.1, depth_coefficient=0.1, hidden_dim=128),
    _arch("segformer", transformers.SegformerModel, transformers.SegformerConfig,
          num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
          patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2],
          decoder_hidden_size=32),
)

ALL = v.define(ARCHS, globals())
