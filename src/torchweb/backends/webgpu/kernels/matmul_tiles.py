"""Batched matmul out[b] = A[b] @ B[b]: register-tiled kernels generated from a Variant.

A variant fixes the workgroup's output tile (16x16 threads, RM x RN outputs each, so the tile is
16*RM x 16*RN), the K step KT held in workgroup memory, double buffering (the next K step is read
into registers while the current one is multiplied, one barrier per step), vec4 loads (used when
an operand's contiguous stride is 1 and the sizes and offsets allow it; the scalar path
otherwise) and split-K (K cut into slices that fill the GPU when M*N is small; a second kernel
sums the slices). Every variant handles any M, N, K (edges masked), any strides, broadcast
batches (stride 0), f32 or i32 compute, and grids past 65535 workgroups (several dispatches).
Which variant runs for which shape class: TABLE, set from bench/matmul_variants.py's numbers.
Variants with wx, wy set are barrier-free kernels (matmul_direct.py) for SwiftShader, a CPU;
variants with ly set are warp-tiled kernels (matmul_warp.py), the faster ones on a GPU.
Plans (pipeline, grids, parameter bytes) are cached per call signature: ~30 us less per call.
"""

import struct
from collections import namedtuple

from .elementwise import WORKGROUP, param
from .wgsl import store
from . import matmul_direct, matmul_warp
from .matmul_wgsl import cv, header, lit, store_acc
from .... import _dtype as D
from ..runtime import dispatch_head
from ..storage import GPUStorage

Variant = namedtuple("Variant", "name rm rn kt db vec split acc16 wx wy ly warps pad fill",
                     defaults=(0, 0, 0, None, 0, 0))
# split: the most slices K may be cut into (1: never); acc16: float16 operands multiplied and
# accumulated in f16 (where the adapter has shader-f16), instead of f32; wx, wy: 0 for the
# tiles above, else a barrier-free kernel (matmul_direct.py) of wx x wy threads, each computing
# rm x rn outputs, kt K steps per loop trip (vec off: it reads scalars); ly: 0 for those, else
# a warp-tiled kernel (matmul_warp.py) of warps = (along M, along N) warps of 32 lanes laid out
# ly x 32/ly, each lane rm x rn outputs; pad: vec4s added to rows of a tile stored transposed;
# fill: 0, or split K into no more slices than keep the workgroups (tiles x slices) at most this
# many (a GPU's worth: more slices past a full wave only add summing and a ragged last wave)


def _v(name, rm, rn, kt, db=False, vec=True, split=1, acc16=False):
    return Variant(name, rm, rn, kt, db, vec, split, acc16)


def _direct(rm, rn, wx, wy, kt=1):
    name = f"d{rm}x{rn}_w{wx}x{wy}" + (f"_k{kt}" if kt > 1 else "")
    return Variant(name, rm, rn, kt, False, False, 1, False, wx, wy)


def _warp(name, rm, rn, kt, ly, warps, pad=1, split=1, fill=0):
    return Variant(name, rm, rn, kt, True, True, split, False, 0, 0, ly, warps, pad, fill)


def tile(v):
    """(rows, columns) of the output one workgroup of variant v computes."""
    if v.ly:
        return matmul_warp.tile(v)
    return (v.wy or 16) * v.rm, (v.wx or 16) * v.rn


