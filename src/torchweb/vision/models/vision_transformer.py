"""torchvision.models.vision_transformer (ViT B/16, B/32, L/16, L/32, H/14): same module names
(encoder.layers.encoder_layer_N.self_attention.in_proj_weight, mlp.0/mlp.3, heads.head...),
so torchvision's checkpoints load and give its logits. The convolutional stem variant
(conv_stem_configs) is not included."""

import math
from collections import OrderedDict
from functools import partial

import torchweb as torch
from torchweb import nn

from ._api import Weights, WeightsEnum, crop_preset, load_weights
from ..transforms.functional import InterpolationMode


class MLPBlock(nn.Sequential):
    """torchvision.ops.MLP(in_dim, [mlp_dim, in_dim], GELU): Linear, GELU, Dropout, Linear, Dropout."""

    def __init__(self, in_dim, mlp_dim, dropout):
        super().__init__(nn.Linear(in_dim, mlp_dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(mlp_dim, in_dim),
                         nn.Dropout(dropout))
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                nn.init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    def __init__(self, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, x):
        if x.dim() != 3:
            raise RuntimeError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(x.shape)}")
        y = self.ln_1(x)
        y, _ = self.self_attention(y, y, y, need_weights=False)
        x = self.dropout(y) + x
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.pos_embedding = nn.Parameter(torch.empty(1, seq_length, hidden_dim).normal_(std=0.02))   # from BERT
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout, norm_layer))
            for i in range(num_layers)))
        self.ln = norm_layer(hidden_dim)

    def forward(self, x):
        if x.dim() != 3:
            raise RuntimeError(f"Expected (batch_size, seq_length, hidden_dim) got {tuple(x.shape)}")
        return self.ln(self.layers(self.dropout(x + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim, dropout=0.0,
                 attention_dropout=0.0, num_classes=1000, representation_size=None,
                 norm_layer=partial(nn.LayerNorm, eps=1e-6), conv_stem_configs=None):
        super().__init__()
        if image_size % patch_size != 0:
            raise ValueError("Input shape indivisible by patch size!")
        if conv_stem_configs is not None:
            raise NotImplementedError("VisionTransformer(conv_stem_configs=...) is not part of torchweb's subset")
        self.image_size, self.patch_size, self.hidden_dim, self.mlp_dim = image_size, patch_size, hidden_dim, mlp_dim
        self.attention_dropout, self.dropout, self.num_classes = attention_dropout, dropout, num_classes
        self.representation_size, self.norm_layer = representation_size, norm_layer
        self.conv_proj = nn.Conv2d(3, hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2 + 1   # + the class token
        self.class_token = nn.Parameter(torch.zeros(1, 1, hidden_dim))
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               norm_layer)
        self.seq_length = seq_length
        heads = OrderedDict()
        if representation_size is None:
            heads["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads["act"] = nn.Tanh()
            heads["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads)
        fan_in = 3 * patch_size * patch_size
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        nn.init.zeros_(self.conv_proj.bias)
        if representation_size is not None:
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / hidden_dim))
            nn.init.zeros_(self.heads.pre_logits.bias)
        nn.init.zeros_(self.heads.head.weight)
        nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x):
        n, c, h, w = x.shape
        if h != self.image_size or w != self.image_size:
            raise RuntimeError(f"Wrong image size! Expected {self.image_size} but got {h} x {w}")
        p = self.patch_size
        x = self.conv_proj(x).reshape(n, self.hidden_dim, (h // p) * (w // p))
        return x.permute(0, 2, 1)

    def forward(self, x):
        x = self._process_input(x)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
        return self.heads(self.encoder(x)[:, 0])


def _w(url, params, size=224, **preset):
    return Weights(url, crop_preset(size, **preset), {"num_params": params, "min_size": (size, size)})


_SWAG = dict(interpolation=InterpolationMode.BICUBIC)
_URL = "https://download.pytorch.org/models/"


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w(_URL + "vit_b_16-c867db91.pth", 86567656)
    IMAGENET1K_SWAG_E2E_V1 = _w(_URL + "vit_b_16_swag-9ac1b537.pth", 86859496, 384, resize_size=384, **_SWAG)
    IMAGENET1K_SWAG_LINEAR_V1 = _w(_URL + "vit_b_16_lc_swag-4e70ced5.pth", 86567656, 224, resize_size=224, **_SWAG)
    DEFAULT = IMAGENET1K_V1


class ViT_B_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w(_URL + "vit_b_32-d86f8d99.pth", 88224232)
    DEFAULT = IMAGENET1K_V1


class ViT_L_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w(_URL + "vit_l_16-852ce7e3.pth", 304326632, resize_size=242)
    IMAGENET1K_SWAG_E2E_V1 = _w(_URL + "vit_l_16_swag-4f3808c9.pth", 305174504, 512, resize_size=512, **_SWAG)
    IMAGENET1K_SWAG_LINEAR_V1 = _w(_URL + "vit_l_16_lc_swag-4d563306.pth", 304326632, 224, resize_size=224, **_SWAG)
    DEFAULT = IMAGENET1K_V1


class ViT_L_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = _w(_URL + "vit_l_32-c7638314.pth", 306535400)
    DEFAULT = IMAGENET1K_V1


class ViT_H_14_Weights(WeightsEnum):
    IMAGENET1K_SWAG_E2E_V1 = _w(_URL + "vit_h_14_swag-80465313.pth", 633470440, 518, resize_size=518, **_SWAG)
    IMAGENET1K_SWAG_LINEAR_V1 = _w(_URL + "vit_h_14_lc_swag-c1eb923e.pth", 632045800, 224, resize_size=224, **_SWAG)
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


def _vision_transformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim, weights, progress, **kwargs):
    if weights is not None:
        kwargs["num_classes"] = 1000
        kwargs["image_size"] = weights.meta["min_size"][0]
    model = VisionTransformer(image_size=kwargs.pop("image_size", 224), patch_size=patch_size, num_layers=num_layers,
                              num_heads=num_heads, hidden_dim=hidden_dim, mlp_dim=mlp_dim, **kwargs)
    return load_weights(model, weights, progress)


def vit_b_16(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(16, 12, 12, 768, 3072, ViT_B_16_Weights.verify(weights), progress, **kwargs)


def vit_b_32(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(32, 12, 12, 768, 3072, ViT_B_32_Weights.verify(weights), progress, **kwargs)


def vit_l_16(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(16, 24, 16, 1024, 4096, ViT_L_16_Weights.verify(weights), progress, **kwargs)


def vit_l_32(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(32, 24, 16, 1024, 4096, ViT_L_32_Weights.verify(weights), progress, **kwargs)


def vit_h_14(*, weights=None, progress=True, **kwargs):
    return _vision_transformer(14, 32, 16, 1280, 5120, ViT_H_14_Weights.verify(weights), progress, **kwargs)
