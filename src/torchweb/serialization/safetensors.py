"""safetensors in pure Python: the safetensors.torch API (save, save_file, load, load_file).

The format (https://github.com/huggingface/safetensors):

    8 bytes      N, the header's length (unsigned little-endian)
    N bytes      a JSON object: {"__metadata__": {str: str}?, name: {"dtype": "F32",
                 "shape": [..], "data_offsets": [begin, end]}, ...}, padded with spaces to a
                 multiple of 8 bytes
    the rest     the tensors' bytes, little-endian, row-major; offsets count from here

Written as the safetensors package writes it (byte for byte): tensors ordered by dtype (larger
types first, in safetensors' Dtype order) then name, compact JSON with "__metadata__" first.
Read with the package's checks: header length within the file and under 100 MB, valid JSON
object, known dtypes, shapes whose size times the item size is each byte range, ranges that
start at 0, follow each other without gap or overlap, and end at the end of the file.
"""

import json
import struct

from .. import _dtype as D
from .._complex_tensor import wrap as wrap_complex
from .._tensor import Tensor
from .storage_bytes import BY_ST_NAME, check_loadable, file_dtype_of, for_device, \
    storage_from_file_bytes, storage_to_file_bytes
from .map_location import coerce

MAX_HEADER = 100_000_000
# safetensors' Dtype enum order (the writer puts larger ones first)
_RANK = {n: i for i, n in enumerate(
    ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16", "U16",
     "F16", "BF16", "I32", "U32", "F32", "C64", "F64", "I64", "U64"])}


class SafetensorError(RuntimeError):
    """A malformed safetensors file (safetensors.SafetensorError's counterpart)."""


# -- writing --------------------------------------------------------------------------------------
def _check_for_save(tensors):
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for k, v in tensors.items():
        if not isinstance(k, str):
            raise ValueError(f"Key `{k}` is invalid, expected str but received {type(k)}")
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
    by_storage = {}
    for k, v in tensors.items():
        if v.numel():
            by_storage.setdefault(id((v._r if v.dtype.is_complex else v)._storage), []).append(k)
    failing = []
    for names in by_storage.values():
        if len(names) < 2:
            continue
        spans = sorted((tensors[n].storage_offset(), _end(tensors[n]), n) for n in names)
        shared, end = set(), -1
        for i, (start, stop, n) in enumerate(spans):
            if start < end:
                shared.update((n, spans[i - 1][2]))
            end = max(end, stop)
        if shared:
            failing.append(shared)
    if failing:
        raise RuntimeError(
            "\n            Some tensors share memory, this will lead to duplicate memory on disk and potential "
            f"differences when loading them again: {failing}.\n            A potential way to correctly save "
            "your model is to use `save_model`.\n            More information at "
            "https://huggingface.co/docs/safetensors/torch_shared_tensors\n            ")
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It either means you"
                " are trying to save tensors which are reference of each other in which case it's recommended to save"
                " only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to"
                " pack it before saving.")


def _end(t):
    return t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1


def _tensor_bytes(t):
    """t's elements (t is contiguous) in the file format."""
    if t.numel() == 0:
        return b""
    if t.dtype.is_complex:   # its pairs' float32 bytes: complex64's layout
        return _tensor_bytes(t._r)
    if t.dtype is not t._storage.dtype or t.storage_offset() or t._storage.numel != t.numel():
        t = t.detach().clone()   # a piece of a larger storage: write the piece alone
    return storage_to_file_bytes(t._storage)