VARIANTS = {v.name: v for v in [
    _v("t128x64_k16", 8, 4, 16),                       # today's shape, plus vec4 loads
    _v("t128x64_k16_scalar", 8, 4, 16, vec=False),
    _v("t128x64_k8_db", 8, 4, 8, db=True),
    _v("t128x128_k8", 8, 8, 8),
    _v("t128x128_k16", 8, 8, 16),
    _v("t128x128_k8_db", 8, 8, 8, db=True),
    _v("t64x128_k16", 4, 8, 16),
    _v("t64x64_k16", 4, 4, 16),
    _v("t64x64_k32", 4, 4, 32),
    _v("t64x64_k16_db", 4, 4, 16, db=True),
    _v("t64x64_k16_split", 4, 4, 16, split=8),
    _v("t128x64_k16_split", 8, 4, 16, split=8),
    _v("t128x128_k16_acc16", 8, 8, 16, acc16=True),
    _v("t128x64_k16_acc16", 8, 4, 16, acc16=True),
    # candidates measured on the H200 (bench/matmul_variants.py): double buffering at the
    # other tile shapes, and split-K with it
    _v("t128x64_k16_db", 8, 4, 16, db=True),
    _v("t64x128_k16_db", 4, 8, 16, db=True),
    _v("t128x128_k16_db", 8, 8, 16, db=True),
    _v("t64x64_k8_db", 4, 4, 8, db=True),
    _v("t64x64_k32_db", 4, 4, 32, db=True),
    _v("t64x64_k16_db_split4", 4, 4, 16, db=True, split=4),
    _v("t64x64_k16_db_split", 4, 4, 16, db=True, split=8),
    _v("t128x64_k16_db_split4", 8, 4, 16, db=True, split=4),
    # barrier-free (matmul_direct.py), for SwiftShader. Also measured there, no faster than
    # d16x16_w4x4_k4: K steps of 1, 2, 8; blocks 8x16, 8x32, 16x32, 32x16, 32x32; workgroups
    # 2x2, 2x8, 8x2 (fewer than 4 threads leave SIMD lanes idle). Blocks past 16x16 take Subzero
    # seconds to compile (16x32: ~4 s, 32x32: ~9 s a pipeline), lavapipe's LLVM longer.
    _direct(8, 8, 4, 4, 4), _direct(16, 16, 4, 4, 4),
    # warp-tiled (matmul_warp.py): w<tile>_k<K step>, lanes 8 x 4, 8x8 outputs each unless named
    # (_t<rows>x<cols>). Also measured on the H200 and dropped (nvidia-h200-matmul-variants-
    # 2026-11-27-mm29*.json): lanes 4 x 8 and padding (as fast as w128x128_k16), K steps of 32
    # (the driver takes minutes to compile them, lavapipe two), K steps of 16 at 8x8 outputs with
    # fewer than 256 invocations (0.44 at 4096^3: more registers for the next step than there
    # are), bands of 4 or 8 tile rows for the L2 cache (no faster), split 8.
    # (128x128 tiles without padding: 32 KiB of workgroup memory, the most most GPUs allow)
    _warp("w128x128_k16", 8, 8, 16, 8, (2, 4), pad=0),
    _warp("w128x128_k16_split4", 8, 8, 16, 8, (2, 4), pad=0, split=4),
    _warp("w64x128_k8", 8, 8, 8, 8, (1, 4)),
    _warp("w128x64_k8", 8, 8, 8, 8, (2, 2)),
    _warp("w64x64_k8", 8, 8, 8, 8, (1, 2)),
    _warp("w64x64_k8_t4x8", 4, 8, 8, 8, (2, 2)),
    _warp("w64x64_k16_t4x8", 4, 8, 16, 8, (2, 2)),
    # split-K up to 16 slices, as many as keep the workgroups within one wave of an H100's or
    # H200's 132 multiprocessors (one 128x128 workgroup each): weight gradients (bench/results/
    # nvidia-h200-matmul-variants-2026-11-27-mm29b.json: 1536x384 with K 4096 at 3 slices 0.71,
    # 4 slices 0.50 (144 workgroups: a second wave of 12), 10 slices 0.71; 384x384 at 12 slices
    # 0.92, 16 slices 0.74). Fixed splits 2-16 of w128x128_k16, w64x128_k8, w128x64_k8, w64x64_k8
    # and its t4x8, t4x4 were measured there too: the best of them within 1% of this on 1536x384
    # and 384x1536, below it on 1152x384 and 384x384.
    _warp("w128x128_k16_fill", 8, 8, 16, 8, (2, 4), pad=0, split=16, fill=132),
    # 256 lanes of 4x4 outputs: the best of one run on nanoGPT's lm head 4096x384 @ 384x65 (0.81;
    # w64x64_k16_t4x8 0.70) but 0.62 on 512^3 (0.68). Also measured there and dropped (-mm29b.json):
    # w32x64_k8_t4x8 (0.70-0.81 on attention's bmm, just under w64x64_k8_t4x8), w64x64_k8_t4x4,
    # w64x64_k16 (8x8 outputs on 64 lanes: 0.28-0.49), split 2 at K 512 (0.43-0.51 on 512^3).
    _warp("w64x64_k16_t4x4", 4, 4, 16, 8, (2, 4)),
]}

