"""The webgpu device's scan and sort primitives (kernels/scan.py, kernels/sort.py), in the
interface ops/scan.py and ops/sorting.py call for every device (backends/cpu_sort.py is the
numpy side). How long rows are split into passes is decided there, from SPLIT_SCANS and
SORT_BLOCK, not here."""

from ..base import absent
from .kernels import scan as scan_kernel, sort as sort_kernel
from .runtime import get_runtime

SPLIT_SCANS = True              # few long rows: chunk totals, their scan, then the chunks again
SORT_BLOCK = sort_kernel.BLOCK  # rows up to this long sort in one workgroup; longer ones merge

_T = {"f": "f32", "i": "i32", "u": "u32"}


def scan(p, out, inp, indices=None, carry=None, carry_indices=None, index_in=None):
    """Scan inp's last dim into out (p: a backends/plans.py ScanPass; max/min also write int64
    indices). Integer sum/prod into int64 (or pairs) are exact in 64 bits."""
    wide = p.kind in ("sum", "prod") and p.acc_cls != "f" and (
        out.dtype.name == "int64" or p.pairs_in or p.pairs_out)
    scan_kernel.run(get_runtime(), p.kind, out, inp, _T[p.acc_cls], indices=indices, reverse=p.reverse,
                    nchunks=p.nchunks, totals_only=p.totals_only, carry=carry, carry_indices=carry_indices,
                    wide=wide, pairs_in=p.pairs_in, pairs_out=p.pairs_out, index_in=index_in)


def sort(values, indices, inp, descending):
    raise absent("sort", "SORT_BLOCK is set: rows sort in blocks (sort_block, sort_step, sort_merge)")


def sort_block(plan, inp, size, values=None, indices=None, work_keys=None, work_idx=None):
    sort_kernel.block(get_runtime(), _T[plan.acc_cls], inp, size, plan.descending, values, indices, work_keys,
                      work_idx)


def sort_step(plan, work_keys, work_idx, k, j):
    sort_kernel.step(get_runtime(), _T[plan.acc_cls], work_keys, work_idx, plan.R, k, j, plan.descending)


def sort_merge(plan, work_keys, work_idx, values=None, indices=None):
    sort_kernel.merge(get_runtime(), _T[plan.acc_cls], work_keys, work_idx, plan.R, plan.descending, values,
                      indices)


def sort_scatter_add(out, idx, src):
    """out[r, idx[r, k]] += src[r, k]; out contiguous float32 [rows, N], idx/src contiguous [rows, K]."""
    sort_kernel.scatter_add(get_runtime(), out, idx, src)
