"""Indexing with PyTorch's rules: x[index] and x[index] = value.

Basic items (ints, slices with steps and negative bounds, None, Ellipsis, Python bools) make
views. Tensor and list items (int32/int64 indices, bool/uint8 masks) are advanced indexing: the
basic items are applied first (an int is a select, as PyTorch does, not an advanced index as in
numpy), then the index tensors, broadcast together, pick elements through one gather kernel
(ops/lowering.py index_gather). Where the advanced dims sit in the result is PyTorch's (and
numpy's) rule: in place of the indexed dims when those are adjacent, else first. A mask is its
nonzero coordinates (a readback of their count, as PyTorch syncs too).

Assignment through advanced indices is index_put_ (a scatter), with the value broadcast to the
indexing result; x[mask] = number is masked_fill_ (no readback). Gradients: getitem's backward
is an accumulating index_put into zeros (IndexBackward0); index_put_'s goes to the values that
were written (IndexPutBackward0), and writes through views reach their base (ops/inplace.py).
"""

from .. import _dtype as D
from .._size import broadcast_shapes
from ..autograd.function import Function
from . import elementwise as E
from . import lowering
from . import reduction as R, shape as S
from .adjoint import linear_backward
from .operands import empty, expand_to, is_tensor
from .registry import define
from .._creation import _flatten, tensor
from .index_ops import nonzero, masked_fill_
from .inplace import apply_function_inplace, check_no_internal_overlap

INDEX = ("index", IndexError, "index {index} is out of bounds for dimension {dim} with size {size}")


def _is_seq(i):
    return isinstance(i, (list, tuple, range))


def _host_index(i):
    """range objects and numpy arrays as lists (PyTorch takes them as index sequences)."""
    if isinstance(i, range):
        return list(i)
    if type(i).__module__ == "numpy" and hasattr(i, "tolist") and getattr(i, "ndim", 0) > 0:
        return i.tolist()
    return i