# shape class -> variant name ("mm2": the original kernel in matmul.py): each class's winner by
# the geometric mean of ratio (PyTorch CUDA f32 TF32-off time / ours, the kernel alone) over its
# shapes, from one H200 run of bench/matmul_variants.py --kernel
# (bench/results/nvidia-h200-matmul-variants-2026-11-27-mm29.json; "was": the class's earlier
# choice in the same run); medium, longk and small from a later one (-mm29b.json).
TABLE = {
    "huge": "w128x128_k16",      # >= 16M outputs, K >= 1024: 4096^3 0.82 (was 0.70; w64x128_k8 0.82)
    "large": "w128x128_k16",     # >= 4M outputs, K >= 1024: 2048^3 0.78 (was 0.63)
    "wide": "w64x128_k8",        # >= 4M outputs, shorter K: attention's S = Q K^T and its dO V^T
    # 0.91, nanoGPT's qkv and MLP linears 0.80-0.83; 0.86 by the geometric mean (was 0.73)
    "medium_k": "w128x128_k16_split4",  # >= 1M outputs, K >= 1024: 1024^3 0.78, the linears
    # 1536 -> 384 forward and backward 0.77-0.79, nanoGPT's qkv input grad 0.70 (0.76; was 0.63)
    "medium": "w64x64_k8_t4x8",  # >= 1M outputs, shorter K: attention's P V, dV, dQ, dK 0.72-0.82,
    # nanoGPT's c_proj 0.76 (-mm29b.json; w64x64_k8, the earlier choice, 0.65-0.75 there; the
    # best on every shape of the class in a second run too: 0.66-0.82 against 0.65-0.78)
    "medium_flat": "w128x128_k16",  # as medium, one matrix: nanoGPT's c_proj 4096x384x384 and its
    # input grad 0.785 (w64x64_k8_t4x8, medium's choice, 0.72-0.75), two H200 runs
    # (nvidia-h200-matmul-variants-2026-11-27-session31*.json)
    "longk": "w128x128_k16_fill",  # fewer outputs, K >= 1024: weight grads 0.71-0.92 (-mm29b.json:
    # 1536x384 0.71, 1152x384 0.74, 384x384 0.92 (12 slices; the fill picks 14, unmeasured),
    # 384x1536 0.71; t64x64_k16_db_split, the earlier choice, 0.57-0.68 in that run)
    "small": "w64x64_k16_t4x8",  # the rest (tiny ones go to matmul_small.py): 512^3 0.68 and
    # nanoGPT's lm head 4096x384 @ 384x65 0.70 (t64x64_k16_db, the earlier choice, 0.60 and 0.66
    # in that run; 0.92 and 0.69 against 0.84 and 0.68 in another)
}
# Software adapters (a CPU): a workgroup barrier costs much more there. SwiftShader (Chromium's
# WebGPU without a GPU) pays milliseconds per barrier: the barrier-free kernel with 16x16 outputs
# per invocation wins (bench/matmul_variants.py there: 512^3 about 100 ms of CPU against 185 for
# t128x128_k8_db, 1024^3 1.1 s against 2.1). lavapipe (llvmpipe) keeps the largest tile: the
# barrier-free kernels are no faster there and take LLVM seconds to compile.
SOFTWARE_VARIANTS = {"swiftshader": "d16x16_w4x4_k4", "other": "t128x128_k8_db"}
SOFTWARE_VARIANT = "software"   # what choose() returns for a CPU adapter; run() picks by adapter
_SOFTWARE_CHOICE = {}           # id(runtime) -> its SOFTWARE_VARIANTS entry
FORCED = None   # a variant name that overrides TABLE (tests and the bench set it)


def shape_class(M, N, K, nbatch):
    outputs = M * N * nbatch
    if outputs >= 4 << 20:
        if K >= 1024:
            return "huge" if outputs >= 16 << 20 else "large"
        return "wide"
    if outputs >= 1 << 20:
        if K >= 1024:
            return "medium_k"
        return "medium" if nbatch > 1 else "medium_flat"
    if K >= 1024:
        return "longk"
    return "small"


def choose(M, N, K, nbatch, software=False):
    """The variant for this product; software: the adapter is a CPU (SOFTWARE_VARIANT)."""
    return FORCED or (SOFTWARE_VARIANT if software else TABLE[shape_class(M, N, K, nbatch)])


