"""Basic indexing: ints, slices (steps, negative bounds), None, Ellipsis -> views; and
assignment through them. Tensor (advanced) indices come with the gather/scatter ops."""

from . import shape as S
from .dispatch import is_tensor


def _normalize(x, index):
    if not isinstance(index, tuple):
        index = (index,)
    consumed = sum(1 for i in index if i is not None and i is not Ellipsis and not isinstance(i, bool))
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.dim():
        raise IndexError(f"too many indices for tensor of dimension {x.dim()}")
    out = []
    for i in index:
        if i is Ellipsis:
            out.extend([slice(None)] * (x.dim() - consumed))
        else:
            out.append(i)
    return out


def getitem(x, index):
    items = _normalize(x, index)
    t = x
    d = 0
    for it in items:
        if it is None:
            t = S.unsqueeze(t, d)
            d += 1
        elif isinstance(it, bool):
            t = S.unsqueeze(t, d)
            if not it:
                t = S.narrow(t, d, 0, 0)
            d += 1
        elif isinstance(it, int) or (is_tensor(it) and it.dim() == 0 and not it.dtype.is_floating_point
                                     and it.dtype.name != "bool"):
            i = int(it)
            size = t.shape[d]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
            t = S.select(t, d, i)
        elif isinstance(it, slice):
            start, stop, step = it.start, it.stop, it.step
            step = 1 if step is None else int(step)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            size = t.shape[d]
            start, stop, _ = slice(start, stop, step).indices(size)
            stop = max(stop, start)
            if not (start == 0 and stop == size and step == 1):
                t = S._slice(t, d, start, stop, step)
            d += 1
        elif is_tensor(it) or isinstance(it, (list, tuple)):
            raise IndexError("indexing with tensors or lists (advanced indexing) is not supported by "
                             "torchweb yet; use index_select or basic slices")
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(it).__name__})")
    if t is x:
        t = S.make_view("Alias", x, x.shape, x._stride, x._offset, lambda g: g)
    return t


def setitem(x, index, value):
    target = getitem(x, index)
    target.copy_(value) if is_tensor(value) else target.fill_(value)
