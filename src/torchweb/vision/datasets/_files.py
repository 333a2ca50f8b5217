"""Bytes to tensors, checksums and downloads for the datasets (torchvision.datasets.utils'
counterparts). Downloads go through torchweb's fetch: urllib in CPython, the page's fetch in
Pyodide (blocking where the page can: pyodide.ffi.can_run_sync())."""

import gzip
import hashlib
import os
import tarfile

import torchweb as torch
from torchweb._tensor import Tensor
from torchweb.serialization.storage_bytes import BY_ST_NAME, storage_from_file_bytes
from torchweb.serialization.url_fetch import fetch_bytes


def tensor_from_bytes(data, st_name, shape, big_endian=False):
    """A tensor of `shape` on the default device (webgpu where there is an adapter, as every
    torchweb tensor is made; cpu needs numpy, absent in the page) from packed elements
    (safetensors' type names: U8, I32, F32...); one bulk conversion, not a list per element."""
    fmt = BY_ST_NAME[st_name]
    numel = 1
    for s in shape:
        numel *= s
    if len(data) < numel * fmt.itemsize:
        raise RuntimeError(f"expected {numel} elements of {st_name} ({numel * fmt.itemsize} bytes), "
                           f"found {len(data)} bytes")
    dev = torch.get_default_device()
    storage = storage_from_file_bytes(data, fmt, numel, dev, big_endian=big_endian)
    return Tensor._make(storage, tuple(shape), None, 0, fmt.target, dev)


def calculate_md5(fpath, chunk_size=1024 * 1024):
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_integrity(fpath, md5=None):
    if not os.path.isfile(fpath):
        return False
    return md5 is None or calculate_md5(fpath) == md5


def download_url(url, root, filename=None, md5=None):
    """Fetch url into root/filename unless a file with that md5 is there; checks the md5."""
    root = os.path.expanduser(root)
    fpath = os.path.join(root, filename or os.path.basename(url))
    os.makedirs(root, exist_ok=True)
    if check_integrity(fpath, md5):
        return fpath
    data = fetch_bytes(url, progress=True)
    if md5 is not None and hashlib.md5(data, usedforsecurity=False).hexdigest() != md5:
        raise RuntimeError(f"File not found or corrupted: {url} (md5 mismatch)")
    with open(fpath + ".partial", "wb") as f:
        f.write(data)
    os.replace(fpath + ".partial", fpath)
    return fpath


def extract_archive(from_path, to_path=None):
    """A .gz file to its name without .gz; a .tar.gz/.tgz into to_path (members that would
    land outside to_path are refused, as tarfile's 'data' filter does)."""
    to_path = to_path or os.path.dirname(from_path)
    if from_path.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(from_path) as tar:
            tar.extractall(to_path, filter="data")
        return to_path
    if from_path.endswith(".gz"):
        out = os.path.join(to_path, os.path.basename(from_path)[:-3])
        with gzip.open(from_path, "rb") as src, open(out, "wb") as dst:
            dst.write(src.read())
        return out
    raise RuntimeError(f"Archive type of {from_path} is not supported")


def download_and_extract_archive(url, download_root, extract_root=None, filename=None, md5=None,
                                 remove_finished=False):
    archive = download_url(url, download_root, filename, md5)
    extract_archive(archive, extract_root or download_root)
    if remove_finished:
        os.remove(archive)
