# float16 weights in the page: quantize_(model, float16_weight_only()) packs each Linear's weight
# two float16 values to a 32-bit word, unpacked inside the matmul with WGSL's core
# unpack2x16float (the page's adapter has no 'shader-f16', as Chrome on NVIDIA has none). On the
# host the oracle is PyTorch's model holding the .half()-rounded weights, computed in float32,
# and the words are PyTorch's float16 matrix's bytes (an odd row padded with a zero half).
import math

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(25, 40), nn.ReLU(), nn.Linear(40, 7))
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        p.copy_(torch.tensor([math.sin(0.7 * i + k) * 0.5 for i in range(p.numel())]).reshape(p.shape))
x1 = torch.tensor([[math.cos(0.3 * i) for i in range(25)]])
x8 = torch.tensor([[math.cos(0.3 * i + j) for i in range(25)] for j in range(8)])

if hasattr(torch, "webgpu"):       # torchweb: packed, unpacked in the kernel (gemv for one row, tiles for 8)
    from torchweb.ao.quantization import float16_weight_only, quantize_
    quantize_(model, float16_weight_only())
    words = model[0].weight[0].tolist()
else:                              # PyTorch: the float16-rounded weights in float32, and their bytes
    with torch.no_grad():
        halves = model[0].weight[0].half().view(torch.int16).to(torch.int64) & 0xFFFF
        halves = torch.cat([halves, torch.zeros(1, dtype=torch.int64)])       # 25 values: a zero half pads
        pairs = halves[0::2] | (halves[1::2] << 16)
        words = torch.where(pairs >= 2 ** 31, pairs - 2 ** 32, pairs).tolist()   # as int32
        for lin in (model[0], model[2]):
            lin.weight.copy_(lin.weight.half().float())

with torch.no_grad():
    y1, y8 = model(x1), model(x8)
result = {"one_row": y1.flatten().tolist(), "rows": y8.flatten().tolist(), "words": words}
