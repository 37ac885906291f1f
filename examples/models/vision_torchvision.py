"""torchvision architectures built with random weights (``weights=None``: nothing downloaded),
as small as their constructors allow, on 32×32 images, each in float32, float16 and
bfloat16, with a dynamic batch:

    opsweep check examples/models/vision_torchvision.py:tv_resnet18_f32
"""

import torchvision

from . import _variants as v

SIDE = 32
CLASSES = 10


def _arch(name, build, kind="cnn"):
    return v.Arch(name, "classification", "torchvision", build, v.image(SIDE), kind=kind)


ARCHS = (
    _arch("tv_resnet18", lambda: torchvision.models.resnet18(weights=None, num_classes=CLASSES)),
    _arch("tv_mobilenet_v3", lambda: torchvision.models.mobilenet_v3_small(
        weights=None, num_classes=CLASSES, width_mult=0.25)),
    _arch("tv_squeezenet", lambda: torchvision.models.squeezenet1_1(weights=None,
                                                                    num_classes=CLASSES)),
    _arch("tv_shufflenet", lambda: torchvision.models.shufflenet_v2_x0_5(weights=None,
                                                                         num_classes=CLASSES)),
    _arch("tv_vit", lambda: torchvision.models.VisionTransformer(
        image_size=SIDE, patch_size=8, num_layers=1, num_heads=2, hidden_dim=16, mlp_dim=32,
        num_classes=CLASSES), "vit"),
    _arch("tv_mnasnet", lambda: torchvision.models.mnasnet0_5(weights=None, num_classes=CLASSES)),
    _arch("tv_regnet", lambda: torchvision.models.regnet_y_400mf(weights=None,
                                                                 num_classes=CLASSES)),
    _arch("tv_efficientnet", lambda: torchvision.models.efficientnet_b0(weights=None,
                                                                        num_classes=CLASSES)),
    _arch("tv_swin", lambda: torchvision.models.SwinTransformer(
        patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=[4, 4],
        num_classes=CLASSES), "vit"),
)

ALL = v.define(ARCHS, globals())