def _as_tuple(index):
    """PyTorch's reading of the index: a list holding sequences, tensors, slices, None or
    Ellipsis is a tuple (numpy's legacy rule); any other list is one index tensor."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and any(_is_seq(i) or is_tensor(i) or isinstance(i, slice) or i is None or i is Ellipsis
                                       for i in index):
        return tuple(index)
    return (index,)


def _list_index(seq, x):
    """A list index as a tensor on x's device: bools make a mask, anything else int64 (PyTorch
    makes [1.0] an int index too)."""
    flat = []
    shape = _flatten(seq, [], flat)
    if flat and all(isinstance(v, bool) for v in flat):
        return tensor(seq, dtype=D.bool, device=x.device)
    if not flat:
        return empty(tuple(shape), D.int64, x.device)
    return tensor([int(v) for v in flat], dtype=D.int64, device=x.device).reshape(tuple(shape))


def _consumes(i):
    if i is None or i is Ellipsis or isinstance(i, bool):
        return 0
    if is_tensor(i) and i.dtype in (D.bool, D.uint8):
        return i.dim()
    return 1


def _normalize(x, index):
    items = []
    consumed = ellipses = 0
    for i in _as_tuple(_host_index(index)):
        k = type(i)
        if k is slice or k is int:   # the common items, taken as below without the calls
            consumed += 1
        elif i is Ellipsis:
            ellipses += 1
        elif i is not None:
            i = _host_index(i)
            if _is_seq(i):
                i = _list_index(i, x)
            elif is_tensor(i) and i.dim() == 0 and i.dtype is D.bool:
                i = bool(i.item())   # a 0-d mask is a Python bool (one readback)
            consumed += _consumes(i)
        items.append(i)
    if ellipses > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    if not ellipses:
        return items
    out = []
    for i in items:
        if i is Ellipsis:
            out.extend([slice(None)] * (x.dim() - consumed))
        else:
            out.append(i)
    return out


def _int_scalar(it):
    """An int, or a 0-d integer tensor on the cpu device (PyTorch selects with those, a view);
    a 0-d index on the GPU stays an index tensor (no readback)."""
    if isinstance(it, int) and not isinstance(it, bool):
        return True
    return (is_tensor(it) and it.dim() == 0 and it.dtype in (D.int32, D.int64, D.uint8)
            and it.device.type == "cpu")


def _basic(x, items):
    """Apply the basic items (views); return the view and [(its dim, index tensor)] for the
    advanced ones, masks already turned into their coordinates."""
    t = x
    d = 0
    adv = []
    for it in items:
        if type(it) is slice:   # first: the commonest item (none of the others is a slice)
            step = 1 if it.step is None else int(it.step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            size = t.shape[d]
            start, stop, _ = slice(it.start, it.stop, step).indices(size)
            stop = max(stop, start)
            if not (start == 0 and stop == size and step == 1):
                t = S._slice(t, d, start, stop, step)
            d += 1
        elif it is None:
            t = S.unsqueeze(t, d)
            d += 1
        elif isinstance(it, bool):
            t = S.unsqueeze(t, d)
            if not it:
                t = S.narrow(t, d, 0, 0)
            d += 1
        elif _int_scalar(it):
            i = int(it)
            size = t.shape[d]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
            t = S.select(t, d, i)
        elif is_tensor(it):
            if it.device != x.device:
                raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed "
                                   f"tensor ({x.device})")
            if it.dtype in (D.bool, D.uint8):
                k = it.dim()
                for j in range(k):
                    if it.shape[j] != t.shape[d + j]:
                        raise IndexError(f"The shape of the mask {list(it.shape)} at index {j} does not match the "
                                         f"shape of the indexed tensor {list(t.shape)} at index {d + j}")
                for j, coords in enumerate(nonzero(it, as_tuple=True)):
                    adv.append((d + j, coords))
                d += k
            elif it.dtype in (D.int32, D.int64):
                adv.append((d, it))
                d += 1
            else:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        elif isinstance(it, (str, bytes)):   # PyTorch tries to make a tensor of it: a TypeError
            raise TypeError(f"new(): invalid data type '{type(it).__name__}' used as an index")
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(it).__name__})")
    return t, adv


def plan(t, adv):
    """(walk, indices, shape) of advanced indices [(dim, index)] on t: the gather/scatter
    contract of ops/lowering.py, the result dims placed as PyTorch places them."""
    dims = [d for d, _ in adv]
    try:
        B = broadcast_shapes(*(i.shape for _, i in adv))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(i.shape)) for _, i in adv)) from None
    rest = [j for j in range(t.dim()) if j not in dims]
    if dims == list(range(dims[0], dims[0] + len(dims))):
        before = [j for j in rest if j < dims[0]]
        walk = before + [None] * len(B) + [j for j in rest if j > dims[0]]
        at = len(before)
    else:
        walk = [None] * len(B) + rest
        at = 0
    bi = iter(B)
    shape = tuple(t.shape[j] if j is not None else next(bi) for j in walk)
    indices = []
    for d, i in adv:
        e = expand_to(i, B)
        strides = [0] * len(shape)
        strides[at:at + len(B)] = e._stride
        indices.append((e._view(shape, tuple(strides), e._offset), d, True))
    return walk, indices, shape


class _Index(Function):
    _backward_name = "IndexBackward0"
    _double_backward = True   # (ops/adjoint.py)

    @staticmethod
    def forward(ctx, t, p):
        walk, indices, shape = p
        ctx.meta = (t.shape, p)
        out = empty(shape, t.dtype, t.device)
        lowering.index_gather(out, t, walk, indices, INDEX)
        return out

    @staticmethod
    def backward(ctx, g):
        shape, p = ctx.meta
        walk, indices, _ = p

        def scatter(g):
            z = E.fill(empty(shape, g.dtype, g.device), 0)
            lowering.index_scatter(z, g, walk, indices, "sum", INDEX)
            return z
        return linear_backward(g, scatter, lambda gg: _Index.apply(gg, p), "IndexBackwardBackward0"), None


def getitem(x, index):
    items = _normalize(x, index)
    t, adv = _basic(x, items)
    if adv:
        return _Index.apply(t, plan(t, adv))
    if t is x:
        t = S.make_view("Alias", x, x.shape, x._stride, x._offset, lambda g: g)
    return t


# -- assignment ---------------------------------------------------------------------------------
def _values(values, t, shape):
    """values broadcast to the indexing result's shape (leading 1s dropped first, as PyTorch)."""
    v = values
    while v.dim() > len(shape) and v.shape[0] == 1:
        v = v._view(v.shape[1:], v._stride[1:], v._offset)
    try:
        if broadcast_shapes(v.shape, shape) != tuple(shape):
            raise RuntimeError
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast "
                           f"to indexing result of shape {list(shape)}") from None
    return expand_to(v, shape)


