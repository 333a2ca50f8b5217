"""The webgpu device's primitives: backends/base.py's contract, which ops/ calls for every
device. Storage, elementwise, reduce, matmul, random and the fused softmax and moments are
here; the others come from the modules imported above (transfer.py has the host transfers that
only the webgpu device has: bytes, numpy arrays, memoryviews)."""

from functools import partial as _partial

from .attention import attention_backward, attention_fits, attention_forward  # noqa: F401
from .conv import (col2im, grid_sample, grid_sample_backward, im2col, interpolate,  # noqa: F401
                   interpolate_backward, pad, pad_backward, pool, pool_backward, unpool, unpool_backward)
from .count import bincount, count_gather, count_scatter, search_sorted  # noqa: F401
from .embedding import embedding, embedding_backward  # noqa: F401
from .packed_linear import pack_half, packed_linear  # noqa: F401
from .packed_embedding import packed_embedding  # noqa: F401
from .index import (ATOMIC_FLOAT16, MAX_INDEX_BUFFERS, index_gather, index_scatter,  # noqa: F401
                    mask_compact, masked_scatter)
from ..limits import BindingTooLarge as _BindingTooLarge
from . import windows
from .kernels import elementwise as ew_kernel, matmul as mm_kernel, random as rand_kernel, reduction as red_kernel
from .kernels import check, fused, matmul_gemv, matmul_small, matmul_tiles as tiles, moments as mo_kernel, softmax as sm_kernel
from .kernels import matmul_epilogue as _epilogue
from .kernels import cholesky as chol_kernel, jacobi as jacobi_kernel, lu_panel as lu_kernel
from .kernels import samplers as sampler_kernel
from .kernels import fft_stockham as fft_kernel
from .kernels import layer_norm as ln_kernel
from .kernels import ldl as ldl_kernel, qr_panel as qr_kernel, trsm as trsm_kernel
from .runtime import _runtime, get_runtime as _get_runtime, on_device_lost  # noqa: F401
from .sort_scan import (SORT_BLOCK, SPLIT_SCANS, scan, sort, sort_block, sort_merge,  # noqa: F401
                        sort_scatter_add, sort_step)
from .storage import GPUStorage as _GPUStorage
from .transfer import read_values, read_values_async, storage_from_values  # noqa: F401  (host transfer)

name = "webgpu"


def _rt():
    r = _runtime[0]   # (get_runtime() without its call where the runtime is made: every kernel asks)
    return r if r is not None else _get_runtime()


def empty_storage(numel, dtype):
    r = _runtime[0]   # (get_runtime() without its call where the runtime is made: every op asks)
    if r is None:
        r = _get_runtime()
    return _GPUStorage(r, numel, dtype)


def storage_maker():
    """empty_storage bound to the current runtime (one call less per op: ops/elementwise's
    plans keep it, and drop it when the device is lost); unbound while that runtime is lost
    (its next error starts a new one)."""
    r = _rt()
    return empty_storage if r.closed else _partial(_GPUStorage, r)


def elementwise(op, out, operands, dtypes):
    """out = op(operands) now (the lazy layer, torchweb/lazy, decided not to defer it)."""
    rt = _rt()
    try:
        ew_kernel.run(rt, op, out, operands, dtypes)
    except _BindingTooLarge as e:   # a tensor past the binding limit: in blocks that fit (windows.py)
        windows.split(e, windows.split_elementwise, lambda o, ops: ew_kernel.run(rt, op, o, ops, dtypes),
                      rt.max_binding, out, operands)


# run_fused(outs, nodes, one_kernel=False, patched=False): write each pending storage of outs
# with the values of the fused elementwise expression of the same position in nodes (lazy Nodes
# of one shape), one kernel (one_kernel: one dispatch, no vec4 body and tail; patched: its
# scalars noted for a captured call's replay: an optimizer step's, lazy/scope.py)
run_fused = fused.run


# A float32 matmul may be deferred, its elementwise epilogue stored by its kernel. Off by default:
# on an H200 the compiled nanoGPT step took 11.87 ms with it against 11.51 without (wgpu-native),
# 15.5 against 14.5 under Dawn, though it makes 24 fewer dispatches: the epilogue finds each
# element's broadcast operands from its flat index (divisions per element in the store), and
# linear + bias fused ran 0.186 ms against 0.175 for the product and a separate add. The tile
# kernels' store knows the row and column: an epilogue indexed by them is the next step.
MATMUL_EPILOGUE = False
GRID_LIMITED = True   # a fused kernel's elements are bounded by a folded grid (the lazy layer checks at the op)