def save(tensors, metadata=None):
    """The safetensors bytes of a dict {name: tensor} (contiguous, not sharing memory)."""
    _check_for_save(tensors)
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in metadata.items()):
            raise ValueError("metadata must be a dict of [str, str]")
    names = sorted(tensors, key=lambda n: (-_RANK[file_dtype_of(tensors[n].dtype).st_name], n))
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    chunks, offset = [], 0
    for n in names:
        t = tensors[n]
        data = _tensor_bytes(t)
        header[n] = {"dtype": file_dtype_of(t.dtype).st_name, "shape": list(t.shape),
                     "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return b"".join([struct.pack("<Q", len(text)), text] + chunks)


def save_file(tensors, filename, metadata=None):
    """Write a dict {name: tensor} into filename in the safetensors format."""
    data = save(tensors, metadata)
    with open(filename, "wb") as f:
        f.write(data)


# -- reading --------------------------------------------------------------------------------------
def parse_header(data):
    """(metadata or None, [(name, FileDtype, shape, begin, end)] in offset order, data start)."""
    n_all = len(data)
    if n_all < 8:
        raise SafetensorError("Error while deserializing header: header too small")
    (n,) = struct.unpack("<Q", bytes(data[:8]))
    if n > MAX_HEADER:
        raise SafetensorError(f"Error while deserializing header: header too large ({n} bytes; at most {MAX_HEADER})")
    if 8 + n > n_all:
        raise SafetensorError(f"Error while deserializing header: invalid header length {n}: the file "
                              f"has {n_all} bytes")
    raw = bytes(data[8:8 + n])
    if not raw.startswith(b"{"):
        raise SafetensorError("Error while deserializing header: invalid header start (expected '{')")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SafetensorError(f"Error while deserializing header: invalid JSON in header: {e}") from None
    if not isinstance(header, dict):
        raise SafetensorError("Error while deserializing header: the header is not a JSON object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        raise SafetensorError("Error while deserializing header: __metadata__ must map str to str")
    entries = []
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) - {"dtype", "shape", "data_offsets"} \
                or not {"dtype", "shape", "data_offsets"} <= set(info):
            raise SafetensorError(f"Error while deserializing header: tensor '{name}' needs exactly "
                                  "dtype, shape and data_offsets")
        dt, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if dt not in BY_ST_NAME:
            raise SafetensorError(f"Error while deserializing header: tensor '{name}' has unknown dtype {dt!r}")
        if not isinstance(shape, list) or not all(type(v) is int and v >= 0 for v in shape):
            raise SafetensorError(f"Error while deserializing header: tensor '{name}' has an invalid shape {shape!r}")
        if not (isinstance(offs, list) and len(offs) == 2 and all(type(v) is int and v >= 0 for v in offs)):
            raise SafetensorError(f"Error while deserializing header: tensor '{name}' has invalid "
                                  f"data_offsets {offs!r}")
        entries.append((name, BY_ST_NAME[dt], shape, offs[0], offs[1]))
    entries.sort(key=lambda e: (e[3], e[4]))
    start = 0
    for name, fmt, shape, b, e in entries:
        if b != start or e < b:
            raise SafetensorError(f"Error while deserializing header: invalid offset for tensor '{name}': "
                                  f"data_offsets [{b}, {e}] (expected to start at {start}: ranges must "
                                  "follow each other without gap or overlap)")
        numel = 1
        for v in shape:
            numel *= v
        if numel * fmt.itemsize != e - b:
            raise SafetensorError(f"Error while deserializing header: tensor '{name}' of dtype "
                                  f"{fmt.st_name} and shape {shape} needs {numel * fmt.itemsize} bytes, "
                                  f"its data_offsets [{b}, {e}] hold {e - b}")
        start = e
    if 8 + n + start != n_all:
        raise SafetensorError(f"Error while deserializing header: metadata incomplete buffer: the tensors "
                              f"end at byte {start} of the data, which holds {n_all - 8 - n} bytes")
    return metadata, entries, 8 + n


def _device(device):
    return coerce(device if device is not None else "cpu")


def _load(data, device):
    data = memoryview(data)
    _, entries, base = parse_header(data)
    dev = _device(device)
    out = {}
    for name, fmt, shape, b, e in sorted(entries, key=lambda x: x[0]):
        what = f"safetensors tensor '{name}'"
        check_loadable(fmt, what)
        fmt = for_device(fmt, dev, what)
        if fmt.target is D.complex64:   # float32 pairs (docs/complex.md)
            storage = storage_from_file_bytes(data[base + b:base + e], BY_ST_NAME["F32"], (e - b) // 4, dev)
            out[name] = wrap_complex(Tensor._make(storage, tuple(shape) + (2,), None, 0, D.float32, dev))
            continue
        numel = (e - b) // fmt.itemsize
        storage = storage_from_file_bytes(data[base + b:base + e], fmt, numel, dev)
        out[name] = Tensor._make(storage, tuple(shape), None, 0, fmt.target, dev)
    return out


def load(data, device="cpu"):
    """The tensors of safetensors bytes, as a dict {name: tensor} (on cpu by default)."""
    return _load(data, device)


def load_file(filename, device="cpu"):
    """The tensors of a safetensors file, as a dict {name: tensor} on `device`."""
    with open(filename, "rb") as f:
        return _load(f.read(), device)


def metadata(data):
    """The __metadata__ dict of safetensors bytes (None where there is none)."""
    return parse_header(memoryview(data))[0]


def load_metadata(filename):
    with open(filename, "rb") as f:
        return metadata(f.read())


__all__ = ["save", "save_file", "load", "load_file", "SafetensorError", "metadata", "load_metadata"]
