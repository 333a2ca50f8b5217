# A tied embedding after quantize_ in the page: the embedding reads the lm_head's packed words
# (int8 with a scale per row, or bfloat16) through one lookup kernel (the packed_embedding op).
# On the host, where torchao is absent, the same rows come from PyTorch doing torchao's int8
# rounding (or bfloat16's) and an ordinary embedding of the dequantized weight.
import math

import torch
import torch.nn as nn


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(50, 13)                    # 13: a row ends inside a packed word
        self.lm_head = nn.Linear(13, 50, bias=False)
        self.lm_head.weight = self.wte.weight


def model():
    m = Tied()
    with torch.no_grad():
        m.wte.weight.copy_(torch.tensor([math.sin(0.37 * i) * (1 + i % 7) for i in range(650)]).reshape(50, 13))
    return m


idx = torch.tensor([[0, 49, 7, 7], [3, 12, 25, 1]])
result = {}
try:
    from torchao.quantization import bfloat16_weight_only, int8_weight_only, quantize_
    for name, config in (("int8", int8_weight_only), ("bfloat16", bfloat16_weight_only)):
        m = model()
        quantize_(m, config())
        with torch.no_grad():
            result[name] = m.wte(idx).flatten().tolist()
except ImportError:   # PyTorch without torchao: the dequantized weights' rows
    w = model().wte.weight.detach()
    scale = (w.abs().amax(1) / 127.5).clamp(min=torch.finfo(torch.float32).eps)
    q = torch.clamp(torch.round(w * (1.0 / scale)[:, None]), -128, 127)
    result["int8"] = nn.functional.embedding(idx, q * scale[:, None]).flatten().tolist()
    result["bfloat16"] = nn.functional.embedding(idx, w.bfloat16().float()).flatten().tolist()
