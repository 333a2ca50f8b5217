"""Collation: PyTorch's torch.utils.data._utils.collate (default_collate, default_convert,
collate and its type map default_collate_fn_map).

Batches of tensors are stacked (on the samples' device: webgpu samples give a webgpu batch);
Python ints and bools become int64 and bool tensors, as in PyTorch; Python floats become
float32 tensors (PyTorch: float64, which WebGPU does not have). numpy arrays and scalars are
handled when numpy is present (recognised by their type's module, numpy is never imported
here unless it is already installed)."""

import collections.abc
import copy
import re

from ..._tensor import Tensor
from ... import _creation
from ...ops.join import stack
from ..._dtype import float32

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def default_convert(data):
    """Each numpy array (or numpy scalar) inside data as a tensor; tensors, mappings, namedtuples
    and sequences walked through (tuples become lists, as in PyTorch); anything else unchanged.
    The DataLoader's collate_fn when automatic batching is off (batch_size=None)."""
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]   # PyTorch's backwards compatibility
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate a batch (a list of samples) by the samples' type: collate_fn_map's function for
    the first sample's type (exact type, then the first key it is an instance of), else
    mappings, namedtuples and sequences collated field by field."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map) for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([_creation.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _creation.as_tensor(list(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    return _creation.tensor(list(batch), dtype=float32)   # PyTorch: float64


def collate_int_fn(batch, *, collate_fn_map=None):
    return _creation.tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {Tensor: collate_tensor_fn}
try:
    import numpy as _np
    default_collate_fn_map[_np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(_np.bool_, _np.number, _np.object_)] = collate_numpy_scalar_fn
except ImportError:   # no numpy (Pyodide without it): nothing of numpy's can reach a batch
    pass
default_collate_fn_map[float] = collate_float_fn
default_collate_fn_map[int] = collate_int_fn
default_collate_fn_map[str] = collate_str_fn
default_collate_fn_map[bytes] = collate_str_fn


def default_collate(batch):
    """Put a batch (a list of samples) together with a new leading batch dimension: tensors
    stacked, numpy arrays -> stacked tensors, ints -> int64 tensor, bools -> bool tensor,
    floats -> float32 tensor (PyTorch: float64), str/bytes unchanged (a list), mappings,
    namedtuples and sequences collated field by field (tuples give lists). The DataLoader's
    collate_fn when batching."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
