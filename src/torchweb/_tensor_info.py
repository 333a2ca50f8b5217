"""Tensor attributes that describe a tensor rather than compute on it: which backend holds it
(is_xpu, is_mps, ... are False: torchweb has cpu and webgpu), get_device, layout, itemsize,
nbytes, dim_order, and the flags of features torchweb has no use for (pinned, shared, named,
quantized, nested, inference tensors), properties or methods exactly as PyTorch has them."""

from . import _layout


def _false(self):
    return False


# PyTorch's getset descriptors: tensors of these backends and kinds never exist here
FALSE_PROPERTIES = ("is_xpu", "is_mps", "is_meta", "is_mkldnn", "is_vulkan", "is_xla", "is_ipu",
                    "is_maia", "is_mtia", "is_quantized", "is_nested", "is_sparse_csr")   # (is_sparse: _sparse_coo.py)


def get_device(input):
    """-1 for a cpu tensor, else the accelerator's index (webgpu has one device: 0)."""
    return -1 if input.device.type == "cpu" else 0


def is_pinned(self, device=None):
    """Page-locked host memory is a CUDA notion: never."""
    return False


def pin_memory(self, device=None):
    """Nothing to pin (no CUDA host transfers): the tensor itself."""
    return self


def is_shared(self):
    """Shared memory between processes (torch.multiprocessing) does not exist here."""
    return False


def share_memory_(self):
    """No other process to share with: the tensor itself, as PyTorch's for a CUDA tensor."""
    return self


def record_stream(self, s):
    """There are no CUDA streams: webgpu work is ordered by its one queue."""


def is_inference(input):
    """torchweb's inference_mode is no_grad: it makes no inference tensors."""
    return False


def is_distributed(input):
    return False


def _volatile(self):
    import warnings
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def dim_order(self, *, ambiguity_check=False):
    """The dims from outermost to innermost in memory (by stride; ties keep their order)."""
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(
                isinstance(f, _layout.memory_format) for f in ambiguity_check):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory formats.")
    shape, stride = self._shape, self._stride
    if ambiguity_check is True:
        ambiguous = 1 in shape or len(set(stride)) != len(stride)
    elif ambiguity_check:
        ambiguous = sum(1 for f in ambiguity_check if self.is_contiguous(memory_format=f)) != 1
    else:
        ambiguous = False
    if ambiguous:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of "
                           "the given memory formats.")
    n = len(shape)
    if self.is_contiguous():
        return tuple(range(n))
    if n == 4 and self.is_contiguous(memory_format=_layout.channels_last):
        return (0, 2, 3, 1)
    return tuple(sorted(range(n), key=lambda d: -stride[d]))


METHODS = {
    "get_device": get_device, "is_pinned": is_pinned, "pin_memory": pin_memory,
    "is_shared": is_shared, "share_memory_": share_memory_, "record_stream": record_stream,
    "is_inference": is_inference, "is_distributed": is_distributed, "dim_order": dim_order,
}

PROPERTIES = {
    **{name: _false for name in FALSE_PROPERTIES},
    "layout": lambda self: _layout.strided,
    "itemsize": lambda self: self.dtype.itemsize,
    "nbytes": lambda self: self.numel() * self.dtype.itemsize,
    "output_nr": lambda self: self._output_nr,
    "name": lambda self: None,
    "volatile": _volatile,
    "grad_dtype": lambda self: self.dtype,   # the dtype a gradient must have: the tensor's own
}
