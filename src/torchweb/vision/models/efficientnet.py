"""torchvision.models.efficientnet, V1 (efficientnet_b0 ... b7): same module names
(features.S.B.block.M..., stochastic depth per block), so torchvision's checkpoints load and
give its logits. EfficientNetV2 (FusedMBConv) is not included."""

import copy
import math
from functools import partial

import torchweb as torch
from torchweb import nn

from ._api import Weights, WeightsEnum, crop_preset, load_weights
from ._layers import Conv2dNormActivation, SqueezeExcitation, _make_divisible, init_weights
from ..transforms.functional import InterpolationMode


class StochasticDepth(nn.Module):
    """torchvision.ops.StochasticDepth: in training, zero whole rows (mode "row") or the whole
    input ("batch") with probability p, scaling the rest by 1 / (1 - p)."""

    def __init__(self, p, mode):
        super().__init__()
        if p < 0.0 or p > 1.0:
            raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
        if mode not in ("batch", "row"):
            raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
        self.p, self.mode = p, mode

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        survival = 1.0 - self.p
        size = [x.shape[0]] + [1] * (x.ndim - 1) if self.mode == "row" else [1] * x.ndim
        noise = torch.empty(size, dtype=x.dtype, device=x.device).bernoulli_(survival)
        return x * (noise.div_(survival) if survival > 0.0 else noise)

    def __repr__(self):
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"


class MBConvConfig:
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, width_mult=1.0,
                 depth_mult=1.0, block=None):
        self.expand_ratio, self.kernel, self.stride = expand_ratio, kernel, stride
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.num_layers = int(math.ceil(num_layers * depth_mult))
        self.block = block or MBConv

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return _make_divisible(channels * width_mult, 8, min_value)


class MBConv(nn.Module):
    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           groups=expanded, norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers.append(se_layer(expanded, max(1, cnf.input_channels // 4), activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, x):
        result = self.block(x)
        return self.stochastic_depth(result) + x if self.use_res_connect else result


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2, num_classes=1000,
                 norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not all(isinstance(s, MBConvConfig) for s in inverted_residual_setting):
            raise TypeError("The inverted_residual_setting should be List[MBConvConfig]")
        norm_layer = norm_layer or nn.BatchNorm2d
        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels, kernel_size=3, stride=2,
                                       norm_layer=norm_layer, activation_layer=nn.SiLU)]
        total_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:   # later blocks of a stage: the stage's width, stride 1
                    block_cnf.input_channels, block_cnf.stride = block_cnf.out_channels, 1
                stage.append(block_cnf.block(block_cnf, stochastic_depth_prob * float(block_id) / total_blocks,
                                             norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(last_out, num_classes))
        init_weights(self, lambda m: nn.init.uniform_(m.weight, -1.0 / math.sqrt(m.out_features),
                                                       1.0 / math.sqrt(m.out_features)))

    def _forward_impl(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    def forward(self, x):
        return self._forward_impl(x)


def _b_setting(width_mult, depth_mult):
    conf = partial(MBConvConfig, width_mult=width_mult, depth_mult=depth_mult)
    return [conf(1, 3, 1, 32, 16, 1), conf(6, 3, 2, 16, 24, 2), conf(6, 5, 2, 24, 40, 2), conf(6, 3, 2, 40, 80, 3),
            conf(6, 5, 1, 80, 112, 3), conf(6, 5, 2, 112, 192, 4), conf(6, 3, 1, 192, 320, 1)]


_URL = "https://download.pytorch.org/models/"
_BICUBIC = InterpolationMode.BICUBIC


def _w(name, params, crop, resize, interpolation=_BICUBIC):
    return Weights(_URL + name, crop_preset(crop, resize_size=resize, interpolation=interpolation),
                   {"num_params": params, "min_size": (1, 1)})


class EfficientNet_B0_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b0_rwightman-7f5810bc.pth", 5288548, 224, 256)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B1_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b1_rwightman-bac287d4.pth", 7794184, 240, 256)
    IMAGENET1K_V2 = _w("efficientnet_b1-c27df63c.pth", 7794184, 240, 255, InterpolationMode.BILINEAR)
    DEFAULT = IMAGENET1K_V2


class EfficientNet_B2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b2_rwightman-c35c1473.pth", 9109994, 288, 288)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B3_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b3_rwightman-b3899882.pth", 12233232, 300, 320)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B4_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b4_rwightman-23ab8bcd.pth", 19341616, 380, 384)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B5_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b5_lukemelas-1a07897c.pth", 30389784, 456, 456)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B6_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b6_lukemelas-24a108a5.pth", 43040704, 528, 528)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B7_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w("efficientnet_b7_lukemelas-c5b4e57e.pth", 66347960, 600, 600)
    DEFAULT = IMAGENET1K_V1


# (width_mult, depth_mult, dropout) of b0 ... b7; b5-b7 also take BatchNorm eps 1e-3, momentum 0.01
_B = [(1.0, 1.0, 0.2), (1.0, 1.1, 0.2), (1.1, 1.2, 0.3), (1.2, 1.4, 0.3), (1.4, 1.8, 0.4), (1.6, 2.2, 0.4),
      (1.8, 2.6, 0.5), (2.0, 3.1, 0.5)]
_ENUMS = [EfficientNet_B0_Weights, EfficientNet_B1_Weights, EfficientNet_B2_Weights, EfficientNet_B3_Weights,
          EfficientNet_B4_Weights, EfficientNet_B5_Weights, EfficientNet_B6_Weights, EfficientNet_B7_Weights]


def _efficientnet(i, weights, progress, **kwargs):
    weights = _ENUMS[i].verify(weights)
    width, depth, dropout = _B[i]
    if weights is not None:
        kwargs["num_classes"] = 1000
    if i >= 5:
        kwargs.setdefault("norm_layer", partial(nn.BatchNorm2d, eps=0.001, momentum=0.01))
    model = EfficientNet(_b_setting(width, depth), kwargs.pop("dropout", dropout), **kwargs)
    return load_weights(model, weights, progress)


def _builder(i):
    def build(*, weights=None, progress=True, **kwargs):
        return _efficientnet(i, weights, progress, **kwargs)
    build.__name__ = build.__qualname__ = f"efficientnet_b{i}"
    build.__doc__ = f"EfficientNet-B{i} (torchvision.models.efficientnet_b{i}); weights: EfficientNet_B{i}_Weights."
    return build


efficientnet_b0, efficientnet_b1, efficientnet_b2, efficientnet_b3, efficientnet_b4, efficientnet_b5, \
    efficientnet_b6, efficientnet_b7 = (_builder(i) for i in range(8))
