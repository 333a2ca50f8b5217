"""torch.hub's checkpoint loading: load_state_dict_from_url (and its awaitable form for pages
that cannot block), download_url_to_file, get_dir/set_dir.

A .pt/.pth file (torch.save's zip format) loads through torchweb.load (restricted unpickler);
a .safetensors file (by its name, or by its content) through torchweb.safetensors. In CPython
the file is downloaded once into <hub dir>/checkpoints (PyTorch's cache layout); in the browser
(Pyodide) it is fetched with the JS fetch API into memory.
"""

import hashlib
import os
import re
from urllib.parse import urlparse

from .serialization import load as _load, safetensors as _st
from .serialization.url_fetch import fetch_bytes, fetch_bytes_async, in_browser
from ._device import device

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir = [None]


def get_dir():
    """The hub cache directory: set_dir's, else $TORCHWEB_HOME/hub, else ~/.cache/torchweb/hub."""
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    home = os.environ.get("TORCHWEB_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "torchweb")
    return os.path.join(home, "hub")


def set_dir(d):
    _hub_dir[0] = os.path.expanduser(os.fspath(d))


def _file_name(url, file_name):
    return file_name or os.path.basename(urlparse(url).path) or "checkpoint.pt"


def _check_hash(data, name):
    m = HASH_REGEX.search(name)
    prefix = m.group(1) if m else None
    if prefix:
        digest = hashlib.sha256(data).hexdigest()
        if not digest.startswith(prefix):
            raise RuntimeError(f'invalid hash value (expected "{prefix}", got "{digest}")')


def _decode(data, name, map_location, weights_only):
    is_st = name.endswith(".safetensors") or (data[:4] != b"PK\x03\x04" and data[8:9] == b"{")
    if is_st:
        return _st.load(data, device=map_location if isinstance(map_location, (str, device)) else "cpu")
    return _load(data, map_location=map_location, weights_only=weights_only)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download url into the file dst (checking sha256 against hash_prefix if given)."""
    data = fetch_bytes(url, progress)
    if hash_prefix is not None:
        digest = hashlib.sha256(data).hexdigest()
        if not digest.startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
    tmp = dst + ".partial"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dst)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=True):
    """torch.hub.load_state_dict_from_url: the object of the checkpoint at url.

    progress: True prints a percentage for large files, a callable is called as
    progress(bytes_done, bytes_total). In CPython the file is cached in model_dir (default
    get_dir()/checkpoints) and not downloaded again; in Pyodide it is fetched into memory, which
    blocks only where the page can (pyodide.ffi.can_run_sync()); elsewhere use
    `await load_state_dict_from_url_async(...)`. check_hash compares the sha256 of the file with
    the hex digits after the last '-' of its name (PyTorch's convention)."""
    name = _file_name(url, file_name)
    if in_browser() and model_dir is None:
        data = fetch_bytes(url, progress)
    else:
        model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
        os.makedirs(model_dir, exist_ok=True)
        path = os.path.join(model_dir, name)
        if not os.path.exists(path):
            download_url_to_file(url, path, None, progress)
        with open(path, "rb") as f:
            data = f.read()
    if check_hash:
        _check_hash(data, name)
    return _decode(data, name, map_location, weights_only)


async def load_state_dict_from_url_async(url, model_dir=None, map_location=None, progress=True,
                                         check_hash=False, file_name=None, weights_only=True):
    """The awaitable form of load_state_dict_from_url (for pages that cannot block). Fetches into
    memory (no cache)."""
    name = _file_name(url, file_name)
    data = await fetch_bytes_async(url, progress)
    if check_hash:
        _check_hash(data, name)
    return _decode(data, name, map_location, weights_only)
