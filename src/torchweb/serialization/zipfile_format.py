"""PyTorch's checkpoint file (torch.save since 1.6): an uncompressed zip archive.

    <name>/data.pkl                 the object, pickled (protocol 2); tensors refer to storages
                                    by persistent id ('storage', torch.FloatStorage, key, location, numel)
    <name>/.format_version          "1"
    <name>/.storage_alignment       "64": each record's data starts at a multiple of 64 bytes
    <name>/byteorder                "little"
    <name>/data/<key>               one storage's elements, little-endian
    <name>/version                  "3"
    <name>/.data/serialization_id   an id of the file's content

<name> is "archive" (torch.save into a file object) or the file's name without its extension.
Reading takes the name from the archive's data.pkl. Storages shared by several tensors are
written once; each tensor records its offset, size and stride into its storage, so views and
shared storages come back as they were.
"""

import hashlib
import io
import struct
import zipfile

from .. import _dtype as D
from .._complex_tensor import wrap as wrap_complex
from .storage_bytes import BY_NAME, BY_STORAGE, check_loadable, file_dtype_of, for_device, \
    Int64OutOfRange, check_views, storage_from_file_bytes, storage_to_file_bytes
from .._tensor import Tensor

ALIGN = 64
# pickle of torch.serialization's MAGIC_NUMBER, how a legacy (pre-1.6) checkpoint starts
_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"
_LEGACY_HELP = ("Re-save it with a recent PyTorch: torch.save(torch.load(path, weights_only=True), "
                "new_path) writes the zip format")


# -- writing --------------------------------------------------------------------------------------
class _AlignedZip:
    """zipfile writing stored records whose data starts at multiples of ALIGN, as PyTorch's
    writer pads them (an extra field "FB" filled with "Z")."""

    def __init__(self, fileobj):
        self.zf = zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True)

    def write(self, name, data):
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.create_system = 0
        encoded = name.encode("utf-8")
        start = self.zf.fp.tell() + 30 + len(encoded) + 4
        pad = -start % ALIGN
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        self.zf.writestr(info, bytes(data))

    def close(self):
        self.zf.close()


def write_archive(fileobj, name, obj):
    from .pickler import Pickler  # deferred: load time (torch.save's pickler loads with the first save)
    keys = {}        # id(storage) -> key
    records = []     # (key, storage)

    def describe(t):
        if t.dtype.is_complex:   # its pairs' float32 storage, counted in complex elements
            storage = t._r._storage
            key = keys.get(id(storage))
            if key is None:
                key = keys[id(storage)] = str(len(keys))
                records.append((key, storage))
            return file_dtype_of(t.dtype).storage, key, "cpu", storage.numel // 2, t
        storage = t._storage
        if t.dtype is not storage.dtype:   # a dtype view: write its own copy
            t = t.contiguous().clone()
            storage = t._storage
        key = keys.get(id(storage))
        if key is None:
            key = keys[id(storage)] = str(len(keys))
            records.append((key, storage))
        fmt = file_dtype_of(storage.dtype)
        return fmt.storage, key, "cpu", storage.numel, t

    pkl = Pickler(describe).dump(obj)
    z = _AlignedZip(fileobj)
    z.write(f"{name}/data.pkl", pkl)
    z.write(f"{name}/.format_version", b"1")
    z.write(f"{name}/.storage_alignment", b"64")
    z.write(f"{name}/byteorder", b"little")
    digest = hashlib.sha256(pkl)
    for key, storage in records:
        data = storage_to_file_bytes(storage)
        digest.update(data[:4096])
        z.write(f"{name}/data/{key}", data)
    z.write(f"{name}/version", b"3\n")
    z.write(f"{name}/.data/serialization_id", str(int(digest.hexdigest(), 16))[:40].zfill(40).encode())
    z.close()


# -- reading --------------------------------------------------------------------------------------
def check_format(head):
    """Refuse what is not a zip checkpoint, naming what it is."""
    if head[:4] == b"PK\x03\x04":
        return
    if head[:len(_LEGACY_MAGIC)] == _LEGACY_MAGIC or head[:2] == b"\x80\x02":
        raise RuntimeError("this checkpoint is in PyTorch's legacy format (torch.save before 1.6, or "
                           "_use_new_zipfile_serialization=False), which torchweb does not support. "
                           + _LEGACY_HELP)
    if len(head) >= 262 and head[257:262] == b"ustar":
        raise RuntimeError("this checkpoint is in PyTorch's oldest (tar) format, which torchweb does "
                           "not support. " + _LEGACY_HELP)
    if len(head) >= 9 and head[8:9] == b"{":
        raise RuntimeError("this looks like a safetensors file, not a torch.save checkpoint: load it "
                           "with torchweb.safetensors.load_file(path) or torchweb.safetensors.load(data)")
    if not head:
        raise RuntimeError("cannot load an empty file: it is not a PyTorch checkpoint")
    raise RuntimeError("not a PyTorch checkpoint: torch.save's files are zip archives (they start "
                       f"with b'PK\\x03\\x04'), this one starts with {bytes(head[:8])!r}")


