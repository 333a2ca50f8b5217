# torchvision.datasets.ImageFolder in the page, where Pyodide has no Pillow: a tree of class
# folders with PNG (grey, RGB, RGBA, palette; lines using each of PNG's five filters) and PPM files
# written here by a small encoder, read through transforms and a DataLoader. On the host the real
# torchvision decodes them with Pillow; in the page torchweb.vision decodes them itself.
import os
import struct
import tempfile
import zlib

import torch
from torchvision import datasets, transforms


def _filtered(line, prev, kind, bpp):
    out = bytearray(len(line))
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
        p = a + b - c
        paeth = a if abs(p - a) <= abs(p - b) and abs(p - a) <= abs(p - c) else b if abs(p - b) <= abs(p - c) else c
        out[i] = (line[i] - [0, a, b, (a + b) >> 1, paeth][kind]) & 255
    return bytes([kind]) + bytes(out)


def write_png(path, width, height, colour, pixel, palette=None):
    """pixel(x, y) -> the samples of one pixel (colour type 0: 1, 2: 3, 3: 1 index, 6: 4)."""
    channels = {0: 1, 2: 3, 3: 1, 6: 4}[colour]
    lines = [bytes(v for x in range(width) for v in pixel(x, y)) for y in range(height)]
    body = b"".join(_filtered(ln, lines[y - 1] if y else bytes(len(ln)), y % 5, channels) for y, ln in enumerate(lines))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    parts = [chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0))]
    if palette:
        parts.append(chunk(b"PLTE", bytes(v for rgb in palette for v in rgb)))
    parts += [chunk(b"IDAT", zlib.compress(body)), chunk(b"IEND", b"")]
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + b"".join(parts))


root = tempfile.mkdtemp()
for d in ("dog", "Cat", "bird/nested", "bird/empty_dir_is_fine"):
    os.makedirs(os.path.join(root, d))
W, H = 9, 8
write_png(os.path.join(root, "dog", "b.png"), W, H, 2, lambda x, y: ((x * 29 + y * 7) % 256, (x * y * 13) % 256, (y * 31) % 256))
write_png(os.path.join(root, "dog", "a.png"), W, H, 0, lambda x, y: ((x * 37 + y * 11) % 256,))
write_png(os.path.join(root, "Cat", "c.png"), W, H, 6, lambda x, y: ((x * 5) % 256, (y * 50) % 256, (x ^ y) * 16 % 256, 128))
write_png(os.path.join(root, "bird", "nested", "d.png"), W, H, 3, lambda x, y: ((x + 2 * y) % 4,),
          palette=[(10, 20, 30), (200, 100, 0), (0, 255, 128), (77, 77, 77)])
with open(os.path.join(root, "bird", "e.ppm"), "wb") as f:
    f.write(f"P6\n{W} {H}\n255\n".encode() + bytes((x * 3 + y * c * 17) % 256 for y in range(H) for x in range(W) for c in range(3)))
with open(os.path.join(root, "bird", "notes.txt"), "w") as f:
    f.write("skipped: not an image extension")

pipeline = transforms.Compose([transforms.CenterCrop(6), transforms.RandomHorizontalFlip(p=1.0), transforms.ToTensor(),
                               transforms.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])
data = datasets.ImageFolder(root, transform=pipeline)
batches = [(x.sum().item(), x[:, 1].flatten().tolist()[::3], y.tolist())
           for x, y in torch.utils.data.DataLoader(data, batch_size=2)]
raw, _ = datasets.ImageFolder(root)[0]
only_png = datasets.ImageFolder(root, is_valid_file=lambda p: p.endswith(".png"))
texts = datasets.DatasetFolder(root, loader=lambda p: os.path.getsize(p), extensions=(".txt",), allow_empty=True)

result = {"classes": data.classes, "class_to_idx": sorted(data.class_to_idx.items()),
          "samples": [[os.path.relpath(p, root), c] for p, c in data.samples], "targets": data.targets,
          "batches": batches, "raw": [raw.mode, list(raw.size)],
          "only_png": [[os.path.relpath(p, root), c] for p, c in only_png.samples],
          "texts": [[os.path.relpath(p, root), c] for p, c in texts.samples], "text_item": list(texts[0])}
