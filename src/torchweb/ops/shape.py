"""View ops: new shapes and strides over the same storage, each with its backward.

Every view goes through ViewFn so that autograd sees one node per view (named as PyTorch
names them: ViewBackward0, PermuteBackward0, ...), and writes through views reach the base."""

from math import prod

from .. import _dtype as D
from .._size import as_shape, broadcast_shapes, contiguous_strides, numel, Size, view_strides, wrap_dim
from ..autograd import grad_mode
from ..autograd.function import Function, FunctionCtx, Node
from .operands import empty, expand_to
from . import elementwise as E
from .registry import define
from .adjoint import linear_backward
from .lowering import matmul_reshaped
from .._layout import check_format, dims_order

_VIEW_FUNCTIONS = {}


def _view_fn(name):
    fn = _VIEW_FUNCTIONS.get(name)
    if fn is None:
        # (recorded by _record_view, not apply: the node's one input is x, as PyTorch's
        # ViewBackward0 has one next function)
        def forward(ctx, x, shape, stride, offset, back):
            raise RuntimeError("a view's node is recorded by ops.shape.make_view")

        def backward(ctx, g):
            return (ctx.back(g),)

        backward_name = name if "Backward" in name else name + "Backward0"
        # the backs are views, reshapes, sums, _scatter_back and as_strided's _spread (recorded
        # with create_graph): differentiable, but for unfold's col2im
        fn = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                      "_backward_name": backward_name, "_forward_is_raw": True,
                                      "_double_backward": name != "UnfoldBackward0"})
        _VIEW_FUNCTIONS[name] = fn
    return fn


def make_view(name, x, shape, stride, offset, back):
    if grad_mode._state["enabled"] and x.requires_grad:
        v = _record_view(_VIEW_FUNCTIONS.get(name) or _view_fn(name), x, shape, stride, offset, back)
        if x._multi_output is not None:   # a view of such a view is refused in place too
            v._multi_output = (name, 0)
        return v
    return x._view(Size(shape), tuple(stride), offset)


_NEEDS = (True,)


def _record_view(fn, x, shape, stride, offset, back):
    """The view of x (which requires grad, its history current: make_view read
    x.requires_grad) and its node, whose one input is x, in one frame (a view of a tensor that
    requires grad is one of the commonest ops recorded: reshapes and transposes of every
    layer). back(g): the gradient of x from the view's."""
    ctx = FunctionCtx()
    ctx.needs_input_grad = _NEEDS
    ctx.back = back
    g = x._grad_fn
    edge = (g, x._output_nr) if g is not None else (x._accumulator(), 0)
    out = x._view(Size(shape), tuple(stride), offset)
    node = Node(fn, ctx, (edge,), ((x._shape, x.dtype),))   # (one output: no output metadata, see Function.apply)
    if out.dtype.is_floating_point:   # (out is new: _set_history with no old history to move)
        out._grad_fn = node
        out._requires_grad = True
    return out


def multi_output_views(views, name):
    """views, returned together by op `name` (unbind, split, chunk) under autograd: marked, so
    that an in-place write to one is refused as PyTorch does (ops/inplace.py)."""
    if views and views[0]._grad_fn is not None:
        for i, v in enumerate(views):
            v._multi_output = (name, i)
    return views


def plain_views(views):
    """views without multi_output_views' mark: the ops PyTorch lets write in place
    (tensor_split, unsafe_split)."""
    for v in views:
        v.__dict__.pop("_multi_output", None)
    return views


def _in_place_view(name):
    """Tensor.<name>_: view op `name` (of this module) applied to the tensor's own metadata
    (shape, strides, offset), its history moved to the view's node, as PyTorch's t_,
    transpose_ and squeeze_ do."""
    def inplace(self, *args, **kwargs):
        if grad_mode.is_grad_enabled() and self.requires_grad and self.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        v = globals()[name](self, *args, **kwargs)
        self._shape, self._stride, self._offset = v._shape, v._stride, v._offset
        if v._grad_fn is not None:
            self._set_history(v._grad_fn, v._output_nr)
        return self
    inplace.__name__ = name + "_"
    inplace.__doc__ = f"In-place {name}: changes this tensor's shape and strides, not its values."
    return inplace


def _scatter_back(in_shape, redo):
    """Backward of an indexing view: the gradient placed into zeros of the input's shape."""
    def back(g):
        if grad_mode._state["enabled"] and g.requires_grad:   # create_graph: recorded
            return _ViewScatter.apply(g, in_shape, redo)
        return _scatter_raw(g, in_shape, redo)
    return back