class Archive:
    """A zip checkpoint opened for reading."""

    def __init__(self, fileobj):
        try:
            self.zf = zipfile.ZipFile(fileobj, "r")
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
            raise RuntimeError(f"corrupt or truncated checkpoint (not a readable zip archive): {e}") from None
        names = [n for n in self.zf.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if not names:
            raise RuntimeError("corrupt checkpoint: the zip archive has no <name>/data.pkl record "
                               "(is it a torch.save file?)")
        self.prefix = names[0][:-len("data.pkl")]
        self.names = set(self.zf.namelist())

    def read(self, record):
        name = self.prefix + record
        if name not in self.names:
            raise RuntimeError(f"corrupt checkpoint: record '{name}' is missing from the archive")
        try:
            return self.zf.read(name)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
            raise RuntimeError(f"corrupt or truncated checkpoint: cannot read '{name}': {e}") from None

    def has(self, record):
        return self.prefix + record in self.names


class LoadedStorage:
    """A storage a tensor record names: its bytes are read and moved to the device the first
    time a tensor needs them, once per element type (all tensors of a key share it)."""

    def __init__(self, archive, fmt, key, location, numel, device, big_endian):
        self.archive, self.fmt, self.key, self.location = archive, fmt, key, location
        self.numel, self.device, self.big_endian = numel, device, big_endian
        self._made = {}

    def make_tensor(self, offset, size, stride, fmt=None):
        fmt = fmt or self.fmt
        if fmt.target is D.complex64:   # the pairs, as float32 (docs/complex.md)
            pairs = self.make_tensor(2 * offset, tuple(size) + (2,), tuple(2 * s for s in stride) + (1,),
                                     BY_NAME["float32"])
            return wrap_complex(pairs)
        numel = self.numel
        if fmt is not self.fmt:   # a typed view of an untyped storage: numel counts bytes
            numel = self.numel * self.fmt.itemsize // fmt.itemsize
        _check_view(self.key, numel, offset, size, stride)
        made = self._made.get(fmt.name)
        if made is None:
            what = f"storage '{self.key}' of the checkpoint"
            check_loadable(fmt, what)
            file_fmt, fmt = fmt, for_device(fmt, self.device, what)
            data = self.archive.read(f"data/{self.key}")
            if len(data) < numel * fmt.itemsize:
                raise RuntimeError(
                    f"corrupt checkpoint: storage '{self.key}' should hold {numel} elements of "
                    f"torch.{fmt.name} ({numel * fmt.itemsize} bytes) but its record has {len(data)} bytes")
            try:
                made = (storage_from_file_bytes(data, fmt, numel, self.device, self.big_endian), fmt.target, None)
            except Int64OutOfRange:
                # some element is outside int32's range: fine unless a tensor views it
                made = (storage_from_file_bytes(data, fmt, numel, self.device, self.big_endian, wrap=True),
                        fmt.target, (data, fmt))
            self._made[file_fmt.name] = made
        storage, dtype, unchecked = made
        if unchecked is not None:
            check_views(unchecked[0], unchecked[1], self.big_endian, offset, size, stride)
        return Tensor._make(storage, size, stride, offset, dtype, self.device)


def _check_view(key, numel, offset, size, stride):
    ok = (isinstance(offset, int) and offset >= 0 and len(size) == len(stride)
          and all(isinstance(v, int) and v >= 0 for v in size)
          and all(isinstance(v, int) and v >= 0 for v in stride))
    if ok and all(size):
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        ok = last < numel
    if not ok:
        raise RuntimeError(f"corrupt checkpoint: a tensor of size {list(size)}, stride {list(stride)} "
                           f"at offset {offset} reaches outside its storage '{key}' of {numel} elements")


def read_archive(fileobj, resolve_device):
    """The object of a zip checkpoint. resolve_device(location, numel, fmt) -> torchweb device."""
    from .unpickler import StorageType, Unpickler  # deferred: load time (with the first torch.load)
    archive = Archive(fileobj)
    byteorder = archive.read("byteorder").decode("ascii", "replace").strip() if archive.has("byteorder") else "little"
    if byteorder not in ("little", "big"):
        raise RuntimeError(f"corrupt checkpoint: unknown byteorder {byteorder!r}")
    storages = {}

    def persistent_load(pid):
        from pickle import UnpicklingError
        if len(pid) != 5:
            raise UnpicklingError(f"a storage persistent id has 5 fields, got {pid!r:.200}")
        _, stype, key, location, numel = pid
        if not isinstance(stype, StorageType):
            raise UnpicklingError(f"unsupported storage type {stype!r:.100}")
        key = key.decode("ascii") if isinstance(key, bytes) else key
        location = location.decode("ascii") if isinstance(location, bytes) else location
        if not isinstance(key, str) or not isinstance(location, str) or not isinstance(numel, int) or numel < 0:
            raise UnpicklingError(f"malformed storage persistent id {pid!r:.200}")
        s = storages.get(key)
        if s is None:
            device = resolve_device(location)
            s = storages[key] = LoadedStorage(archive, stype.fmt, key, location, numel, device,
                                              byteorder == "big")
        return s

    return Unpickler(archive.read("data.pkl"), persistent_load).load()


def open_source(f):
    """(file object, head bytes) for a path, a file object or bytes."""
    import os
    if isinstance(f, (bytes, bytearray, memoryview)):
        fileobj = io.BytesIO(bytes(f))
    elif isinstance(f, (str, os.PathLike)):
        fileobj = open(f, "rb")
    elif hasattr(f, "read"):
        fileobj = f
        if not (hasattr(f, "seek") and getattr(f, "seekable", lambda: True)()):
            fileobj = io.BytesIO(f.read())
    else:
        raise TypeError(f"expected a path, a file object or bytes, got {type(f).__name__}")
    start = fileobj.tell()
    head = fileobj.read(512)
    fileobj.seek(start)
    return fileobj, head


# re-exported for the safetensors reader and tests
__all__ = ["write_archive", "read_archive", "check_format", "open_source", "BY_STORAGE"]
