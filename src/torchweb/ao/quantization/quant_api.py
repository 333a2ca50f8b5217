"""quantize_ and its configs (torchao.quantization.quant_api's names)."""

from ...nn.modules.linear import Linear
from ...nn.modules.sparse import Embedding
from ... import _dtype as D
from .half_linear import BFloat16WeightOnlyLinear, Float16WeightOnlyLinear
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


class _HalfWeightOnlyConfig:
    """Weights held in a half format, two to a 32-bit word (half float32's memory), unpacked
    inside the matmul and computed in float32; activations stay in their dtype. Not a torchao
    config: torchweb's way of keeping a half checkpoint's weights at 2 bytes each."""

    def __repr__(self):
        return f"{type(self).__name__}()"


class BFloat16WeightOnlyConfig(_HalfWeightOnlyConfig):
    """Weights as bfloat16, two to a word (a float32 weight is rounded as .bfloat16() does)."""


class Float16WeightOnlyConfig(_HalfWeightOnlyConfig):
    """Weights as float16, two to a word (a float32 weight is rounded as .half() does),
    unpacked with WGSL's core unpack2x16float: no 'shader-f16' needed."""


def bfloat16_weight_only():
    return BFloat16WeightOnlyConfig()


def float16_weight_only():
    return Float16WeightOnlyConfig()


_LAYERS = {Int8WeightOnlyConfig: Int8WeightOnlyLinear, BFloat16WeightOnlyConfig: BFloat16WeightOnlyLinear,
           Float16WeightOnlyConfig: Float16WeightOnlyLinear}
_WEIGHT_DTYPES = (D.float32, D.float16, D.bfloat16)


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
                        "(int8_weight_only()), BFloat16WeightOnlyConfig (bfloat16_weight_only()) and "
                        "Float16WeightOnlyConfig (float16_weight_only())")
    filter_fn = filter_fn or _is_linear
    if filter_fn(model, ""):
        raise TypeError("quantize_: the model itself is a Linear; wrap it in a module (torchweb replaces "
                        "submodules in place)")
    targets = []
    _find(model, "", filter_fn, targets)
    for _, _, child, fqn in targets:        # all checked first: a refusal leaves the model as it was
        _check_layer(child, fqn, config)
    packed = {}
    for parent, name, child, _ in targets:
        weight = child.weight
        if device is not None:
            child = child.to(device)
        parent._modules[name] = packed[id(weight)] = layer.from_float(child)
    _tie_embeddings(model, packed)


def _find(module, prefix, filter_fn, targets):
    """(parent, name, module, fully qualified name) of each submodule filter_fn picks, not
    looking inside those."""
    for name, child in list(module._modules.items()):
        if child is None:
            continue
        fqn = prefix + name
        if filter_fn(child, fqn):
            targets.append((module, name, child, fqn))
        else:
            _find(child, fqn + ".", filter_fn, targets)


def _check_layer(module, fqn, config):
    """What filter_fn picked must be a Linear (or Conv1D) with float32 or half weights."""
    if not _is_linear(module, fqn):
        raise NotImplementedError(f"quantize_: {config!r} applies to nn.Linear layers (and GPT-2's Conv1D); "
                                  f"filter_fn picked '{fqn}', a {type(module).__name__}")
    dtype = module.weight.dtype
    if dtype not in _WEIGHT_DTYPES:
        raise RuntimeError(f"quantize_: {config!r} not implemented for '{getattr(dtype, 'word', dtype)}' "
                           f"weights ('{fqn}'); it takes float32, float16 or bfloat16 weights")


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