def software_variant(rt):
    """The variant for every product on software adapter rt: by SwiftShader or not."""
    info = getattr(rt.driver, "adapter_info", None) or {}
    swiftshader = any("swiftshader" in str(x).lower() for x in info.values())
    return SOFTWARE_VARIANTS["swiftshader" if swiftshader else "other"]


SPLIT_MIN_K = 256   # each slice of a split K keeps at least this many terms


_PLANS = {}   # call signature -> _Plan: repeated shapes (training steps) skip the planning


def run(rt, out, a, b, compute, variant, epi=None):
    """a: [*batch, M, K], b: [*batch, K, N] (batch dims broadcast, any strides); out: contiguous
    [*batch, M, N]. compute: 'f32' or 'i32'. variant: a Variant or its name. epi: the
    elementwise epilogue stored in the product's place (kernels/matmul_epilogue.py), by the
    tile kernel or, where K is split, by the summing one."""
    if variant == SOFTWARE_VARIANT:
        variant = _SOFTWARE_CHOICE.get(id(rt)) or _SOFTWARE_CHOICE.setdefault(id(rt), software_variant(rt))
    v = VARIANTS[variant] if variant.__class__ is str else variant
    so, sa_, sb_ = out._storage, a._storage, b._storage
    # (out's shape follows from a's and b's: their batch dims are broadcast already)
    sig = (v, FORCED is not None, compute, a._shape, a._stride, a._offset, b._shape, b._stride, b._offset,
           out._offset, a.dtype, b.dtype, out.dtype, sa_ is sb_, so is sa_, so is sb_, id(rt),
           epi and epi.key)
    plan = _PLANS.get(sig)
    if plan is None:
        plan = _planned(rt, out, a, b, compute, v, sig, epi)
    if plan is False:   # nothing to compute
        return
    steps, tmp_numel, work = plan[5]
    # bindings: slot 0 the output (or the slices), then one per distinct input buffer (the
    # output written first: what reads its old values runs before)
    if tmp_numel:
        tmp = GPUStorage(rt, tmp_numel, plan[3])
        rows = [tmp.buffer_for_write(), 0, tmp.size, sa_.buffer_for_read(), 0, sa_.size]
    elif so is not sa_:
        rows = [so.buffer_for_write(), 0, so.size, sa_.buffer_for_read(), 0, sa_.size]
    else:
        rows = [so.buffer_for_write(), 0, so.size]
    if sb_ is not sa_ and (tmp_numel or so is not sb_):
        rows += (sb_.buffer_for_read(), 0, sb_.size)
    if epi is not None and not tmp_numel:
        rows += _rows(epi.buffers)
        for head, params in steps:
            rt.record(head, params + epi.words, rows, work)
    else:
        for head, params in steps:
            rt.record(head, params, rows, work)
    if tmp_numel:
        head, params = plan[6]
        rows = [so.buffer_for_write(), 0, so.size, tmp.buffer_for_read(), 0, tmp.size]
        if epi is not None:
            rows += _rows(epi.buffers)
            params += epi.words
        rt.record(head, params, rows)


def _rows(buffers):
    """Runtime.record's rows of [(id, nbytes)]."""
    rows = []
    for bid, size in buffers:
        rows += (bid, 0, size)
    return rows


def _planned(rt, out, a, b, compute, v, sig, epi=None):
    """The plan of run()'s call signature sig, made and kept: _plan's, then what run() records
    ([(row head, params)] of the dispatches, the temporary's numel, their work) and the summing
    dispatch's (row head, params)."""
    if len(_PLANS) > 4096:
        _PLANS.clear()
    plan = _plan(rt, out, a, b, compute, v, sig[1], epi)
    if plan is not False:
        pid, dispatches, tmp_numel, _, summing = plan
        so, sa_, sb_ = out._storage, a._storage, b._storage
        nbuf = 1 + bool(tmp_numel or so is not sa_) + bool(sb_ is not sa_ and (tmp_numel or so is not sb_))
        extra = len(epi.buffers) if epi is not None else 0   # (the epilogue's, after the kernel's)
        if not tmp_numel:
            nbuf += extra
        # the GPU work, for the runtime's flush rule: 2 flops a term, counted as 1/16 byte each
        # (an H100's f32 rate over its memory bandwidth)
        work = (out.numel() * a.shape[-1]) >> 3
        steps = [(dispatch_head(pid, grid, nbuf), params) for grid, params in dispatches]
        sum_step = (dispatch_head(summing[0], summing[1], 2 + extra), summing[2]) if tmp_numel else None
        plan += ((steps, tmp_numel, work), sum_step)
    _PLANS[sig] = plan
    return plan