# What the lowering step (ops/lowering.py) should do for this backend
SPLIT_REDUCTIONS = True   # long reductions over few outputs in two passes
MAX_MATMUL_K = 1 << 16    # longer inner dimensions in slices: lavapipe ends loops at 65535 trips


def reduce(p, out, inp, index_from=None):
    """One reduction kernel (kernels/reduction.py has the options)."""
    rt = _rt()
    try:
        red_kernel.run(rt, p, out, inp, index_from)
    except _BindingTooLarge as e:   # a tensor past the binding limit: in pieces that fit (windows.py)
        if index_from is not None:
            raise
        windows.split(e, windows.split_reduce, lambda q, o, i: red_kernel.run(rt, q, o, i), rt.max_binding,
                      p, out, inp)


_MATMUL_CHOICE = {}   # (output shape, K, dtype, forced variant, runtime) -> its kernel's run: asked per call


def matmul(out, a, b, acc_cls, epi=None):
    """out = a @ b; where an operand's storage passes the binding limit, each is bound through
    the window its view spans (ops/lowering.py splits the product into views that fit).
    epi: a float32 product's elementwise epilogue (kernels/matmul_epilogue.py), stored in
    its place; returns whether it was (else out holds the product)."""
    r = _runtime[0]   # (_rt() inline)
    if r is None:
        r = _get_runtime()
    *_, K = a._shape   # (unpacked: indexing a Size runs Python code)
    key = (out._shape, K, out.dtype, tiles.FORCED, id(r))
    run = _MATMUL_CHOICE.get(key)
    if run is None:
        if len(_MATMUL_CHOICE) > 4096:
            _MATMUL_CHOICE.clear()
        run = _MATMUL_CHOICE[key] = _matmul_runner(_choose_matmul(r, out, a, b))
    try:
        if epi is None:
            run(r, out, a, b, "f32" if acc_cls == "f" else "i32")
            return False
        return run(r, out, a, b, "f32", epi=epi) is not False
    except _BindingTooLarge:
        if epi is not None or any(type(t._storage) is windows.WindowStorage for t in (out, a, b)) \
                or not windows.retry(matmul, r.max_binding, (out, a, b), acc_cls):
            raise
        return False


_epilogue.install(matmul)   # (its kernels store an epilogue through this matmul)


def _matmul_runner(kernel):
    """run(runtime, out, a, b, compute) of a kernel _choose_matmul named."""
    if kernel == "small":
        return matmul_small.run
    if kernel == "gemv":
        return _gemv
    if kernel == "mm2":
        return mm_kernel.run
    return _partial(tiles.run, variant=kernel)


def _gemv(r, out, a, b, compute, epi=None):
    """matmul_gemv's run as a runner; False: it stores no epilogue (out holds the product)."""
    matmul_gemv.run(r, out, a, b)
    return False


