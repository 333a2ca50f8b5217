"""Weight-only quantization of a model's linear layers, as torchao spells it:

    from torchweb.ao.quantization import quantize_, int8_weight_only
    quantize_(model, int8_weight_only())   # every nn.Linear's weight to int8 + per-row scales
    quantize_(model, bfloat16_weight_only())   # or to bfloat16, 2 bytes each (torchweb's own)
    quantize_(model, float16_weight_only())    # or to float16, 2 bytes each (no shader-f16 needed)

(with torchweb.install_torch_alias(), `from torchao.quantization import ...` gives the same)."""

from .half_linear import BFloat16WeightOnlyLinear, Float16WeightOnlyLinear
from .int8_linear import Int8WeightOnlyLinear
from .quant_api import (BFloat16WeightOnlyConfig, Float16WeightOnlyConfig, Int8WeightOnlyConfig,
                        bfloat16_weight_only, float16_weight_only, int8_weight_only, quantize_)

__all__ = ["quantize_", "int8_weight_only", "Int8WeightOnlyConfig", "Int8WeightOnlyLinear",
           "bfloat16_weight_only", "BFloat16WeightOnlyConfig", "BFloat16WeightOnlyLinear",
           "float16_weight_only", "Float16WeightOnlyConfig", "Float16WeightOnlyLinear"]
