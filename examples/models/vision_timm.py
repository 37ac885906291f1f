"""timm architectures from ``timm.create_model(..., pretrained=False)`` with a small
configuration (random weights: nothing downloaded) on 32×32 images, each in float32,
float16 and bfloat16, with a dynamic batch: CNNs (`kind` cnn) and vision transformers
(vit; mlp for the MLP-Mixer):

    opsweep check examples/models/vision_timm.py:timm_vit_bf16
"""

import timm

from . import _variants as v

SIDE = 32
CLASSES = 10
#: a one-block transformer of width 16 on 8×8 patches: the ViT variants' shared config
TINY_VIT = dict(img_size=SIDE, patch_size=8, embed_dim=16, depth=1, num_heads=2)


def _arch(name, model, kind="cnn", **config):
    return v.Arch(name, "classification", "timm", lambda: timm.create_model(
        model, pretrained=False, num_classes=CLASSES, **config), v.image(SIDE), kind=kind)


ARCHS = (
    _arch("timm_vit", "vit_tiny_patch16_224", "vit", mlp_ratio=2.0, **TINY_VIT),
    _arch("timm_convnext", "convnext_atto", depths=(1, 1, 1, 1), dims=(8, 16, 16, 32)),
    _arch("timm_mobilenetv3", "mobilenetv3_small_050"),
    # mixer's registered names fix the patch size: the class itself, as timm builds it
    v.Arch("timm_mixer", "classification", "timm", lambda: timm.models.mlp_mixer.MlpMixer(
        img_size=SIDE, patch_size=8, num_blocks=1, embed_dim=16, num_classes=CLASSES),
        v.image(SIDE), kind="mlp"),
    _arch("timm_resnet", "resnet10t"),
    _arch("timm_regnet", "regnetx_002"),
    _arch("timm_ghostnet", "ghostnet_050"),
    _arch("timm_efficientnet", "tinynet_e"),
    _arch("timm_deit", "deit_tiny_distilled_patch16_224", "vit", **TINY_VIT),
    _arch("timm_eva", "eva02_tiny_patch14_224", "vit", mlp_ratio=2.0, **TINY_VIT),
    _arch("timm_swin", "swin_tiny_patch4_window7_224", "vit", img_size=SIDE, patch_size=4,
          window_size=4, embed_dim=16, depths=(1, 1), num_heads=(1, 2)),
    _arch("timm_pvt", "pvt_v2_b0", "vit"),
)

ALL = v.define(ARCHS, globals())
