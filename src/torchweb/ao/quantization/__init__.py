"""Weight-only quantization of a model's linear layers, as torchao spells it:

    from torchweb.ao.quantization import quantize_, int8_weight_only
    quantize_(model, int8_weight_only())   # every nn.Linear's weight to int8 + per-row scales

(with torchweb.install_torch_alias(), `from torchao.quantization import ...` gives the same)."""

from .int8_linear import Int8WeightOnlyLinear
from .quant_api import Int8WeightOnlyConfig, int8_weight_only, quantize_

__all__ = ["quantize_", "int8_weight_only", "Int8WeightOnlyConfig", "Int8WeightOnlyLinear"]
