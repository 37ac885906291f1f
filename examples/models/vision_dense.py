"""torchvision detection and segmentation architectures built with random weights
(``weights=None, weights_backbone=None``: nothing downloaded), as small as their
constructors allow, on 64×64 images, each in float32, float16 and bfloat16 (SSDlite and
Faster R-CNN in float32 only: eager PyTorch itself fails at the half dtypes):

    opsweep check examples/models/vision_dense.py:tv_ssdlite_f32

A detector is called as a user exports it, on a batch of images, postprocessing
included (anchors, box decoding, non-maximum suppression): it returns, per image, its
boxes, scores and labels. Its batch is static: torchvision's detectors take the batch
as a Python list of images (`Detector` unbinds the tensor into one), whose length
torch.export cannot make dynamic, and the number of boxes per image depends on the
values. The segmentation models take a batched tensor and return per-pixel logits: a
dynamic batch.
"""

import torch
import torchvision
from torchvision.models import detection, segmentation
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import mobilenet_backbone
from torchvision.models.segmentation.fcn import FCN, FCNHead

from . import _variants as v

SIDE = 64
CLASSES = 3
#: the detectors' own resize, to the example's size (their defaults: 320 to 1333 pixels)
SMALL = dict(min_size=SIDE, max_size=SIDE)


class Detector(torch.nn.Module):
    """detector(list of images) on a batched tensor: the outputs as flat tensors."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, images: torch.Tensor) -> tuple:
        found = self.model(list(images.unbind(0)))
        return tuple(t for d in found for t in (d["boxes"], d["scores"], d["labels"]))


class Segmenter(torch.nn.Module):
    """A torchvision segmentation model's "out" (its dict holds "aux" too when it has one)."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.model(images)["out"]


def _ssdlite() -> torch.nn.Module:
    return detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=CLASSES, detections_per_img=10,
        topk_candidates=20)  # its size is fixed: the images are resized to 320×320


def _fasterrcnn() -> torch.nn.Module:
    return detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, num_classes=CLASSES, rpn_pre_nms_top_n_test=20,
        rpn_post_nms_top_n_test=10, box_detections_per_img=10, **SMALL)


def _retinanet() -> torch.nn.Module:
    """RetinaNet on a MobileNetV3-small FPN backbone (torchvision's builders offer only
    ResNet-50): three feature maps, an anchor size each."""
    backbone = mobilenet_backbone(backbone_name="mobilenet_v3_small", weights=None, fpn=True,
                                  trainable_layers=0)
    anchors = AnchorGenerator(((16,), (32,), (64,)), ((0.5, 1.0, 2.0),) * 3)
    return detection.RetinaNet(backbone, CLASSES, anchor_generator=anchors,
                               topk_candidates=20, detections_per_img=10, **SMALL)


def _fcn() -> torch.nn.Module:
    """FCN on a ResNet-18 (torchvision's builders offer ResNet-50 and -101 only)."""
    backbone = torchvision.models._utils.IntermediateLayerGetter(
        torchvision.models.resnet18(weights=None), {"layer4": "out"})
    return FCN(backbone, FCNHead(512, CLASSES))


def _detector(name, build, dtypes=tuple(v.DTYPES)):
    return v.Arch(name, "detection", "torchvision", lambda: Detector(build()), v.image(SIDE),
                  dynamic=False, dtypes=dtypes)


def _segmenter(name, build):
    return v.Arch(name, "segmentation", "torchvision", lambda: Segmenter(build()),
                  v.image(SIDE))


ARCHS = (
    # SSDlite and Faster R-CNN in float32 only: eager PyTorch cannot run them at the half
    # dtypes on the CPU (torchvision's nms kernel is not implemented for Half nor BFloat16;
    # tests/integration/test_model_set.py)
    _detector("tv_ssdlite", _ssdlite, ("f32",)),
    _detector("tv_fasterrcnn", _fasterrcnn, ("f32",)),
    # RetinaNet runs at the half dtypes on these inputs: with random weights no box scores
    # above its threshold, so nms is never called (on real images it would fail as above)
    _detector("tv_retinanet", _retinanet),
    _segmenter("tv_deeplabv3", lambda: segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=CLASSES)),
    _segmenter("tv_lraspp", lambda: segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=CLASSES)),
    _segmenter("tv_fcn", _fcn),
)

ALL = v.define(ARCHS, globals())