def _scatter_raw(g, in_shape, redo):
    z = empty(in_shape, g.dtype, g.device)
    E.fill(z, 0)
    E.copy_into(redo(z), g)
    return z


class _ViewScatter(Function):
    """g placed into zeros at a view (the backward of select, slicing, diagonal): its own
    backward takes the view again (PyTorch's SliceBackwardBackward0, ...)."""
    _double_backward = True

    @staticmethod
    def forward(ctx, g, in_shape, redo):
        ctx.redo = redo
        return _scatter_raw(g, in_shape, redo)

    @staticmethod
    def backward(ctx, gg):
        return ctx.redo(gg), None, None


# -- reshaping ---------------------------------------------------------------------------
def _infer_shape(shape, n):
    if -1 not in shape and min(shape, default=0) >= 0 and prod(shape) == n:
        return tuple(shape)   # (the common case: nothing to infer, nothing negative)
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = numel([s for s in shape if s != -1])
    if neg:
        if known == 0 or n % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {n}")
        shape[neg[0]] = n // known
    elif known != n:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {n}")
    return tuple(shape)


def _view_strides(x, shape):
    """Strides that show x's elements in `shape` without a copy, or None (PyTorch's computeStride)."""
    if x._stride == contiguous_strides(x._shape) or x.numel() <= 1 or x.is_contiguous():
        return contiguous_strides(shape)
    return view_strides(x._shape, x._stride, shape)


def _reshape_back(g, shape):
    """A view's gradient: g reshaped back; where g is a deferred product (a linear layer's
    input gradient, [B*T, C] for a [B, T, C] input), pending in that shape, so that the ops
    after it are stored by the product's kernel (lowering.matmul_reshaped)."""
    out = reshape(g, shape)
    if out._storage.pending is not None:
        matmul_reshaped(out)
    return out


@define("view", "shape", torch=False, doc='view(*shape) -> Tensor\n\nThe same storage seen with another shape (-1 inferred); strides must allow it.')
def view(x, *shape, size=None, dtype=None):
    if size is not None:
        shape = (size,)
    if dtype is not None or len(shape) == 1 and isinstance(shape[0], D.dtype):
        raise RuntimeError("view(dtype) (reinterpreting the bits as another dtype) is not supported "
                           "by torchweb; use .to(dtype) to convert the values")
    shape = _infer_shape(as_shape(shape), x.numel())
    strides = _view_strides(x, shape)
    if strides is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least "
                           "one dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    in_shape = x.shape
    return make_view("View", x, shape, strides, x._offset, lambda g: _reshape_back(g, in_shape))


@define("reshape", "shape", doc='reshape(input, shape) -> Tensor\n\nA view with the new shape where the strides allow, else a copy.')
def reshape(input, *shape_args, shape=None):
    shape = _infer_shape(as_shape(shape_args if shape is None else (shape,)), input.numel())
    strides = _view_strides(input, shape)
    if strides is not None:   # view(x, shape), without working the shape out a second time
        in_shape = input.shape
        return make_view("View", input, shape, strides, input._offset, lambda g: _reshape_back(g, in_shape))
    return view(contiguous(input), shape)


@define("flatten", "shape", doc='flatten(input, start_dim=0, end_dim=-1) -> Tensor\n\nThe dims from start_dim to end_dim merged into one.')
def flatten(input, start_dim=0, end_dim=-1):
    if input.dim() == 0:
        return reshape(input, 1)
    s, e = wrap_dim(start_dim, input.dim()), wrap_dim(end_dim, input.dim())
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input.shape[:s] + (numel(input.shape[s:e + 1]),) + input.shape[e + 1:]
    return reshape(input, shape)


@define("unflatten", "shape", doc='unflatten(input, dim, sizes) -> Tensor\n\nDim `dim` split into `sizes`.')
def unflatten(input, dim=None, sizes=None, *, axis=None):
    if dim is None and axis is None:
        raise TypeError("unflatten() missing 1 required positional argument: 'dim'")
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    d = wrap_dim(dim, input.dim())
    sizes = _infer_shape(sizes, input.shape[d])
    return view(input, input.shape[:d] + tuple(sizes) + input.shape[d + 1:])


