"""torchweb.safetensors: safetensors.torch's API (save, save_file, load, load_file, save_model,
load_model) and safetensors' safe_open, in pure Python; the format is serialization/safetensors.py.

install_torch_alias() answers `import safetensors` and `import safetensors.torch` with this
module where the real package is not installed (the real one cannot hold torchweb tensors)."""

from collections import defaultdict

from ..serialization.safetensors import (SafetensorError, load, load_file, load_metadata,  # noqa: F401
                                        metadata, save, save_file)

__all__ = ["SafetensorError", "load", "load_file", "save", "save_file", "save_model", "load_model", "safe_open"]


class safe_open:
    """`with safe_open(path, framework="pt") as f: f.keys(), f.get_tensor(name), f.metadata()`.
    The file is read whole (no mmap in the page); tensors are made on first request."""

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "torch", "pytorch"):
            raise ValueError(f"safe_open: framework {framework!r} is not supported here; use 'pt'")
        with open(filename, "rb") as f:
            self._data = f.read()
        self._device = device
        self._tensors = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._data = self._tensors = None

    def _all(self):
        if self._tensors is None:
            self._tensors = load(self._data, device=self._device)
        return self._tensors

    def keys(self):
        return sorted(self._all())

    def offset_keys(self):
        return self.keys()

    def get_tensor(self, name):
        tensors = self._all()
        if name not in tensors:
            raise SafetensorError(f"File does not contain tensor {name}")
        return tensors[name]

    def get_slice(self, name):
        return self.get_tensor(name)

    def metadata(self):
        return metadata(self._data)


def _shared_groups(state_dict):
    """Names whose tensors share one storage (safetensors refuses to write shared memory)."""
    groups = defaultdict(set)
    for k, v in state_dict.items():
        if v.numel():
            groups[v.untyped_storage().data_ptr()].add(k)
    return [g for g in sorted(groups.values(), key=sorted) if len(g) > 1]


def _is_complete(t):
    return t.storage_offset() == 0 and t.numel() * t.element_size() == t.untyped_storage().nbytes()


def _remove_duplicate_names(state_dict, preferred_names=()):
    """{kept name: [names dropped as its aliases]}, as safetensors.torch chooses them."""
    to_remove = defaultdict(list)
    for shared in _shared_groups(state_dict):
        complete = {n for n in shared if _is_complete(state_dict[n])}
        if not complete:
            raise RuntimeError(f"Error while trying to find names to remove to save state dict, but found no suitable "
                               f"name to keep for saving amongst: {shared}. None is covering the entire storage.")
        keep = sorted(complete)[0]
        preferred = set(preferred_names) & complete
        if preferred:
            keep = sorted(preferred)[0]
        to_remove[keep] += [n for n in sorted(shared) if n != keep]
    return to_remove


def save_model(model, filename, metadata=None, force_contiguous=True):
    """Save model's state_dict, writing tied weights once (the others named in the metadata)."""
    state_dict = model.state_dict()
    for kept, removed in _remove_duplicate_names(state_dict).items():
        for name in removed:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, kept)
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    save_file(state_dict, filename, metadata=metadata)


def load_model(model, filename, strict=True, device="cpu"):
    """Load a save_model file into model; (missing, unexpected) names as safetensors gives them."""
    state_dict = load_file(filename, device=device)
    to_removes = _remove_duplicate_names(model.state_dict(), preferred_names=state_dict.keys())
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    for group in to_removes.values():
        for name in group:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        raise RuntimeError(f"Error(s) in loading state_dict for {model.__class__.__name__}:\n    "
                           f"Missing key(s) in state_dict: {', '.join(sorted(missing))}\n    "
                           f"Unexpected key(s) in state_dict: {', '.join(unexpected)}")
    return missing, unexpected