class _IndexPut(Function):
    _backward_name = "IndexPutBackward0"
    _double_backward = True   # (create_graph: an index_put of zeros and an index, recorded)

    @staticmethod
    def forward(ctx, t, values, p, accumulate, inplace):
        walk, indices, shape = p
        out = t if inplace else E.copy_of(t)
        src = _values(values, t, shape) if is_tensor(values) else values
        lowering.index_scatter(out, src, walk, indices, "sum" if accumulate else None, INDEX)
        if inplace:
            out._bump_version()
        ctx.meta = (p, accumulate, values.shape if is_tensor(values) else None)
        return out

    @staticmethod
    def backward(ctx, g):
        (walk, indices, shape), accumulate, vshape = ctx.meta
        if g.requires_grad:   # create_graph
            p = (walk, indices, shape)
            gself = g if accumulate else _IndexPut.apply(g, 0.0, p, False, False)
            gv = None
            if vshape is not None and ctx.needs_input_grad[1]:
                gv = _Index.apply(g, p)
                extra = len(vshape) - len(shape)
                if extra > 0:
                    gv = S.reshape(gv, (1,) * extra + tuple(shape))
                gv = R.sum_to_size(gv, vshape)
            return gself, gv, None, None, None
        gself = g
        if not accumulate:
            gself = E.copy_of(g)
            lowering.index_scatter(gself, 0.0, walk, indices, None, INDEX)
        gv = None
        if vshape is not None and ctx.needs_input_grad[1]:
            gv = empty(shape, g.dtype, g.device)
            lowering.index_gather(gv, g, walk, indices, INDEX)
            extra = len(vshape) - len(shape)
            if extra > 0:
                gv = S.reshape(gv, (1,) * extra + tuple(shape))
            gv = R.sum_to_size(gv, vshape)
        return gself, gv, None, None, None


def _put(t, adv, values, accumulate, inplace):
    if is_tensor(values):
        if values.dtype is not t.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                               f"{t.dtype.word} for the destination and {values.dtype.word} for the source.")
        if values.device != t.device:
            values = values.to(t.device)
    p = plan(t, adv)
    if inplace:
        return apply_function_inplace(_IndexPut, t, values, p, accumulate, True)
    return _IndexPut.apply(t, values, p, accumulate, False)


def setitem(x, index, value):
    items = _normalize(x, index)
    advanced = [k for k, i in enumerate(items) if is_tensor(i) and not _int_scalar(i)]
    if not advanced:
        target = getitem(x, tuple(items))
        check_no_internal_overlap(target)   # x[...] = v is a copy_ in PyTorch, even for a number
        target.copy_(value) if is_tensor(value) else target.fill_(value)
        return
    if _mask_fill(x, items, advanced, value):
        return
    t, adv = _basic(x, items)
    _put(t, adv, value, False, True)


def _mask_fill(x, items, advanced, value):
    """x[..., mask] = number (or a 0-d tensor): masked_fill_ over the mask's dims, which needs
    no readback of the mask's count. Only where the mask is the one advanced item and nothing
    but full slices follows it."""
    at = advanced[0]
    m = items[at]
    if len(advanced) != 1 or m.dtype not in (D.bool, D.uint8) or (is_tensor(value) and value.dim()) \
            or any(i != slice(None) for i in items[at + 1:]):
        return False
    target = getitem(x, tuple(items[:at])) if at else x
    d0 = sum(1 for i in items[:at] if not _int_scalar(i))   # dims before the mask's in target
    if tuple(target.shape[d0:d0 + m.dim()]) != tuple(m.shape):
        return False   # the general path raises PyTorch's error
    m = m if m.dtype is D.bool else E.run("ne", m, 0)
    masked_fill_(target, S.reshape(m, (1,) * d0 + tuple(m.shape) + (1,) * (target.dim() - d0 - m.dim())), value)
    return True


def _put_args(x, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    for k, i in enumerate(indices):
        if not is_tensor(i):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(i).__name__}")
    if sum(_consumes(i) for i in indices) > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()} (got {len(indices)})")
    return _basic(x, list(indices))


def index_put_(x, indices, values, accumulate=False):
    t, adv = _put_args(x, indices)
    if not is_tensor(values):
        raise TypeError(f"index_put_(): argument 'values' must be Tensor, not {type(values).__name__}")
    return _put(t, adv, values, bool(accumulate), True)


@define("index_put", "indexing", inplace=index_put_, doc="index_put(input, indices, values, accumulate=False) -> Tensor\n\n"
        "A copy of input with values (broadcast) written at input[indices] (a tuple of index "
        "tensors or masks); accumulate=True adds them, duplicates included.")
def index_put(input, indices, values, accumulate=False):
    t, adv = _put_args(input, indices)
    if not is_tensor(values):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not {type(values).__name__}")
    return _put(t, adv, values, bool(accumulate), False)
