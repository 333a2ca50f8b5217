"""Lowering of a scan to the backend (no autograd): the scan dim moved last as a view, and few
long rows split into chunks here, not in the backend (as ops/lowering.py splits reductions):
chunk totals, a scan of each row's totals, then every chunk scanned again from the total before
it, so that many workgroups share a row. int64 totals travel as 64-bit (lo, hi) pairs.
ops/scan.py (the differentiable scans), index_ops, sorting and counting use it."""

from .. import _dtype as D
from ..backends import backend_for
from ..backends.plans import ScanPass
from .operands import empty

SPLIT_MIN = 4096          # a row this long...
SPLIT_MAX_ROWS = 64       # ...in at most this many rows is scanned in chunks
CHUNK = 2048              # elements per chunk (at least; at most 1024 chunks a row)


def moved(t, d):
    """A view of t with dim d last."""
    order = [i for i in range(t.dim()) if i != d] + [d]
    return t._view(tuple(t.shape[i] for i in order), tuple(t._stride[i] for i in order), t._offset)


def _totals_dtype(kind, dtype):
    return D.float32 if dtype in D.HALF_FLOATS else dtype


def lower_scan(kind, out, inp, acc_cls, indices=None, reverse=False):
    """Scan inp's last dim into out (and indices): one backend call, or three passes for few
    long rows on a backend that wants them split (SPLIT_SCANS)."""
    be = backend_for(out.device.type)
    R = inp.shape[-1]
    rows = inp.numel() // R if R else 0
    if rows == 0 or R == 0:
        return
    if not be.SPLIT_SCANS or R < SPLIT_MIN or rows > SPLIT_MAX_ROWS:
        be.scan(ScanPass(kind, acc_cls, reverse), out, inp, indices)
        return
    chunk = max(CHUNK, -(-R // 1024))
    nchunks = -(-R // chunk)
    arg = kind in ("max", "min")
    wide = kind in ("sum", "prod") and acc_cls != "f" and out.dtype is D.int64
    dev = out.device
    if wide:
        totals = empty((rows * nchunks * 2,), D.int32, dev)
        scanned = empty((rows * nchunks * 2,), D.int32, dev)
        tview = totals._view((rows, nchunks), (nchunks, 1), 0)
        sview = scanned._view((rows, nchunks), (nchunks, 1), 0)
    else:
        tdt = _totals_dtype(kind, out.dtype)
        totals = empty((rows, nchunks), tdt, dev)
        scanned = empty((rows, nchunks), tdt, dev)
        tview, sview = totals, scanned
    tidx = empty((rows, nchunks), D.int64, dev) if arg else None
    cidx = empty((rows, nchunks), D.int64, dev) if arg else None
    be.scan(ScanPass(kind, acc_cls, reverse, nchunks, totals_only=True, pairs_out=wide), tview, inp, tidx)
    be.scan(ScanPass(kind, acc_cls, pairs_in=wide, pairs_out=wide), sview, tview, cidx,
            index_in=tidx)
    be.scan(ScanPass(kind, acc_cls, reverse, nchunks), out, inp, indices, carry=scanned, carry_indices=cidx)


def raw_scan(kind, x, d, out_dtype, acc_cls, reverse=False):
    """The scan of x along dim d (no autograd): out (and int64 indices for max/min), contiguous."""
    out = empty(x.shape, out_dtype, x.device)
    idx = empty(x.shape, D.int64, x.device) if kind in ("max", "min") else None
    if x.dim() == 0:
        x1 = x._view((1,), (1,), x._offset)
        lower_scan(kind, out._view((1,), (1,), 0), x1, acc_cls,
                   None if idx is None else idx._view((1,), (1,), 0), reverse)
    else:
        lower_scan(kind, moved(out, d), moved(x, d), acc_cls,
                   None if idx is None else moved(idx, d), reverse)
    return out if idx is None else (out, idx)
