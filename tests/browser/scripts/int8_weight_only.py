# Weight-only int8 in the page: torchao's quantize_(model, int8_weight_only()) (torchweb.ao through
# the torch alias). On the host, where torchao is absent, the same numbers come from PyTorch
# doing torchao's quantization and the dequantize-then-matmul in float32: the oracle the page's
# kernels (int8 unpacked inside the matmul: gemv for one row, tiles for many) are checked against.
import math

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(24, 40), nn.ReLU(), nn.Linear(40, 7))
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.tensor([math.sin(0.7 * i + k) * 0.5 for i in range(p.numel())]).reshape(p.shape))
x1 = torch.tensor([[math.cos(0.3 * i) for i in range(24)]])
x8 = torch.tensor([[math.cos(0.3 * i + j) for i in range(24)] for j in range(8)])

try:
    from torchao.quantization import int8_weight_only, quantize_
    quantize_(model, int8_weight_only())
    run = model
    q_first = model[0].int8_weight()
except ImportError:   # PyTorch without torchao: torchao's formulas, dequantized to float32
    def dequantized(lin):
        w = lin.weight.detach()
        scale = (w.abs().amax(1) / 127.5).clamp(min=torch.finfo(torch.float32).eps)
        q = torch.clamp(torch.round(w * (1.0 / scale)[:, None]), -128, 127)
        return q, q * scale[:, None]

    q_first, w0 = dequantized(model[0])
    _, w2 = dequantized(model[2])

    def run(x):
        return torch.relu(x @ w0.T + model[0].bias) @ w2.T + model[2].bias

with torch.no_grad():
    y1, y8 = run(x1), run(x8)
result = {"one_row": y1.flatten().tolist(), "rows": y8.flatten().tolist(),
          "q_sum": int(q_first.abs().sum().item()), "q_row0": [int(v) for v in q_first[0].tolist()]}
