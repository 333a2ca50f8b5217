"""quantize_ and its configs (torchao.quantization.quant_api's names)."""

from ...nn.modules.linear import Linear
from ...nn.modules.sparse import Embedding
from .bfloat16_linear import BFloat16WeightOnlyLinear
from .int8_linear import Int8WeightOnlyLinear
from .packed_embedding import PackedEmbedding
from .packed_linear import is_conv1d


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
    # torchao's default filter takes nn.Linear only, so it leaves HF GPT-2's Conv1D layers float;
    # torchweb packs them too (transposed: their weight is (in, out)), else GPT-2 keeps 4 bytes a weight
    return isinstance(module, Linear) or is_conv1d(module)


def quantize_(model, config, filter_fn=None, device=None):
    """Replace, in place, each submodule for which filter_fn(module, fully_qualified_name) holds
    (default: every nn.Linear, and GPT-2's Conv1D) with its quantized form per config. An
    nn.Embedding whose weight is a replaced layer's (a tied lm_head) becomes a PackedEmbedding
    reading the same packed weight, so one copy is kept. Returns None, as torchao's."""
    layer = _LAYERS.get(type(config))
    if layer is None:
        raise TypeError(f"quantize_: unsupported config {config!r}; torchweb has Int8WeightOnlyConfig "
                        "(int8_weight_only()) and BFloat16WeightOnlyConfig (bfloat16_weight_only())")
    filter_fn = filter_fn or _is_linear
    if filter_fn(model, ""):
        raise TypeError("quantize_: the model itself is a Linear; wrap it in a module (torchweb replaces "
                        "submodules in place)")
    packed = {}
    _replace(model, "", filter_fn, device, layer, packed)
    _tie_embeddings(model, packed)


def _replace(module, prefix, filter_fn, device, layer, packed):
    for name, child in list(module._modules.items()):
        if child is None:
            continue
        fqn = prefix + name
        if filter_fn(child, fqn):
            weight = child.weight
            if device is not None:
                child = child.to(device)
            module._modules[name] = packed[id(weight)] = layer.from_float(child)
        else:
            _replace(child, fqn + ".", filter_fn, device, layer, packed)


def _tie_embeddings(module, packed):
    """Embeddings sharing their weight with a packed Linear (not a Conv1D: its weight is the
    transpose) now read the packed one."""
    for name, child in list(module._modules.items()):
        if child is None:
            continue
        head = packed.get(id(child.weight)) if isinstance(child, Embedding) else None
        if head is not None and (head.out_features, head.in_features) == tuple(child.weight.shape):
            module._modules[name] = PackedEmbedding(head)
        else:
            _tie_embeddings(child, packed)
