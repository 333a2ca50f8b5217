"""The webgpu device's search and counting primitives (kernels/search.py, kernels/count.py),
in the interface ops/search.py and ops/counting.py call for every device (backends/cpu_count.py
is the numpy side)."""

from .kernels import count as count_kernel, search as search_kernel
from .runtime import get_runtime

_T = {"f": "f32", "i": "i32", "u": "u32"}


def search_sorted(spec, out, seq, values, sorter=None):
    """out[r, k] = insertion point of values[r, k] in row (0 if spec.shared else r) of seq; all
    contiguous 2-D; sorter ([S, M] int64) or None; spec: a backends/plans.py SearchSpec."""
    search_kernel.run(get_runtime(), out, seq, values, sorter, spec.right, _T[spec.acc_cls], spec.shared)


def count_scatter(out, index, src=None, mask=None, bias=0):
    """out[index[i] + bias] = src[i] (or i) where mask[i] (or everywhere)."""
    count_kernel.scatter(get_runtime(), out, index, src, mask, bias)


def count_gather(out, index, src):
    """out[i] = src[index[i]] (1-D, contiguous, indices in range)."""
    count_kernel.gather(get_runtime(), out, index, src)


def bincount(out, inp, weights=None):
    """out (zeroed) += 1 (or weights[i]) at inp[i]; inp in [0, len(out))."""
    count_kernel.bincount(get_runtime(), out, inp, weights)
