"""torchvision.models: ResNet (18/34/50), MobileNetV2, MobileNetV3 (large, small), EfficientNet (b0-b7) and ViT with torchvision's module names and
weights enums (checkpoints load unchanged; see docs/libraries.md)."""

from ._api import Weights, WeightsEnum  # noqa: F401
from .efficientnet import EfficientNet, EfficientNet_B0_Weights, EfficientNet_B1_Weights, \
    EfficientNet_B2_Weights, EfficientNet_B3_Weights, EfficientNet_B4_Weights, EfficientNet_B5_Weights, \
    EfficientNet_B6_Weights, EfficientNet_B7_Weights, efficientnet_b0, efficientnet_b1, efficientnet_b2, \
    efficientnet_b3, efficientnet_b4, efficientnet_b5, efficientnet_b6, efficientnet_b7  # noqa: F401
from .mobilenetv2 import MobileNet_V2_Weights, MobileNetV2, mobilenet_v2  # noqa: F401
from .mobilenetv3 import MobileNet_V3_Large_Weights, MobileNet_V3_Small_Weights, MobileNetV3, \
    mobilenet_v3_large, mobilenet_v3_small  # noqa: F401
from .vision_transformer import ViT_B_16_Weights, ViT_B_32_Weights, ViT_H_14_Weights, ViT_L_16_Weights, \
    ViT_L_32_Weights, VisionTransformer, vit_b_16, vit_b_32, vit_h_14, vit_l_16, vit_l_32  # noqa: F401
from .resnet import ResNet, ResNet18_Weights, ResNet34_Weights, ResNet50_Weights, resnet18, resnet34, \
    resnet50  # noqa: F401

_BUILDERS = {"resnet18": resnet18, "resnet34": resnet34, "resnet50": resnet50, "mobilenet_v2": mobilenet_v2,
             "mobilenet_v3_large": mobilenet_v3_large, "mobilenet_v3_small": mobilenet_v3_small,
             **{f"efficientnet_b{i}": globals()[f"efficientnet_b{i}"] for i in range(8)},
             "vit_b_16": vit_b_16, "vit_b_32": vit_b_32, "vit_l_16": vit_l_16, "vit_l_32": vit_l_32, "vit_h_14": vit_h_14}


def list_models(module=None, include=None, exclude=None):
    return sorted(_BUILDERS)


def get_model(name, **config):
    name = name.lower()
    if name not in _BUILDERS:
        raise ValueError(f"Unknown model {name}")
    return _BUILDERS[name](**config)


def get_model_builder(name):
    return _BUILDERS[name.lower()]
