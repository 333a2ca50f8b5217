"""torchvision.models.mobilenetv3 (large and small): same module names (features.N.block.M...),
so torchvision's checkpoints load and give its logits."""

from functools import partial

import torchweb as torch
from torchweb import nn

from ._api import Weights, WeightsEnum, crop_preset, load_weights
from ._layers import Conv2dNormActivation, SqueezeExcitation, _make_divisible, init_linear_normal, init_weights


class InvertedResidualConfig:
    """One row of the MobileNetV3 paper's tables 1 and 2."""

    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se, activation, stride,
                 dilation, width_mult):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se, self.use_hs = use_se, activation == "HS"
        self.stride, self.dilation = stride, dilation

    @staticmethod
    def adjust_channels(channels, width_mult):
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    def __init__(self, cnf, norm_layer, se_layer=partial(SqueezeExcitation, scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=act))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, kernel_size=cnf.kernel,
                                           stride=1 if cnf.dilation > 1 else cnf.stride, dilation=cnf.dilation,
                                           groups=cnf.expanded_channels, norm_layer=norm_layer, activation_layer=act))
        if cnf.use_se:
            layers.append(se_layer(cnf.expanded_channels, _make_divisible(cnf.expanded_channels // 4, 8)))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, x):
        result = self.block(x)
        return result + x if self.use_res_connect else result


class MobileNetV3(nn.Module):
    def __init__(self, inverted_residual_setting, last_channel, num_classes=1000, block=None, norm_layer=None,
                 dropout=0.2, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not all(isinstance(s, InvertedResidualConfig) for s in inverted_residual_setting):
            raise TypeError("The inverted_residual_setting should be List[InvertedResidualConfig]")
        block = block or InvertedResidual
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        last_in = inverted_residual_setting[-1].out_channels
        layers.append(Conv2dNormActivation(last_in, 6 * last_in, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(6 * last_in, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        init_weights(self, init_linear_normal)

    def _forward_impl(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    def forward(self, x):
        return self._forward_impl(x)


# (input, kernel, expanded, out, SE, activation, stride, dilated?) per block, as torchvision lists them
_LARGE = [(16, 3, 16, 16, False, "RE", 1, 0), (16, 3, 64, 24, False, "RE", 2, 0), (24, 3, 72, 24, False, "RE", 1, 0),
          (24, 5, 72, 40, True, "RE", 2, 0), (40, 5, 120, 40, True, "RE", 1, 0), (40, 5, 120, 40, True, "RE", 1, 0),
          (40, 3, 240, 80, False, "HS", 2, 0), (80, 3, 200, 80, False, "HS", 1, 0),
          (80, 3, 184, 80, False, "HS", 1, 0), (80, 3, 184, 80, False, "HS", 1, 0),
          (80, 3, 480, 112, True, "HS", 1, 0), (112, 3, 672, 112, True, "HS", 1, 0),
          (112, 5, 672, 160, True, "HS", 2, 1), (160, 5, 960, 160, True, "HS", 1, 1),
          (160, 5, 960, 160, True, "HS", 1, 1)]
_SMALL = [(16, 3, 16, 16, True, "RE", 2, 0), (16, 3, 72, 24, False, "RE", 2, 0), (24, 3, 88, 24, False, "RE", 1, 0),
          (24, 5, 96, 40, True, "HS", 2, 0), (40, 5, 240, 40, True, "HS", 1, 0), (40, 5, 240, 40, True, "HS", 1, 0),
          (40, 5, 120, 48, True, "HS", 1, 0), (48, 5, 144, 48, True, "HS", 1, 0),
          (48, 5, 288, 96, True, "HS", 2, 1), (96, 5, 576, 96, True, "HS", 1, 1), (96, 5, 576, 96, True, "HS", 1, 1)]


def _mobilenet_v3_conf(arch, width_mult=1.0, reduced_tail=False, dilated=False, **kwargs):
    """torchvision's settings: reduced_tail halves the channels of the last stage (the blocks
    marked dilated?), dilated dilates them by 2."""
    table, last = (_LARGE, 1280) if arch == "mobilenet_v3_large" else (_SMALL, 1024) \
        if arch == "mobilenet_v3_small" else (None, None)
    if table is None:
        raise ValueError(f"Unsupported model type {arch}")
    div = 2 if reduced_tail else 1
    setting = []
    for cin, k, exp, cout, se, act, stride, tail in table:
        if tail and stride == 2:   # the stage's first block: only its output is reduced
            cout //= div
        elif tail:
            cin, exp, cout = cin // div, exp // div, cout // div
        setting.append(InvertedResidualConfig(cin, k, exp, cout, se, act, stride, 2 if (tail and dilated) else 1,
                                              width_mult))
    return setting, InvertedResidualConfig.adjust_channels(last // div, width_mult)


def _meta(n):
    return {"num_params": n, "min_size": (1, 1)}


class MobileNet_V3_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights("https://download.pytorch.org/models/mobilenet_v3_large-8738ca79.pth", crop_preset(224),
                            _meta(5483032))
    IMAGENET1K_V2 = Weights("https://download.pytorch.org/models/mobilenet_v3_large-5c1a4163.pth",
                            crop_preset(224, resize_size=232), _meta(5483032))
    DEFAULT = IMAGENET1K_V2


class MobileNet_V3_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = Weights("https://download.pytorch.org/models/mobilenet_v3_small-047dcff4.pth", crop_preset(224),
                            _meta(2542856))
    DEFAULT = IMAGENET1K_V1


def _mobilenet_v3(arch, weights, progress, **kwargs):
    setting, last_channel = _mobilenet_v3_conf(arch, **kwargs)
    if weights is not None:
        kwargs["num_classes"] = 1000
    kwargs = {k: v for k, v in kwargs.items() if k not in ("width_mult", "reduced_tail", "dilated")}
    return load_weights(MobileNetV3(setting, last_channel, **kwargs), weights, progress)


def mobilenet_v3_large(*, weights=None, progress=True, **kwargs):
    return _mobilenet_v3("mobilenet_v3_large", MobileNet_V3_Large_Weights.verify(weights), progress, **kwargs)


def mobilenet_v3_small(*, weights=None, progress=True, **kwargs):
    return _mobilenet_v3("mobilenet_v3_small", MobileNet_V3_Small_Weights.verify(weights), progress, **kwargs)
