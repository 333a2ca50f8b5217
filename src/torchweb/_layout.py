"""torch.layout and torch.memory_format: the objects PyTorch code names (torch.strided,
torch.sparse_coo, torch.channels_last, ...), and what a memory format means for strides.

Dense torchweb tensors are strided (any strides), so channels_last is honest metadata: a
tensor made with it has NHWC strides. Ops compute on any strides and give contiguous results
(PyTorch's kernels would often keep channels_last: values are the same, strides differ)."""


class _Named:
    """A constant shown as torch.<name> and pickled by its name; layout and memory_format
    differ only in their class and registry."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (self._by_name, (self.name,))


def _layout_by_name(name):
    return LAYOUTS[name]


def _memory_format_by_name(name):
    return MEMORY_FORMATS[name]


class layout(_Named):
    __slots__ = ()
    __module__ = "torchweb"
    _by_name = staticmethod(_layout_by_name)


class memory_format(_Named):
    __slots__ = ()
    __module__ = "torchweb"
    _by_name = staticmethod(_memory_format_by_name)


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_mkldnn = layout("_mkldnn")
jagged = layout("jagged")
LAYOUTS = {lay.name: lay for lay in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr,
                                     sparse_bsc, _mkldnn, jagged)}

contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format   # (PyTorch's is a separate name for the same thing)
MEMORY_FORMATS = {f.name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)}


# dims from fastest-varying to slowest: NCHW stored as NHWC, NCDHW as NDHWC
_CHANNELS_LAST_ORDER = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}


def check_format(fmt, ndim, what):
    """Refuse what PyTorch refuses: a non-format, or a channels_last rank mismatch."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{what}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(fmt).__name__}")
    order = _CHANNELS_LAST_ORDER.get(fmt)
    if order is not None and ndim != len(order):
        raise RuntimeError(f"required rank {len(order)} tensor to use {fmt.name} format")


def dims_order(fmt):
    """The dims of a channels_last format from slowest-varying to fastest (the permutation to
    make contiguous), or None for the contiguous layout."""
    order = _CHANNELS_LAST_ORDER.get(fmt)
    return None if order is None else order[::-1]


def is_contiguous_as(shape, stride, fmt):
    """PyTorch's is_contiguous(memory_format=fmt): dims of size 1 may have any stride."""
    order = _CHANNELS_LAST_ORDER.get(fmt)
    if order is None:
        order = tuple(range(len(shape) - 1, -1, -1))
    elif len(shape) != len(order):
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True
