"""The backend contract: every primitive and capability that ops/ (and ops/lowering.py) use on a
device's backend module, as backend_for(device_type) returns it (backends/cpu.py on numpy,
backends/webgpu/backend.py on WebGPU). tests/test_backend_contract.py checks both modules
against it: each has every member here with the same parameters, and no other public function.

Tensors passed in are torchweb Tensors the caller made (shape, strides, offset, dtype, storage);
a backend reads their layout and storage and writes outputs in place, and never calls ops,
autograd or Tensor methods. A primitive's options come as one named plan object of
backends/plans.py (first, but for elementwise's dtypes, last as in DtypePlan.fresh), never as a
long list by position. A primitive a backend cannot run is still present: its capability flag or
`*_fits` answer keeps callers off it, and calling it raises NotImplementedError.
"""

from typing import Protocol, runtime_checkable


@runtime_checkable
class Backend(Protocol):
    name: str                     # the device type: "cpu", "webgpu"

    # -- capabilities: what ops/lowering.py, ops/scan.py and ops/sorting.py split for it ------
    SPLIT_REDUCTIONS: bool        # long reductions over few outputs go in two passes (reduce's nchunks, ...)
    SPLIT_SCANS: bool             # few long rows scan in passes (scan's nchunks, carry, ...)
    MAX_MATMUL_K: int | None      # longer inner dimensions go in slices whose products are added
    MAX_INDEX_BUFFERS: int        # index tensors in more storages than this are packed into one
    ATOMIC_FLOAT16: bool          # float16 scatter reductions run in place (else in a float32 copy)
    SORT_BLOCK: int | None        # None: sort() sorts whole rows; else rows up to this long go in
    #                               one sort_block, longer ones merge (sort_step, sort_merge)
    GRID_LIMITED: bool            # a fused expression's elements are bounded by the dispatch grid
    #                               (the lazy layer then checks an expression's size at the op)
    MATMUL_EPILOGUE: bool         # a float32 matmul may be deferred and its elementwise epilogue
    #                               stored by its kernel (lazy/kernel_edges.py; matmul's epi)

    # -- storage and host transfer -------------------------------------------------------------
    def empty_storage(self, numel, dtype):
        """A new storage of numel elements of dtype (zeroed on cpu; unspecified on webgpu)."""

    def storage_maker(self):
        """empty_storage's (numel, dtype) -> storage for a cache of the layers above: it may be
        bound to the current device (webgpu: its runtime), so the cache must drop it when
        the device is lost (on_device_lost)."""

    def storage_from_values(self, values, dtype):
        """A storage holding a flat list of Python numbers, already range-checked for dtype."""

    def read_values(self, t):
        """Contiguous t's elements as a flat list of Python numbers (waits for the device)."""

    async def read_values_async(self, t):
        """read_values without blocking the event loop (a browser page cannot block)."""

    def capturing(self):
        """True while torchweb.compile records a call: readbacks are not allowed then."""

    def refuse_capture(self, reason):
        """Have the call torchweb.compile records run eagerly instead (nothing while none is)."""

    def on_device_lost(self, callback):
        """Have callback(runtime) run when this device is lost or reset: a layer above that
        keeps tensors of the device (a cache) drops them."""

    def capture_holds(self, storage):
        """Whether the call torchweb.compile records holds storage (a reference of its own, which
        autograd's "no one else holds this gradient" test then allows for)."""

    def device_assert(self, bad, what, exc, message):
        """Raise exc(message) (message may be a callable giving the words) if any element of
        contiguous bool tensor bad is true: now, or at the next readback on an async device."""

    def device_assert_range(self, t, lo, hi, skip, what, exc, message):
        """As device_assert, for the elements of contiguous integer tensor t outside [lo, hi)
        that are not skip (None: none skipped): one kernel, no bool tensor made."""

    # -- elementwise, reductions, matmul, random --------------------------------------------------
    def elementwise(self, op, out, operands, dtypes):
        """out = op(*operands) (a row of ops/elementwise/table.py), broadcast, each operand a
        tensor or a Python number computed in its dtype and class (plans.ElementwiseDtypes)."""

    def run_fused(self, outs, roots, one_kernel=False, patched=False):
        """Write each pending storage of outs with the values of the fused elementwise
        expression rooted at the same position in roots (torchweb/lazy Nodes of one shape): one kernel
        for all of them where the device has kernels. A fusing scope's kernel (an optimizer's
        step, lazy/scope.py): one_kernel, one dispatch (no vectorized body and scalar tail);
        patched, its scalars noted for a captured call's replay to recompute."""

    def reduce(self, p, out, inp, index_from=None):
        """Reduce inp's last p.nred dims into out (p: plans.ReducePass); p's split options and
        index_from (argmax/argmin's positions, read at the winning partial) are the passes of a
        split reduction (SPLIT_REDUCTIONS only)."""

    def matmul(self, out, a, b, acc_cls, epi=None):
        """out = a @ b ([*B, M, K] @ [*B, K, N], batch dims broadcast, K <= MAX_MATMUL_K).
        epi: only where MATMUL_EPILOGUE is set, the elementwise epilogue to store in the
        product's place; returns whether it was stored (else out holds the product)."""

    def random(self, draw, out):
        """out = counter-based (Philox) random values (draw: plans.RandomDraw), the same
        numbers on every device for one (seed, call)."""

    def random_sample(self, draw, out, params):
        """out (float32, contiguous) = one draw per element from draw.kind's distribution at
        params' elements (float32, contiguous, out's numel each): gamma (alpha) a standard gamma,
        poisson (rate), binomial (count, prob); NaN for a parameter outside the domain. A thread
        per element tries until it accepts, its r-th try reading the Philox block at counter
        (element, draw.call, r, 0): one (seed, call) per call, the same draws on every device
        up to float32 rounding in the acceptance tests (draw: plans.RandomDraw, a and b unused)."""

    # -- fused kernels, each with the question whether it fits --------------------------------
    def trsm_block(self, plan, out, a, b, p=None):
        """out [count, n, k] = T^-1 (b - p) (plan: plans.TrsmPlan, n <= 32 on every backend),
        T the upper or lower triangle of a [count, n, n] (unit: ones on its diagonal); float32
        3-D views read and written through their strides (out may be b itself, in place, but
        shares no storage with a or p); p optional."""

    def qr_panel(self, plan, out, tau, t, inp):
        """out [count, m, w] (plan: plans.QRPanelPlan, w <= 32 on every backend) = inp's panels
        Householder-factored as LAPACK's geqr2 (R on and above the diagonal, the reflectors' v
        below it, v[j] = 1 implied; float32, contiguous from offset 0); tau [count, w]; t
        [count, w, w]: the upper triangular T of the compact WY form, H_1 ... H_w = I - V T V^T
        (LAPACK's larft)."""

    def ldl_fits(self, n):
        """Whether ldl() factors n x n matrices in one dispatch (False: no kernel)."""

    def ldl(self, out, pivots, info, inp, n, count):
        """out [count, n, n] = the Bunch-Kaufman LD factors of inp's lower triangles as LAPACK's
        sytf2 leaves them (float32, contiguous from offset 0; upper triangle zero); pivots
        [count, n] (int32, LAPACK's); info [count] (int32): the first zero pivot, or 0."""

    def ldl_solve(self, x, ld, pivots, n, k, count):
        """x [count, n, k] (B on entry) = A^-1 B from A's ldl() factors, as LAPACK's sytrs (all
        float32 / int32, contiguous from offset 0); only where ldl_fits."""

    def softmax_fits(self, row, rows):
        """Whether softmax() beats the composite for rows of this length (False: no kernel)."""

    def softmax(self, out, inp, log):
        """Fused softmax (log: log_softmax) over inp's last dim into out."""

    def layer_norm_fits(self, row):
        """Whether layer_norm() and layer_norm_backward() take rows of this length (False: the
        caller composes means and elementwise ops)."""

    def layer_norm(self, y, mean, rstd, x, weight, bias, eps, row, x_parts=None):
        """y = layer_norm of x's rows of `row` elements (x float32, contiguous), mean and rstd
        [rows] written (views of one storage); weight, bias: None or contiguous float32 rows.
        x_parts: x is pending as the sum of these two (storage, offset) whole buffers of its
        shape (lazy.sum_prologue): the kernel adds them as it reads and writes x."""

    def layer_norm_backward(self, dx, g, x, weight, mean, rstd, row, gx=None, g_parts=None):
        """dx = layer_norm's input gradient for the output gradient g (as x: contiguous
        float32), from the forward's mean and rstd (views of one storage); gx (optional, as dx)
        = g * xhat, the terms of the weight's gradient, written in the same pass; g_parts: g is
        pending as a sum of two buffers, as layer_norm's x_parts."""

    def cholesky_block_fits(self, n):
        """Whether cholesky_block() factors n x n matrices in one dispatch (False: no kernel)."""

    def cholesky_block(self, out, info, inp, n, count, inverse=None):
        """out [count, n, n] = the lower Cholesky factors of inp's lower triangles (float32,
        contiguous from offset 0); info [count] (int32): the first non-positive pivot's order, or 0;
        inverse (optional, as out): the factors' inverses."""

    def lu_panel_fits(self, w):
        """Whether lu_panel() factors panels w columns wide in one dispatch (False: no kernel)."""

    def lu_panel(self, out, pivots, order, inp, m, w, count):
        """out [count, m, w] = inp's panels LU-factored with partial pivoting (float32,
        contiguous from offset 0); pivots [count, w] (int32, 1-based); order [count, m] (int32):
        the source row of each row of out."""

    def jacobi_sweep(self, plan, X, V, sweep):
        """One sweep of Jacobi rotations in place (plan: plans.JacobiSweep; float32, contiguous
        from offset 0), each pair's rotation the one that zeroes its 2 x 2 problem [[a, b], [b, d]]
        (none where |b| <= eps sqrt(|a|) sqrt(|d|)), applied as x_p - s (x_q + r x_p),
        x_q + s (x_p - r x_q) with r = s / (1 + c). V [count, N, N]: its rows p, q turn with each
        rotation. 'eigh': X [2, count, N, N] symmetric, sweep s reads half s % 2 and leaves the
        result in the other (N - 1 rounds, each from one half to the other): a round rotates the
        pairs' rows then columns from the round's a = X[p, p], d = X[q, q], b = X[p, q], and sets
        each pair's 2 x 2 block to (a - t b, 0, 0, d + t b). 'svd': X [count, N, length], a round
        rotates rows p, q (a, d, b: their squared norms and inner product) so they are orthogonal."""

    def fft_fits(self, n):
        """Whether fft() transforms n points in one call (False: the caller composes them)."""

    def fft(self, spec, out, inp):
        """out [B1, B2, n, 2] (float32 pairs, contiguous, offset 0) = the unnormalized DFTs
        (spec: plans.FFTSpec) along dim 2 of inp [B1, B2, m, 2] (pairs, last stride 1) or
        [B1, B2, m] (spec.real), float32 with any other strides, m <= n (zero-padded to n)."""

    def moments_fits(self, row, rows):
        """Whether moments() runs rows of this length in one kernel (False: no kernel)."""

    def moments(self, out, inp, denom, std, with_mean):
        """var (std) of each row of inp (last dim, stride 1) into out[:rows], its mean into
        out[rows:] if with_mean; denom = n - correction, at least 0."""

    def attention_fits(self, L, S, E, Ev, batch=1):
        """Whether the fused attention kernels should run these sizes (False: no kernels)."""

    def attention_forward(self, spec, out, lse, q, k, v):
        """out [*B, L, Ev] and lse [*B, L] (float32) of softmax(q k^T * scale + mask) v
        (spec: plans.AttentionSpec)."""

    def attention_backward(self, spec, dq, dkv, q, k, v, dout, ld):
        """dq, and dk then dv in dkv, from dout and ld (the forward's lse, then rowsum(dout * out))."""

    # -- scans and sorting -----------------------------------------------------------------------
    def scan(self, p, out, inp, indices=None, carry=None, carry_indices=None, index_in=None):
        """Scan inp's last dim into out (p: plans.ScanPass; max/min also write indices); p's
        split options, carry (the scanned totals before each chunk, and their indices) and
        index_in (the totals' indices) are the passes of a split scan (SPLIT_SCANS only)."""

    def sort(self, values, indices, inp, descending):
        """Stable sort of inp's rows into values and int64 indices (SORT_BLOCK None only)."""

    def sort_block(self, plan, inp, size, values=None, indices=None, work_keys=None, work_idx=None):
        """Sort blocks of `size` (a power of two up to SORT_BLOCK) of inp's rows (plan:
        plans.SortPlan), into values and indices or into the work keys and indices that
        sort_step and sort_merge go on with."""

    def sort_step(self, plan, work_keys, work_idx, k, j):
        """One bitonic compare-exchange pass (k, j) over the work keys of plan's rows."""

    def sort_merge(self, plan, work_keys, work_idx, values=None, indices=None):
        """The last passes of the merge, writing values and indices."""

    def sort_scatter_add(self, out, idx, src):
        """out[r, idx[r, k]] += src[r, k] (out float32 [rows, N], idx and src [rows, K])."""

    # -- indexing ------------------------------------------------------------------------------
    def index_gather(self, out, src, walk, indices, check):
        """out (contiguous) = src through index tensors (backends/webgpu/kernels/index.py)."""

    def index_scatter(self, dst, src, walk, indices, reduce, check):
        """dst (reduce)= src through index tensors; reduce None, sum, prod, amax or amin."""

    def mask_compact(self, out, mask, pos, src):
        """mask's nonzeros in row-major order: their coordinates (src None) or src's values."""

    def masked_scatter(self, out, mask, pos, source, check):
        """out[i] = source[pos[i] - 1] where mask[i]."""

    def embedding(self, out, weight, idx):
        """out[i, :] = weight[idx[i], :]; an index out of range raises IndexError."""

    def embedding_backward(self, grad_weight, grad, idx, padding_idx):
        """grad_weight (float32, zeroed) += grad's rows at idx, padding_idx skipped."""

    def packed_linear(self, out, x, packed, scale, bias, fmt):
        """out (M, N) = x (M, K) @ q^T * scale (+ bias), in float32: q (N, K) packed in int32
        words (little-endian, rows zero-padded to whole words) by fmt: "int8" (4 a word, scale
        (N,)), "bfloat16" or "float16" (2 a word, scale None); bias (N,) or None."""

    def packed_embedding(self, out, packed, scale, idx, fmt):
        """out (n, dim) = the rows of packed (num, words) int32 at idx (n,), unpacked by the
        packing format fmt ("int8": 4 a word, times scale (num,); "bfloat16" or "float16": 2 a
        word, scale None), little-endian; an index out of range raises IndexError."""

    def pack_half(self, out, w, fmt):
        """out (N, ceil(K / 2)) int32 = w (N, K) of dtype fmt ("bfloat16" or "float16"),
        contiguous, two values a word (the low half the even column)."""

    # -- search and counting ---------------------------------------------------------------------
    def search_sorted(self, spec, out, seq, values, sorter=None):
        """out[r, k] = insertion point of values[r, k] in row (0 if spec.shared else r) of seq,
        or of seq reordered by sorter (spec: plans.SearchSpec)."""

    def count_scatter(self, out, index, src=None, mask=None, bias=0):
        """out[index[i] + bias] = src[i] (or i) where mask[i] (or everywhere)."""

    def count_gather(self, out, index, src):
        """out[i] = src[index[i]] (1-D, contiguous, indices in range)."""

    def bincount(self, out, inp, weights=None):
        """out (zeroed) += 1 (or weights[i]) at inp[i]."""

    # -- convolution, pooling, padding, interpolation, sampling ----------------------------------
    def im2col(self, geom, out, inp, l0=0):
        """out [N, C*K, Lc]: the columns of output positions l0 .. l0 + Lc - 1 of the windows of
        geom (plans.ConvGeometry) over inp [N, C, *S]."""

    def col2im(self, geom, out, cols, l0=0, accumulate=False):
        """im2col's adjoint: the columns summed back into out (added to it if accumulate)."""

    def pool(self, spec, out, indices, inp, nb):
        """max (indices written unless None) or avg pooling (spec: plans.PoolSpec) of inp's
        dims after the first nb."""

    def pool_backward(self, spec, grad_in, grad_out, indices):
        """pool's gradient into grad_in."""

    def unpool(self, out, inp, indices, what):
        """out (zeroed [B, L_out]) at indices = inp; an index out of range raises RuntimeError."""

    def unpool_backward(self, grad_in, grad_out, indices, what):
        """grad_in = grad_out at indices."""

    def pad(self, spec, out, inp, nb):
        """out = inp padded (spec: plans.PadSpec) in its dims after nb."""

    def pad_backward(self, spec, grad_in, grad_out, nb):
        """pad's gradient into grad_in."""

    def interpolate(self, spec, out, inp, nb):
        """out = inp resampled (spec: plans.InterpolationSpec) in its dims after nb."""

    def interpolate_backward(self, spec, grad_in, grad_out):
        """interpolate's gradient into grad_in."""

    def grid_sample(self, spec, out, inp, grid):
        """out = inp sampled at grid's normalized coordinates (spec: plans.GridSampleSpec)."""

    def grid_sample_backward(self, spec, grad_in, grad_grid, grad_out, inp, grid):
        """grad_in (zeroed float32, added into, or None) and grad_grid (written, or None)."""



def absent(name, why):
    """The error of a primitive this backend does not have (a flag or *_fits keeps callers off)."""
    return NotImplementedError(f"this backend has no {name} primitive ({why})")
