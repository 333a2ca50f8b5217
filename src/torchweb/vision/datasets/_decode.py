"""Image files read without Pillow (the page has none): PNG (every colour type, bit depths
1-8 and 16, not interlaced) and binary or text PPM/PGM (P2, P3, P5, P6), as a
torchweb.vision.Image in "L" or "RGB" whose pixels equal Pillow's `convert()` to that mode: alpha
dropped, a palette looked up, 16-bit colour cut to its high byte and 16-bit grey clipped at 255,
low depths scaled to 0-255."""

import zlib

from .._image import Image
from ._files import tensor_from_bytes

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}   # PNG colour type -> samples per pixel


def read_image_file(path):
    with open(path, "rb") as f:
        data = f.read()
    if data.startswith(PNG_SIGNATURE):
        return decode_png(data)
    if data[:2] in (b"P2", b"P3", b"P5", b"P6"):
        return decode_pnm(data)
    raise OSError(f"cannot identify image file {path!r} (without Pillow only PNG, PPM and PGM are read)")


def _image(pixels, height, width, channels):
    hwc = tensor_from_bytes(bytes(pixels), "U8", (height, width, channels))
    return Image(hwc, "L" if channels == 1 else "RGB")


def decode_png(data):
    pos, chunks, idat = len(PNG_SIGNATURE), {}, []
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        else:
            chunks.setdefault(kind, body)
    head = chunks.get(b"IHDR")
    if head is None or not idat:
        raise OSError("PNG without IHDR or IDAT")
    width, height = int.from_bytes(head[0:4], "big"), int.from_bytes(head[4:8], "big")
    depth, colour, interlace = head[8], head[9], head[12]
    if interlace:
        raise OSError("interlaced PNG is not supported without Pillow")
    channels = _CHANNELS[colour]
    bits = depth * channels
    stride, bpp = (width * bits + 7) // 8, max(1, bits // 8)
    raw = _unfilter(zlib.decompress(b"".join(idat)), height, stride, bpp)
    samples = _samples(raw, height, width * channels, stride, depth, colour == 0)
    if colour == 3:   # palette: RGB from PLTE (tRNS's alpha dropped, as convert("RGB"))
        plte = chunks[b"PLTE"]
        return _image(b"".join(plte[3 * i:3 * i + 3] for i in samples), height, width, 3)
    if depth < 8 and colour == 0:   # 1, 2, 4-bit grey scaled to 0-255
        scale = 255 // ((1 << depth) - 1)
        samples = bytes(s * scale for s in samples)
    keep = 1 if channels <= 2 else 3   # alpha dropped
    if keep != channels:
        samples = b"".join(samples[c::channels] for c in range(keep)) if keep == 1 else \
            bytes(_drop_alpha(samples, channels, keep))
    return _image(samples, height, width, keep)


def _drop_alpha(samples, channels, keep):
    out = bytearray(len(samples) // channels * keep)
    for c in range(keep):
        out[c::keep] = samples[c::channels]
    return out


def _unfilter(data, height, stride, bpp):
    """The scanlines' bytes with PNG's per-line filters (None, Sub, Up, Average, Paeth) undone."""
    out = bytearray(height * stride)
    prev = bytearray(stride)
    for y in range(height):
        kind = data[y * (stride + 1)]
        line = bytearray(data[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        elif kind != 0:
            raise OSError(f"PNG filter type {kind} is not valid")
        out[y * stride:(y + 1) * stride] = line
        prev = line
    return out


def _samples(raw, height, count, stride, depth, grey):
    """count samples a line, 8 bits each: 16-bit ones by their high byte, packed low depths unpacked."""
    if depth == 8:
        return bytes(raw) if count == stride else b"".join(raw[y * stride:y * stride + count] for y in range(height))
    if depth == 16 and grey:   # Pillow's "I;16" to "L": clipped at 255
        return bytes(255 if hi else lo for y in range(height)
                     for hi, lo in zip(raw[y * stride:(y + 1) * stride:2], raw[y * stride + 1:(y + 1) * stride:2]))
    if depth == 16:   # Pillow keeps the high byte of 16-bit colour
        return b"".join(raw[y * stride:(y + 1) * stride:2] for y in range(height))
    mask, per = (1 << depth) - 1, 8 // depth
    out = bytearray()
    for y in range(height):
        line = raw[y * stride:(y + 1) * stride]
        out += bytes((line[i // per] >> (8 - depth * (i % per + 1))) & mask for i in range(count))
    return bytes(out)


def decode_pnm(data):
    """Netpbm: P5/P6 binary, P2/P3 text; maxval up to 255 (scaled to 0-255 as Pillow does)."""
    fields, pos, magic = [], 2, data[:2]
    while len(fields) < 3:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while end < len(data) and not data[end:end + 1].isspace():
            end += 1
        fields.append(int(data[pos:end]))
        pos = end
    width, height, maxval = fields
    if maxval > 255:
        raise OSError("PPM/PGM with more than 8 bits a sample is not supported without Pillow")
    channels = 3 if magic in (b"P3", b"P6") else 1
    count = width * height * channels
    if magic in (b"P5", b"P6"):
        samples = data[pos + 1:pos + 1 + count]
    else:
        samples = bytes(int(v) for v in data[pos:].split()[:count])
    if maxval != 255:
        samples = bytes((s * 255 + maxval // 2) // maxval for s in samples)
    return _image(samples, height, width, channels)
