"""quantize_ and its configs (torchao.quantization.quant_api's names)."""

from ...nn.modules.linear import Linear
from .bfloat16_linear import BFloat16WeightOnlyLinear
from .int8_linear import Int8WeightOnlyLinear


class Int8WeightOnlyConfig:
    """Weights to int8 with a symmetric scale per output channel; activations stay float.
    group_size: None (torchao's default: one scale per row) is the only one supported."""

    def __init__(self, group_size=None):
        if group_size is not None:
            raise NotImplementedError("Int8WeightOnlyConfig: torchweb has one scale per output channel "
                                      "(group_size=None) only")
        self.group_size = group_size

    def __repr__(self):
        return f"Int8WeightOnlyConfig(group_size={self.group_size})"


def int8_weight_only(group_size=None):
    """torchao's older spelling of Int8WeightOnlyConfig()."""
    return Int8WeightOnlyConfig(group_size)


class BFloat16WeightOnlyConfig:
    """Weights held as bfloat16, two to a 32-bit word (half float32's memory), unpacked inside
    the matmul; activations stay in their dtype (float32 models compute in float32). Not a
    torchao config: torchweb's way of keeping a bfloat16 checkpoint's weights at 2 bytes each."""

    def __repr__(self):
        return "BFloat16WeightOnlyConfig()"


def bfloat16_weight_only():
    return BFloat16WeightOnlyConfig()


_LAYERS = {Int8WeightOnlyConfig: Int8WeightOnlyLinear, BFloat16WeightOnlyConfig: BFloat16WeightOnlyLinear}


def _is_linear(module, fqn):
    return isinstance(module, Linear)


def quantize_(model, config, filter_fn=None, device=None):
    """Replace, in place, each submodule for which filter_fn(module, fully_qualified_name) holds
    (default: every nn.Linear) with its quantized form per config. Returns None, as torchao's."""
    layer = _LAYERS.get(type(config))
    if layer is None:
        raise TypeError(f"quantize_: unsupported config {config!r}; torchweb has Int8WeightOnlyConfig "
                        "(int8_weight_only()) and BFloat16WeightOnlyConfig (bfloat16_weight_only())")
    filter_fn = filter_fn or _is_linear
    if filter_fn(model, ""):
        raise TypeError("quantize_: the model itself is a Linear; wrap it in a module (torchweb replaces "
                        "submodules in place)")
    _replace(model, "", filter_fn, device, layer)


def _replace(module, prefix, filter_fn, device, layer):
    for name, child in list(module._modules.items()):
        if child is None:
            continue
        fqn = prefix + name
        if filter_fn(child, fqn):
            if device is not None:
                child = child.to(device)
            module._modules[name] = layer.from_float(child)
        else:
            _replace(child, fqn + ".", filter_fn, device, layer)
