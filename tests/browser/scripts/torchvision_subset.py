# torchvision on torchweb in the page: transforms (v1 and v2) on tensors, an MNIST-format dataset
# read from files this script writes (gzipped IDX) through a DataLoader, make_grid, and a ResNet's
# forward (resnet18's blocks, one per stage) with weights set from formulas. In the page `import torchvision` is torchweb.vision
# (install_torch_alias() provides it where the real one is absent).
import gzip
import math
import os
import tempfile

import torch
import torchvision
from torchvision import datasets, models, transforms
from torchvision.transforms import v2
import torchvision.transforms.functional as F

img = torch.tensor([[[math.sin(0.3 * i + 0.7 * j + c) * 0.5 + 0.5 for i in range(20)] for j in range(16)]
                    for c in range(3)])
pipeline = transforms.Compose([transforms.Resize([12, 14]), transforms.CenterCrop(10),
                               transforms.RandomHorizontalFlip(p=1.0),
                               transforms.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.3))])
out = pipeline(img)
u8 = (img * 255).to(torch.uint8)
v2_out = v2.Compose([v2.ToDtype(torch.float32, scale=True), v2.Grayscale()])(u8)
jitter = F.adjust_hue(F.adjust_saturation(F.adjust_contrast(F.adjust_brightness(img, 1.2), 0.8), 1.3), 0.1)
rotated = F.rotate(img, 30.0, interpolation=transforms.InterpolationMode.BILINEAR)
padded = F.pad(u8, [2, 1], padding_mode="reflect")
resized_u8 = F.resize(u8, [7, 9])

# a tiny MNIST in its original format, gzipped as downloaded
root = tempfile.mkdtemp()
raw = os.path.join(root, "MNIST", "raw")
os.makedirs(raw)
n = 6
pixels = bytes((i * 7 + j * 13) % 256 for i in range(n) for j in range(28 * 28))
labels = bytes(i % 10 for i in range(n))
for split in ("train", "t10k"):
    with gzip.open(os.path.join(raw, f"{split}-images-idx3-ubyte.gz"), "wb") as f:
        f.write(bytes([0, 0, 8, 3]) + n.to_bytes(4, "big") + (28).to_bytes(4, "big") * 2 + pixels)
    with gzip.open(os.path.join(raw, f"{split}-labels-idx1-ubyte.gz"), "wb") as f:
        f.write(bytes([0, 0, 8, 1]) + n.to_bytes(4, "big") + labels)
for split in ("train", "t10k"):   # torchvision reads the extracted files
    for kind in ("images-idx3-ubyte", "labels-idx1-ubyte"):
        with gzip.open(os.path.join(raw, f"{split}-{kind}.gz")) as src, open(os.path.join(raw, f"{split}-{kind}"), "wb") as dst:
            dst.write(src.read())
mnist = datasets.MNIST(root, train=True, transform=transforms.Compose([
    transforms.RandomCrop(28, padding=0), transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))]))
batch, target = next(iter(torch.utils.data.DataLoader(mnist, batch_size=4)))

grid = torchvision.utils.make_grid(batch, nrow=2, normalize=True)

model = models.ResNet(models.resnet.BasicBlock, [1, 1, 1, 1], num_classes=10)
with torch.no_grad():
    for k, p in enumerate(model.parameters()):
        fan_in = p[0].numel() if p.dim() > 1 else p.numel()
        p.copy_((torch.arange(p.numel(), dtype=torch.float32) * 0.37 + k).cos().reshape(p.shape) / math.sqrt(fan_in))
model.eval()
with torch.no_grad():
    logits = model(F.resize(img, [24, 24]).unsqueeze(0))

result = {"pipeline": out.flatten().tolist(), "v2": v2_out.flatten().tolist(), "jitter": jitter.sum().item(),
          "rotated": rotated.flatten().tolist()[::7], "padded": padded.flatten().tolist()[::5],
          "resized_u8": resized_u8.flatten().tolist(), "batch": [batch.shape[0], batch.shape[1], batch.shape[2]],
          "batch_sum": batch.sum().item(), "target": target.tolist(), "grid": list(grid.shape),
          "grid_sum": grid.sum().item(), "logits": logits.flatten().tolist(), "keys": len(model.state_dict())}