@define("squeeze", "shape", inplace=_in_place_view("squeeze"), doc='squeeze(input, dim=None) -> Tensor\n\nA view without the size-1 dims (or only the given ones).')
def squeeze(input, dim=None, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if dim is None:
        dims = [i for i, s in enumerate(input.shape) if s == 1]
    else:
        dims = dim if isinstance(dim, (tuple, list)) else [dim]
        dims = [wrap_dim(d, input.dim()) for d in dims] if input.dim() else []
        dims = [d for d in dims if input.shape[d] == 1]
    shape = [s for i, s in enumerate(input.shape) if i not in dims]
    stride = [s for i, s in enumerate(input._stride) if i not in dims]
    in_shape = input.shape
    name = "Squeeze" if dim is None else "SqueezeBackward1"
    return make_view(name, input, shape, stride, input._offset, lambda g: _reshape_back(g, in_shape))


@define("unsqueeze", "shape", inplace=_in_place_view("unsqueeze"), doc='unsqueeze(input, dim) -> Tensor\n\nA view with a size-1 dim inserted at dim.')
def unsqueeze(input, dim=None, *, axis=None):
    if dim is None and axis is None:
        raise TypeError("unsqueeze() missing 1 required positional argument: 'dim'")
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    d = wrap_dim(dim, input.dim() + 1)
    shape = list(input.shape)
    stride = list(input._stride)
    st = stride[d] * shape[d] if d < input.dim() else 1
    shape.insert(d, 1)
    stride.insert(d, st)
    in_shape = input.shape
    return make_view("Unsqueeze", input, shape, stride, input._offset, lambda g: _reshape_back(g, in_shape))


# -- reordering --------------------------------------------------------------------------
@define("permute", "shape", doc='permute(input, dims) -> Tensor\n\nA view with the dims reordered.')
def permute(input, *dims_args, dims=None):
    dims = as_shape(dims_args if dims is None else (dims,), "dims")
    if len(dims) != input.dim():
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match "
                           f"the length of the desired ordering of dimensions i.e. input.dim() = {input.dim()} "
                           f"is not equal to len(dims) = {len(dims)}")
    dims = [wrap_dim(d, input.dim()) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return make_view("Permute", input, [input.shape[d] for d in dims], [input._stride[d] for d in dims], input._offset,
                     lambda g: permute(g, inv))


@define("transpose", "shape", inplace=_in_place_view("transpose"), doc='transpose(input, dim0, dim1) -> Tensor\n\nA view with two dims swapped.')
def transpose(input, dim0, dim1):
    if input.dim() == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return make_view("Transpose", input, (), (), input._offset, lambda g: g)
    nd = len(input._shape)
    a, b = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    shape, stride = list(input._shape), list(input._stride)   # (lists: indexing a Size runs Python code)
    shape[a], shape[b] = shape[b], shape[a]
    stride[a], stride[b] = stride[b], stride[a]
    return make_view("Transpose", input, shape, stride, input._offset, lambda g: transpose(g, a, b))


@define("t", "shape", inplace=_in_place_view("t"), doc='t(input) -> Tensor\n\nThe transpose of a tensor of at most 2 dims.')
def t(input):
    if input.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.dim()}D")
    if input.dim() < 2:
        return make_view("T", input, input.shape, input._stride, input._offset, lambda g: g)
    return make_view("T", input, input.shape[::-1], input._stride[::-1], input._offset, lambda g: t(g))


@define("movedim", "shape", aliases=('moveaxis',), doc='movedim(input, source, destination) -> Tensor\n\nA view with dims moved from source to destination.')
def movedim(input, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [wrap_dim(s, input.dim()) for s in src]
    dst = [wrap_dim(d, input.dim()) for d in dst]
    order = [None] * input.dim()
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(input.dim()) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, order)


@define("swapaxes", "shape", inplace=_in_place_view("swapaxes"), doc='swapaxes(input, axis0, axis1) -> Tensor\n\ntranspose, with NumPy\'s argument names.')
def swapaxes(input, axis0, axis1):
    return transpose(input, axis0, axis1)


@define("swapdims", "shape", inplace=_in_place_view("swapdims"), doc='swapdims(input, dim0, dim1) -> Tensor\n\ntranspose under another name.')
def swapdims(input, dim0, dim1):
    return transpose(input, dim0, dim1)


