"""timm architectures from ``timm.create_model(..., pretrained=False)`` with a small
configuration (random weights: nothing downloaded) on 32×32 images, each in float32,
float16 and bfloat16, with a dynamic batch:

    opsweep check examples/models/vision_timm.py:timm_vit_bf16
"""

import timm

from . import _variants as v

SIDE = 32
CLASSES = 10


def _arch(name, model, **config):
    return v.Arch(name, "vision", "timm", lambda: timm.create_model(
        model, pretrained=False, num_classes=CLASSES, **config), v.image(SIDE))


ARCHS = (
    _arch("timm_vit", "vit_tiny_patch16_224", img_size=SIDE, patch_size=8, embed_dim=16,
          depth=1, num_heads=2, mlp_ratio=2.0),
    _arch("timm_convnext", "convnext_atto", depths=(1, 1, 1, 1), dims=(8, 16, 16, 32)),
    _arch("timm_mobilenetv3", "mobilenetv3_small_050"),
    # mixer's registered names fix the patch size: the class itself, as timm builds it
    v.Arch("timm_mixer", "vision", "timm", lambda: timm.models.mlp_mixer.MlpMixer(
        img_size=SIDE, patch_size=8, num_blocks=1, embed_dim=16, num_classes=CLASSES),
        v.image(SIDE)),
)

ALL = v.define(ARCHS, globals())