def workgroup_bytes(v):
    """Workgroup memory variant v declares at most (f32 or i32: 16 bytes a vec4)."""
    if v.ly:
        return matmul_warp.storage_bytes(v)
    if v.wx:
        return 0   # barrier-free: no workgroup memory
    TM, TN = tile(v)
    return (2 if v.db else 1) * v.kt * (TM + TN) * 4


def fitting(rt, v):
    """v, or FALLBACK where v's workgroup memory is past what rt's device allows (browsers
    enforce it: 16 KiB unless the adapter offers more, 32 KiB on most GPUs)."""
    if workgroup_bytes(v) > rt.driver.limit("max-compute-workgroup-storage-size"):
        return VARIANTS[FALLBACK if v.split == 1 else FALLBACK_SPLIT]
    return v


FALLBACK = "t64x64_k16_db"   # 16 KiB: WebGPU's default limit
FALLBACK_SPLIT = "t64x64_k16_db_split"   # the same, with split-K (for the classes that split)


def _plan(rt, out, a, b, compute, v, forced=False, epi=None):
    """(pipeline id, [(grid, params)], temporary's numel (0: none), its dtype, the summing
    dispatch (pipeline id, grid, params) or None); False when the output is empty. forced: v
    runs as named (tests, the bench), else a variant too big for the device falls back."""
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = out.shape[:-2]
    nbatch = 1
    for s in batch:
        nbatch *= s
    if M == 0 or N == 0 or nbatch == 0:
        return False
    v = v if forced else fitting(rt, v)
    T = compute
    if (v.acc16 and compute == "f32" and "shader-f16" in rt.features
            and a.dtype.gpu_storage == b.dtype.gpu_storage == out.dtype.gpu_storage == "f16"):
        T = "f16"
    (TM, TN), KT = tile(v), v.kt
    zmax = rt.max_workgroups
    gx, gy = -(-N // TN), -(-M // TM)
    # split-K: slices of whole K steps, as many as the variant allows and K fills (and, with
    # v.fill, as keep the workgroups within that many)
    ksteps = -(-K // KT)
    wave = (v.fill // (gx * gy * nbatch)) if v.fill else zmax
    nsplit = max(1, min(v.split, K // SPLIT_MIN_K, zmax, wave))
    kchunk = max(1, -(-ksteps // nsplit)) * KT
    nsplit = max(1, -(-K // kchunk))
    tmp_numel, tmp_dtype = 0, None
    if nsplit > 1:   # the slices go to a temporary [nsplit, *batch, M, N], summed afterwards
        tmp_numel = nsplit * nbatch * M * N
        tmp_dtype = D.float32 if T != "i32" else D.int32
        if tmp_numel * 4 > min(rt.max_binding, rt.max_buffer):
            nsplit, kchunk, tmp_numel, tmp_dtype = 1, max(1, ksteps) * KT, 0, None
    # slots, as run() binds them
    so, sa_, sb_ = out._storage, a._storage, b._storage
    if tmp_numel:
        sa, sb = 1, 1 if sb_ is sa_ else 2
    else:
        sa = 0 if so is sa_ else 1
        sb = 0 if so is sb_ else (sa if sb_ is sa_ else (2 if sa else 1))
    nbuf = 1 + len({x for x in (sa, sb) if x})
    amode = _mode(a, -2, -1, M, K, T, rt, v.vec and sa != sb and sa != 0)   # 'm' / 'k' (+ '4')
    bmode = _mode(b, -1, -2, N, K, T, rt, v.vec and sa != sb and sb != 0)   # 'n' / 'k' (+ '4')
    odt = tmp_dtype if tmp_numel else out.dtype
    nb = len(batch)
    head = [M, N, K, 0, nbatch, a._offset, a._stride[-2], a._stride[-1],
            b._offset, b._stride[-2], b._stride[-1], 0 if tmp_numel else out._offset,
            nsplit, kchunk, nbatch * M * N if tmp_numel else 0, 0, 0]
    tail = list(batch) + list(a._stride[:-2]) + list(b._stride[:-2])
    nparams = len(head) + len(tail)
    tile_epi = epi if not tmp_numel else None   # (split K: the summing kernel stores it)
    # vec4 stores of the output where rows are whole vec4s (coalesced, 4x fewer stores)
    ovec = (odt.gpu_storage in ("f32", "f16", "i32") and (odt.gpu_storage == "i32") == (T == "i32")
            and N % 4 == 0 and head[11] % 4 == 0)
    # (split-K and fill only change the plan: variants differing in them share pipelines)
    key = ("mmt", v._replace(name="", split=1, fill=0), a.dtype.name, b.dtype.name, odt.name, T,
           nb, sa, sb, nbuf, amode, bmode, ovec, tile_epi and tile_epi.key)
    total = nparams + (tile_epi.nwords if tile_epi else 0)

    def make_code():
        return _kernel_source(v, a.dtype.gpu_storage, b.dtype.gpu_storage, odt, T, nb, total, sa, sb,
                              nbuf, amode, bmode, ovec, bool(tile_epi)) + (
            tile_epi.code(nbuf, nparams) if tile_epi else "")

    pid = rt.pipeline(key, make_code, ["uniform", "write"] + ["read"] * (nbuf - 1) + (
        tile_epi.kinds() if tile_epi else []))
    zper = max(1, zmax // nsplit)
    dispatches = []
    for start in range(0, nbatch, zper):
        head[3] = start
        count = min(zper, nbatch - start)
        for y0 in range(0, gy, zmax):
            for x0 in range(0, gx, zmax):
                head[15], head[16] = x0, y0
                dispatches.append(((min(zmax, gx - x0), min(zmax, gy - y0), count * nsplit),
                                   struct.pack(f"<{nparams}I", *(head + tail))))
    summing = _sum_plan(rt, out, nsplit, nbatch * M * N, T, epi) if tmp_numel else None
    return pid, dispatches, tmp_numel, tmp_dtype, summing


def _kernel_source(v, *args):
    """The WGSL of variant v (args: _source's after v)."""
    if v.ly:
        return matmul_warp.source(v, *args)
    if v.wx:
        return matmul_direct.source(v, *args)
    return _source(v, *args)


def _mode(t, di, dk, size, K, T, rt, vec):
    """How a tile of t is read: along its dim di ('m'/'n' for A/B) or along K ('k'), whichever
    has stride 1 (coalesced); '4' added for vec4 loads, when the storage type allows it, the
    contiguous size is a multiple of 4 and every other stride and the offset are too."""
    sd, sk = t._stride[di], t._stride[dk]
    along = "k" if sk == 1 or sd != 1 else "mn"
    if not vec or t.dtype.gpu_storage not in ("f32", "f16", "i32"):
        return along
    if (t.dtype.gpu_storage == "i32") != (T == "i32"):
        return along
    length = K if along == "k" else size
    others = [t._offset, sd if along == "k" else sk] + list(t._stride[:-2])
    if (sk if along == "k" else sd) == 1 and length % 4 == 0 and all(o % 4 == 0 for o in others):
        return along + "4"
    return along


def _source(v, ast, bst, odt, T, nb, nparams, sa, sb, nbuf, amode, bmode, ovec=False, epi=False):
    TM, TN, KT, RM, RN = 16 * v.rm, 16 * v.rn, v.kt, v.rm, v.rn
    nbufs = 2 if v.db else 1
    decl, P, pre = header(ast, bst, odt, T, nb, nparams, sa, sb, nbuf, amode, bmode, ovec)
    M, N, K = P.M, P.N, P.K
    sam, sak, sbk, sbn = P.sam, P.sak, P.sbk, P.sbn
    o_off, sstride, xbase, ybase = P.o_off, P.sstride, P.xbase, P.ybase
    zero = lit(T, 0)

    # Loads of one K step: each thread reads `per` elements (or vec4s) into registers ra*/rb*,
    # then writes them to the workgroup tile. Positions relative to the tile are fixed per
    # thread, so their global base addresses are computed once, before the K loop.
    def plan(name, mode, tile, st, sdim, skk, base, lim):
        """name 'a' (tile TM rows x KT) or 'b' (KT x TN cols); returns (setup, load, put)."""
        vec = mode.endswith("4")
        along_k = mode.startswith("k")
        count = tile * KT // (4 if vec else 1)
        per = -(-count // WORKGROUP)
        setup, load, put = [], [], []
        W = TM if name == "a" else TN
        SH = "AS" if name == "a" else "BS"
        slot = sa if name == "a" else sb
        d0 = "row0" if name == "a" else "col0"
        for j in range(per):
            e = f"(lid + {j * WORKGROUP}u)"
            guard = f"{e} < {count}u" if count % WORKGROUP else "true"
            if along_k:     # consecutive threads: consecutive k
                kw = KT // 4 if vec else KT
                d, k = f"({e} / {kw}u)", f"({e} % {kw}u)" + (" * 4u" if vec else "")
            else:           # consecutive threads: consecutive rows of A / columns of B
                dw = W // 4 if vec else W
                k, d = f"({e} / {dw}u)", f"({e} % {dw}u)" + (" * 4u" if vec else "")
            setup.append(f"  let {name}d{j} = {d}; let {name}k{j} = {k};")
            setup.append(f"  let {name}ok{j} = {guard} && {d0} + {name}d{j} < {lim};")
            setup.append(f"  let {name}p{j} = {base} + ({d0} + {name}d{j}) * {sdim} + {name}k{j} * {skk};")
            addr = f"{name}p{j} + k0 * {skk}"
            if vec:
                ty = f"vec4<{T}>"
                load.append(f"    var r{name}{j} = {ty}({zero});\n"
                            f"    if ({name}ok{j} && k0 + {name}k{j} < {K}) {{ r{name}{j} = {cv(f'B{slot}[({addr}) / 4u]', st, T, True)}; }}")
            else:
                load.append(f"    var r{name}{j} = {T}({zero});\n"
                            f"    if ({name}ok{j} && k0 + {name}k{j} < {K}) {{ r{name}{j} = {cv(f'B{slot}[{addr}]', st, T)}; }}")
            # workgroup tile layout: [buf][k][W / 4] vec4s
            g = f"if ({guard}) " if count % WORKGROUP else ""
            if vec and along_k:
                put.append("    " + g + "{ " + " ".join(
                    f"{SH}[nb_ + ({name}k{j} + {q}u) * {W // 4}u + {name}d{j} / 4u][{name}d{j} % 4u] = r{name}{j}[{q}];"
                    for q in range(4)) + " }")
            elif vec:
                put.append(f"    {g}{{ {SH}[nb_ + {name}k{j} * {W // 4}u + {name}d{j} / 4u] = r{name}{j}; }}")
            else:
                put.append(f"    {g}{{ {SH}[nb_ + {name}k{j} * {W // 4}u + {name}d{j} / 4u][{name}d{j} % 4u] = r{name}{j}; }}")
        return setup, load, put

    asu, ald, aput = plan("a", amode, TM, ast, sam, sak, "ab", M)
    bsu, bld, bput = plan("b", bmode, TN, bst, sbn, sbk, "bb", N)
    HA, HB = RN // 4, RM // 4   # vec4s of B and of A per thread per k
    accs = "\n".join(f"  var acc{i}_{h} = vec4<{T}>({zero});" for i in range(RM) for h in range(HA))
    steps = []
    for kk in range(KT):
        s = ["    {"] + [f"      let a{q} = AS[ca_ + {kk * TM // 4}u + ty * {HB}u + {q}u];" for q in range(HB)]
        s += [f"      let b{h} = BS[cb_ + {kk * TN // 4}u + {h * 16}u + tx];" for h in range(HA)]
        s += [f"      acc{i}_{h} = acc{i}_{h} + a{i // 4}[{i % 4}] * b{h};" for i in range(RM) for h in range(HA)]
        s.append("    }")
        steps.append("\n".join(s))
    rows = []
    for i in range(RM):
        for h in range(HA):
            put = store_acc(f"acc{i}_{h}", ovec, odt, T, N, epi)
            rows.append(f"""  {{ let gr = row0 + ty * {RM}u + {i}u; let gc = col0 + {h * 64}u + tx * 4u;
    if (gr < {M}) {{
      let o = {o_off} + s * {sstride} + (bi * {M} + gr) * {N} + gc;
{put}
    }}
  }}""")
    sizeA, sizeB = KT * TM // 4, KT * TN // 4
    nl = "\n"
    if v.db:
        loop = f"""  var k0 = kbeg;
  var cur = 0u;
  if (k0 < kend) {{
{nl.join(ald)}
    let nb_ = 0u;
{nl.join(aput)}
{nl.join(bld)}
{nl.join(bput)}
  }}
  workgroupBarrier();
  loop {{
    if (k0 >= kend) {{ break; }}
    let ca_ = cur * {sizeA}u; let cb_ = cur * {sizeB}u;
    let kn = k0 + {KT}u;
    let more = kn < kend;
    k0 = kn;
{nl.join(ald)}
{nl.join(bld)}
{nl.join(steps)}
    if (more) {{
      let nb_ = (1u - cur) * {sizeA}u;
{nl.join(aput)}
    }}
    if (more) {{
      let nb_ = (1u - cur) * {sizeB}u;
{nl.join(bput)}
    }}
    workgroupBarrier();
    cur = 1u - cur;
  }}"""
    else:
        loop = f"""  let ca_ = 0u; let cb_ = 0u; let nb_ = 0u;
  for (var k0 = kbeg; k0 < kend; k0 = k0 + {KT}u) {{
{nl.join(ald)}
{nl.join(bld)}
{nl.join(aput)}
{nl.join(bput)}
    workgroupBarrier();
{nl.join(steps)}
    workgroupBarrier();
  }}"""
    return decl + f"""
var<workgroup> AS: array<vec4<{T}>, {sizeA * nbufs}>;   // [buf][k][m / 4]: A's tile, transposed
var<workgroup> BS: array<vec4<{T}>, {sizeB * nbufs}>;   // [buf][k][n / 4]
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid3: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let tx = lid3.x; let ty = lid3.y;
  let row0 = (wid.y + {ybase}) * {TM}u; let col0 = (wid.x + {xbase}) * {TN}u;
{nl.join(pre)}
{nl.join(asu)}
{nl.join(bsu)}
{accs}
{loop}
{nl.join(rows)}
}}
"""


def _sum_plan(rt, out, nsplit, total, T, epi=None):
    """The dispatch (pipeline id, grid, params) that sums the split-K slices ([nsplit, total],
    binding 2) into out (binding 1). float32 and int32 outputs at a 4-aligned offset are summed
    a vec4 a thread (scalar loads left it at ~1/4 of the memory bandwidth on an H200). epi: the
    product's epilogue, stored a scalar a thread (its params and buffers appended by run())."""
    odt = out.dtype
    vec = 4 if ((odt.name == "float32" and T != "i32") or (odt.name == "int32" and T == "i32")) \
        and total % 4 == 0 and out._offset % 4 == 0 and epi is None else 1
    key = ("mmt_sum", odt.name, T, vec, epi and epi.key)
    nparams = 4 + (epi.nwords if epi else 0)

    def make_code():
        pst = "i32" if T == "i32" else "f32"
        enable = "enable f16;\n" if odt.gpu_storage == "f16" else ""
        acc = "i32" if T == "i32" else "f32"
        if vec == 4:   # (odt's storage is acc's type here)
            return f"""@group(0) @binding(0) var<uniform> P: array<vec4<u32>, 1>;
@group(0) @binding(1) var<storage, read_write> B0: array<vec4<{acc}>>;
@group(0) @binding(2) var<storage, read> B1: array<vec4<{pst}>>;
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;
  if (i >= {param(0)}) {{ return; }}
  var acc = B1[i];
  for (var s = 1u; s < {param(1)}; s = s + 1u) {{ acc = acc + B1[s * {param(0)} + i]; }}
  B0[{param(2)} + i] = acc;
}}
"""
        return enable + f"""@group(0) @binding(0) var<uniform> P: array<vec4<u32>, {-(-nparams // 4)}>;
@group(0) @binding(1) var<storage, read_write> B0: array<{odt.gpu_storage}>;
@group(0) @binding(2) var<storage, read> B1: array<{pst}>;
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {{
  let i = (wid.y * nwg.x + wid.x) * {WORKGROUP}u + lid;
  if (i >= {param(0)}) {{ return; }}
  var acc = {acc}(0);
  for (var s = 0u; s < {param(1)}; s = s + 1u) {{ acc = acc + B1[s * {param(0)} + i]; }}
  B0[{param(2)} + i] = {"tw_epilogue(i, acc)" if epi else store("acc", acc, odt)};
}}
""" + (epi.code(2, 4) if epi else "")

    pid = rt.pipeline(key, make_code, ["uniform", "write", "read"] + (epi.kinds() if epi else []))
    n = total // vec
    return pid, rt.grid(-(-n // WORKGROUP)), struct.pack("<4I", n, nsplit, out._offset // vec, 0)