# -- broadcasting ------------------------------------------------------------------------
@define("expand", "shape", torch=False, doc='expand(*sizes) -> Tensor\n\nA view with size-1 dims broadcast to sizes (-1 keeps a dim), without copying.')
def expand(x, *sizes, size=None, implicit=False):
    sizes = as_shape(sizes if size is None else (size,))
    if len(sizes) < x.dim():
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(x.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({x.dim()})")
    pad = len(sizes) - x.dim()
    shape, stride = [], []
    for i, s in enumerate(sizes):
        if i < pad:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            shape.append(s)
            stride.append(0)
            continue
        xs, xst = x.shape[i - pad], x._stride[i - pad]
        if s == -1:
            s = xs
        if xs == s:
            shape.append(s)
            stride.append(xst)
        elif xs == 1:
            shape.append(s)
            stride.append(0)
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({xs}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: {list(x.shape)}")
    in_shape = x.shape
    # (its backward sums: a reduction, above this module, reached as the Tensor method)
    return make_view("Expand", x, shape, stride, x._offset, lambda g: g.sum_to_size(in_shape))


@define("expand_as", "shape", torch=False, doc="expand_as(other) -> Tensor\n\nexpand to other's shape.")
def expand_as(x, other):
    return expand(x, other.shape)


# -- indexing views ------------------------------------------------------------------------
@define("narrow", "shape", doc='narrow(input, dim, start, length) -> Tensor\n\nA view of `length` entries of dim from start.')
def narrow(input, dim=None, start=None, length=None, _name="Slice", *, axis=None):
    if dim is None and axis is None:
        raise TypeError("narrow() missing 1 required positional argument: 'dim'")
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    if hasattr(start, "item"):
        start = int(start.item())
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _slice(input, d, start, start + length, 1, _name)


def _slice(x, d, start, stop, step, name="Slice"):
    shape = list(x.shape)
    shape[d] = max(0, -(-(stop - start) // step))
    stride = list(x._stride)
    stride[d] *= step
    offset = x._offset + start * x._stride[d]  # even when empty, as PyTorch (start is clamped)
    in_shape = x.shape
    return make_view(name, x, shape, stride, offset,
                     _scatter_back(in_shape, lambda z: _slice(z, d, start, stop, step)))


@define("select", "shape", doc='select(input, dim, index) -> Tensor\n\nA view of one index of dim, the dim removed.')
def select(input, dim=None, index=None, _name="Select", *, axis=None):
    if dim is None and axis is None:
        raise TypeError("select() missing 1 required positional argument: 'dim'")
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    if input.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    if index < 0:
        index += size
    shape = input.shape[:d] + input.shape[d + 1:]
    stride = input._stride[:d] + input._stride[d + 1:]
    in_shape = input.shape
    return make_view(_name, input, shape, stride, input._offset + index * input._stride[d],
                     _scatter_back(in_shape, lambda z: select(z, d, index)))


@define("as_strided", "shape", inplace=_in_place_view("as_strided"), doc="as_strided(input, size, stride, storage_offset=None) -> Tensor\n\nA view with explicit sizes, strides and offset over input's storage.")
def as_strided(input, size, stride, storage_offset=None):
    offset = input._offset if storage_offset is None else storage_offset
    in_geometry = (input.shape, input._stride, input._offset)
    out_geometry = (tuple(size), tuple(stride), offset)

    def back(g):
        if g._requires_grad:   # create_graph
            return _spread_recorded(g, in_geometry, out_geometry)
        return _spread(g, in_geometry, out_geometry)
    return make_view("AsStrided", input, tuple(size), tuple(stride), offset, back)


def _spread(g, in_geometry, out_geometry):
    """as_strided's backward: through the storage, elements the view reads more than once
    summing their gradients."""
    _, at = storage_scratch(g, in_geometry, out_geometry)
    add_into(at(out_geometry), g)
    return at(in_geometry).clone()


def _read(t, in_geometry, out_geometry):
    """The adjoint of _spread: t (at in_geometry) read at out_geometry."""
    _, at = storage_scratch(t, in_geometry, out_geometry)
    E.copy_into(at(in_geometry), t)
    return at(out_geometry).clone()


def _spread_recorded(g, in_geometry, out_geometry):
    return linear_backward(g, lambda g: _spread(g, in_geometry, out_geometry),
                           lambda gg: _read_recorded(gg, in_geometry, out_geometry), "AsStridedBackwardBackward0")


def _read_recorded(t, in_geometry, out_geometry):
    return linear_backward(t, lambda t: _read(t, in_geometry, out_geometry),
                           lambda gg: _spread_recorded(gg, in_geometry, out_geometry), "AsStridedReadBackward")


def storage_scratch(like, *geometries):
    """A zeroed buffer spanning the storage positions that the geometries (shape, stride,
    offset) reach, and at(geometry): the view of the buffer at one of them."""
    def last(shape, stride, offset):
        return offset + (sum((s - 1) * st for s, st in zip(shape, stride)) if numel(shape) else 0)
    lo = min(off for _, _, off in geometries)
    hi = max(last(*g) for g in geometries)
    scratch = E.fill(empty((hi - lo + 1,), like.dtype, like.device), 0)

    def at(geometry):
        shape, stride, offset = geometry
        return scratch._view(tuple(shape), tuple(stride), scratch._offset + offset - lo)
    return scratch, at


def add_into(dst, g):
    """dst += g, where dst may read some storage positions more than once: split it along a
    dim until each part reaches every position at most once."""
    dims = sorted((st, s) for s, st in zip(dst.shape, dst._stride) if s > 1)
    span = 0
    for st, s in dims:
        if st <= span:
            break
        span += st * (s - 1)
    else:
        E.run("add", dst, g, out=dst)
        return
    g = expand_to(g, dst.shape)
    d = min((i for i, s in enumerate(dst.shape) if s > 1), key=lambda i: dst.shape[i])
    for i in range(dst.shape[d]):
        add_into(_raw_select(dst, d, i), _raw_select(g, d, i))


def _raw_select(t, d, i):
    return t._view(t.shape[:d] + t.shape[d + 1:], t._stride[:d] + t._stride[d + 1:], t._offset + i * t._stride[d])


@define("unbind", "shape", doc='unbind(input, dim=0) -> tuple of Tensors\n\nViews of every index of dim, the dim removed.')
def unbind(input, dim=0, *, axis=None):
    dim = dim if axis is None else axis   # (NumPy's name, which PyTorch takes)
    d = wrap_dim(dim, input.dim())
    return multi_output_views(tuple([select(input, d, i, "Unbind") for i in range(input.shape[d])]), "Unbind")


# -- copies ------------------------------------------------------------------------------
class _Clone(Function):
    _backward_name = "CloneBackward0"
    _double_backward = True

    @staticmethod
    def forward(ctx, x):
        out = empty(x.shape, x.dtype, x.device)
        return E.copy_into(out, x)

    @staticmethod
    def backward(ctx, g):
        return g


def _format_copy(x, memory_format, what):
    """A copy of x with the strides of a channels_last format (an NHWC-ordered copy seen
    through the inverse permutation), or None where the format is the contiguous one."""
    check_format(memory_format, x.dim(), what)
    order = dims_order(memory_format)
    if order is None:
        return None
    inv = [order.index(d) for d in range(len(order))]
    return permute(clone(permute(x, order)), inv)


@define("clone", "shape", doc='clone(input, *, memory_format=torch.preserve_format) -> Tensor\n\nA copy with its own storage (differentiable), contiguous unless memory_format is channels_last.')
def clone(input, memory_format=None):
    if memory_format is not None:
        out = _format_copy(input, memory_format, "clone")
        if out is not None:
            return out
    if grad_mode.is_grad_enabled() and input.requires_grad:
        return _Clone.apply(input)
    return _Clone.forward(None, input)


@define("contiguous", "shape", torch=False, doc='contiguous() -> Tensor\n\nself if already contiguous, else a contiguous copy.')
def contiguous(x, memory_format=None):
    if memory_format is not None and x.is_contiguous(memory_format):
        check_format(memory_format, x.dim(), "contiguous")
        return x
    if memory_format is not None:
        out = _format_copy(x, memory_format, "contiguous")
        if out is not None:
            return out
    if x.is_contiguous():
        return x
    return clone(x)


@define("broadcast_to", "shape", doc="broadcast_to(input, size) -> Tensor\n\nexpand to size.")
def broadcast_to(input, size):
    return expand(input, size)


@define("broadcast_tensors", "shape", method=False,
        doc="broadcast_tensors(*tensors) -> tuple of Tensors\n\nViews of the tensors expanded to their common shape.")
def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


@define("view_as", "shape", torch=False, doc="view_as(other) -> Tensor\n\nview with other's shape.")
def view_as(x, other):
    return view(x, other.shape)


@define("reshape_as", "shape", torch=False, doc="reshape_as(other) -> Tensor\n\nreshape to other's shape.")
def reshape_as(x, other):
    return reshape(x, other.shape)
