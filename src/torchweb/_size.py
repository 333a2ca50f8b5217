"""torch.Size and shape helpers shared by views, broadcasting and reductions."""

from math import prod

from ._is_tensor import is_tensor


_tuple_getitem = tuple.__getitem__


class Size(tuple):
    def __repr__(self):
        return f"torch.Size({list(self)})"

    def __getitem__(self, key):
        if type(key) is slice:   # torch.Size slices are Sizes (slice has no subclasses)
            return Size(_tuple_getitem(self, key))
        return _tuple_getitem(self, key)   # (every shape[i] comes here: kept short)

    def numel(self):
        return prod(self)


def numel(shape):
    return prod(shape)


_CONTIGUOUS = {}   # shape -> its contiguous strides: every new tensor asks


_VIEW_STRIDES = {}   # (shape, strides, new shape) -> view_strides(...): a step's reshapes repeat


def view_strides(old_shape, old_stride, shape):
    """Strides that show the elements of a view (old_shape, old_stride) in `shape` without a
    copy, or None (PyTorch's computeStride)."""
    key = (old_shape, old_stride, shape)
    try:
        return _VIEW_STRIDES[key]
    except KeyError:
        if len(_VIEW_STRIDES) > 4096:   # (programs with ever new shapes: stay bounded)
            _VIEW_STRIDES.clear()
        found = _VIEW_STRIDES[key] = _view_strides(old_shape, old_stride, shape)
        return found
    except TypeError:   # (a list)
        return _view_strides(old_shape, old_stride, shape)


def _view_strides(old_shape, old_stride, shape):
    old = list(zip(old_shape, old_stride))
    new_strides = [0] * len(shape)
    view_d = len(shape) - 1
    chunk_base_stride = old[-1][1] if old else 1
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[tensor_d][0]
        if tensor_d == 0 or (old[tensor_d - 1][0] != 1 and
                             old[tensor_d - 1][1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old[tensor_d - 1][1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)


def contiguous_strides(shape):
    try:
        return _CONTIGUOUS[shape]
    except (KeyError, TypeError):   # (TypeError: a list)
        pass
    strides = _contiguous_strides(shape)
    if type(shape) in (tuple, Size) and all(type(s) is int for s in shape):
        if len(_CONTIGUOUS) > 4096:   # programs with ever new shapes: stay bounded
            _CONTIGUOUS.clear()
        _CONTIGUOUS[shape] = strides
    return strides


def _contiguous_strides(shape):
    strides = [1] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        acc *= max(shape[i], 1)
    return tuple(strides)


def wrap_dim(dim, ndim, what="dim"):
    """PyTorch's dim wrapping: -1 is the last; a 0-d tensor accepts -1 and 0."""
    if type(dim) is int and -ndim <= dim < ndim:   # (the common case first: every dim= asks)
        return dim + ndim if dim < 0 else dim
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{what} must be an int, got {type(dim).__name__}")
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def required_dim(name, dim, axis):
    """An op's dim argument, given as dim or as axis (NumPy's name, which PyTorch takes): one of
    them is required."""
    if dim is None and axis is None:
        raise TypeError(f"{name}() missing 1 required positional argument: 'dim'")
    return dim if axis is None else axis


def as_shape(args, what="size"):
    """Shapes given as f(2, 3), f((2, 3)), f([2, 3]) or f(torch.Size)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    for s in args:   # (the common case, plain ints, checked without the conversions below)
        if type(s) is not int:
            break
    else:
        return tuple(args)
    out = []
    for s in args:
        if is_tensor(s):
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(f"{what} must be a tuple of ints, but got an element of type {type(s).__name__}")
        out.append(s)
    return tuple(out)


_BROADCAST = {}   # (shape, shape) -> their broadcast shape (errors are not cached)


def broadcast_shapes(*shapes):
    """The broadcast shape, folded pairwise as PyTorch's infer_size does, with its error: dims
    are compared from the right, and "tensor a" is the shape broadcast so far."""
    if len(shapes) == 2:
        a, b = shapes
        if a == b:   # the common case, same shapes: no folding
            return tuple(a)
        try:
            return _BROADCAST[a, b]   # (every broadcasting op asks: bias adds, norms, masks)
        except (KeyError, TypeError):   # (TypeError: a list)
            pass
        out = _broadcast_pair(tuple(a), tuple(b))
        if type(a) in (tuple, Size) and type(b) in (tuple, Size):
            if len(_BROADCAST) > 4096:
                _BROADCAST.clear()
            _BROADCAST[a, b] = out
        return out
    out = ()
    for i, s in enumerate(shapes):
        out = tuple(s) if i == 0 else _broadcast_pair(out, tuple(s))
    return out


def _broadcast_pair(a, b):
    # (plain tuples, walked by zip: indexing a Size runs Python code). From the right, as
    # PyTorch, whose error names the last mismatching dim.
    la, lb = len(a), len(b)
    if la < lb:
        a = (1,) * (lb - la) + a
    elif lb < la:
        b = (1,) * (la - lb) + b
    for i in range(len(a) - 1, -1, -1):
        sa, sb = a[i], b[i]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {i}")
    return tuple(sb if sa == 1 else sa for sa, sb in zip(a, b))


def shape_str(shape):
    """A shape as PyTorch's messages print it: [2, 3]."""
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"