def _choose_matmul(r, out, a, b):
    """'small', 'mm2' or a matmul_tiles variant name for this product."""
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    # int64: only matmul_small sums its products in 64 bits; tiny matrices: a thread per output
    # beats a mostly idle tile per batch entry (unless a test or the bench forces a variant)
    if out.dtype.name == "int64" or (tiles.FORCED is None and matmul_small.fits(M, N, K)):
        return "small"
    if tiles.FORCED is None and matmul_gemv.fits(M, N, K, out, a, b, r.barriers_costly):
        return "gemv"    # one row (decoding): kernels/matmul_gemv.py, not a mostly idle tile
    nbatch = out.numel() // max(1, M * N)
    variant = tiles.choose(M, N, K, nbatch, r.software_adapter)   # kernels/matmul_tiles.py TABLE
    if variant == "mm2" and max(-(-M // mm_kernel.TM), -(-N // mm_kernel.TN)) > r.max_workgroups:
        variant = "t128x64_k16"   # mm2 has no split of a grid past the limit; this one has
    return variant


def softmax_fits(row, rows):
    """Whether the fused kernel does better than the composite: not for a row too long for one
    workgroup's loop on lavapipe, nor for few long rows, which one workgroup each would leave
    most of the GPU idle (the composite splits them)."""
    return row <= sm_kernel.MAX_ROW and not (row >= 65536 and rows < 256)


def softmax(out, inp, log):
    """Fused softmax (log: log_softmax) over inp's last dim into out."""
    rt = _rt()
    try:
        sm_kernel.run(rt, out, inp, log)
    except _BindingTooLarge as e:   # past the binding limit: blocks of rows (windows.py)
        windows.split(e, windows.split_last_dim_rows, lambda o, i: sm_kernel.run(rt, o, i, log), rt.max_binding,
                      out, inp)


def moments_fits(row, rows):
    """Whether var/std (and mean) of rows of length `row` go in one kernel (kernels/moments.py)."""
    return mo_kernel.fits(row, rows)


def moments(out, inp, denom, std, with_mean):
    """var (std) of each row of inp (its last dim, stride 1) into out[:rows], the mean into
    out[rows:] if with_mean; denom: n - correction, at least 0."""
    mo_kernel.run(_rt(), out, inp, denom, std, with_mean)


def layer_norm_fits(row):
    """Whether layer_norm's kernels (kernels/layer_norm.py) take rows of this length."""
    return ln_kernel.fits(row)


def layer_norm(y, mean, rstd, x, weight, bias, eps, row, x_parts=None):
    """y = layer_norm of x's rows (float32, contiguous), mean and rstd [rows] written; past the
    binding limit, by blocks of rows (windows.py)."""
    rt = _rt()
    try:
        ln_kernel.forward(rt, y, mean, mean._offset, rstd._offset, x, weight, bias, eps, row, x_parts)
    except _BindingTooLarge as e:
        def run(r0, parts):
            yv, xv, *pv = parts
            ln_kernel.forward(rt, yv, mean, mean._offset + r0, rstd._offset + r0, xv, weight, bias, eps, row,
                              [(v._storage, v._offset) for v in pv] or None)
        windows.split(e, windows.split_row_views, run, rt.max_binding, _row_views(row, [y, x], x_parts))


def layer_norm_backward(dx, g, x, weight, mean, rstd, row, gx=None, g_parts=None):
    """dx = layer_norm's input gradient for g, from the forward's mean and rstd (and gx = g *
    xhat where given); past the binding limit, by blocks of rows (windows.py)."""
    rt = _rt()
    try:
        ln_kernel.backward(rt, dx, g, x, weight, mean, mean._offset, rstd._offset, row, gx, g_parts)
    except _BindingTooLarge as e:
        def run(r0, parts):
            dxv, gv, xv, *rest = parts
            gxv = rest.pop(0) if gx is not None else None
            ln_kernel.backward(rt, dxv, gv, xv, weight, mean, mean._offset + r0, rstd._offset + r0, row, gxv,
                               [(v._storage, v._offset) for v in rest] or None)
        windows.split(e, windows.split_row_views, run, rt.max_binding,
                      _row_views(row, [dx, g, x] + ([gx] if gx is not None else []), g_parts))


def _row_views(row, tensors, parts):
    """tensors (contiguous) and parts ((storage, offset) buffers of their shape) as [rows, row]
    views, for windows.split_row_views."""
    t = tensors[0]
    rows = t.numel() // row
    return ([windows.View(u._storage, (rows, row), (row, 1), u._offset, u.dtype, u.device) for u in tensors]
            + [windows.View(s, (rows, row), (row, 1), off, t.dtype, t.device) for s, off in parts or ()])


def trsm_block(plan, out, a, b, p=None):
    """out [count, n, k] = T^-1 (b - p), T a's upper or lower triangle (plans.TrsmPlan), all
    float32 3-D views read and written through their strides."""
    trsm_kernel.run(_rt(), plan, out, a, b, p)


def qr_panel(plan, out, tau, t, inp):
    """out [count, m, w] = inp's panels as LAPACK's geqr2 leaves them; tau [count, w]; t
    [count, w, w] the compact WY form's T (float32, contiguous from offset 0)."""
    qr_kernel.run(_rt(), plan, out, tau, t, inp)


def ldl_fits(n):
    """Whether ldl factors n x n matrices (kernels/ldl.py: any n, a workgroup per matrix)."""
    return True


def ldl(out, pivots, info, inp, n, count):
    """out [count, n, n] = inp's lower triangles' LD factors as sytf2 leaves them (float32,
    contiguous, offset 0); pivots [count, n] and info [count] (int32)."""
    ldl_kernel.run(_rt(), out, pivots, info, inp, n, count)


def ldl_solve(x, ld, pivots, n, k, count):
    """x [count, n, k] (B on entry) = A^-1 B from ldl's factors, as sytrs (kernels/ldl.py)."""
    ldl_kernel.solve(_rt(), x, ld, pivots, n, k, count)


def cholesky_block_fits(n):
    """Whether cholesky_block factors n x n matrices (kernels/cholesky.py: n <= 32)."""
    return n <= chol_kernel.MAX_N


def cholesky_block(out, info, inp, n, count, inverse=None):
    """out [count, n, n] = the lower Cholesky factors of inp's lower triangles (float32,
    contiguous, offset 0); info [count] (int32) the first non-positive pivot's order, or 0;
    inverse (optional, as out): the factors' inverses."""
    chol_kernel.run(_rt(), out, info, inp, n, count, inverse)


def lu_panel_fits(w):
    """Whether lu_panel factors panels w columns wide (kernels/lu_panel.py: w <= 32)."""
    return w <= lu_kernel.MAX_W


def lu_panel(out, pivots, order, inp, m, w, count):
    """out [count, m, w] = inp's panels LU-factored with partial pivoting (float32, contiguous,
    offset 0); pivots [count, w] (int32) the 1-based pivot rows; order [count, m] (int32) the
    source row of each row of out."""
    lu_kernel.run(_rt(), out, pivots, order, inp, m, w, count)


def jacobi_sweep(plan, X, V, sweep):
    """One sweep of Jacobi rotations in place (plans.JacobiSweep; kernels/jacobi.py: a dispatch
    a round, or the whole sweep in one for N <= 64)."""
    jacobi_kernel.run(_rt(), plan, X, V, sweep)


def fft_fits(n):
    """Whether fft transforms n points (kernels/fft_stockham.py: powers of two from 2 to 2^27)."""
    return fft_kernel.fits(n)


def fft(spec, out, inp):
    """out [B1, B2, n, 2] (contiguous, offset 0) = the unnormalized DFTs (spec: plans.FFTSpec)
    of inp [B1, B2, m, 2] pairs or [B1, B2, m] real (m <= n: zero-padded), any strides: one to
    three Stockham passes."""
    fft_kernel.run(_rt(), spec, out, inp)


def random(draw, out):
    rt = _rt()
    try:
        rand_kernel.run(rt, draw.kind, out, draw.seed, draw.call, draw.a, draw.b)
    except _BindingTooLarge as e:   # past the binding limit: blocks, each from its elements' counters
        windows.split(e, windows.split_flat, lambda o, start: rand_kernel.run(
            rt, draw.kind, o, draw.seed, draw.call, draw.a, draw.b, start), rt.max_binding, out)
    _note_redraw(rt, draw, out)


def random_sample(draw, out, params):
    """out = draws of draw.kind at params' elements, a thread each (kernels/samplers.py)."""
    rt = _rt()
    sampler_kernel.run(rt, draw.kind, out, params, draw.seed, draw.call)
    _note_redraw(rt, draw, out)


def _note_redraw(rt, draw, out):
    """While torchweb.compile records: the last dispatch's counter words (the parameter words
    2..4 of random's and random_sample's kernels) drawn anew by each replay."""
    if rt.capture is not None and out.numel():
        if draw.redraw is None:
            rt.capture.refuse("it draws random numbers that a replay cannot draw again")
        else:   # (a replay draws anew: the counter words are recomputed, as the optimizer's scalars are)
            rt.capture.note_scalars(rand_kernel.COUNTER_WORDS, 3, "u32")
            rt.capture.redraws += 1
            rt.capture.hooks.append(lambda: [rand_kernel.counter_words(*draw.redraw())])


def capturing():
    """True while torchweb.compile records a call (capture.py): readbacks are not allowed."""
    return _rt().capture is not None


def capture_holds(storage):
    """Whether the call being recorded holds storage (capture.py keeps every storage that
    reached a dispatch, so that no buffer id is reused within the call)."""
    capture = _rt().capture
    if capture is None:
        return False
    try:   # (the slot itself: reading the attribute would take a buffer for a storage without one)
        bid = _GPUStorage._buffer_id.__get__(storage)
    except AttributeError:
        return False
    return capture.storages.get(bid) is storage


def refuse_capture(reason):
    """Have the call torchweb.compile is recording run eagerly instead (nothing while none is)."""
    capture = _rt().capture
    if capture is not None:
        capture.refuse(reason)


def device_assert(bad, what, exc, message):
    """Raise exc(message) at the next readback if any element of contiguous bool tensor bad is true."""
    check.run(_rt(), bad, what, exc, message)


def device_assert_range(t, lo, hi, skip, what, exc, message):
    """Raise exc(message) at the next readback if an element of contiguous integer tensor t
    (int32 words) is outside [lo, hi) and not skip."""
    check.run_range(_rt(), t, lo, hi, skip, what, exc, message)
