"""The named arguments of backend primitives (backends/base.py): one small immutable class per
family, made by ops/ and read by the backends, so that neither side passes long lists by
position. Here, below both, because backends never import ops. Each is a NamedTuple (fields
read by name; equal values hash alike, so kernels may key caches on them), except
ElementwiseDtypes, which ops/elementwise's cached DtypePlan extends. A primitive takes its plan
first (elementwise: last, after its operands, as DtypePlan.fresh does)."""

from math import prod
from typing import Any, NamedTuple


class ElementwiseDtypes:
    """What an elementwise op's signature decides for its kernel: compute, the dtype each
    operand is computed in (uint8 wraps values to 8 bits, float16 rounds); cls, the kernel
    template's class (f, i, u, b); classes, each operand's class; value_cls, the class of the
    value written (b for comparisons). ops/elementwise/dtype_plan.py's DtypePlan is one, cached
    per signature (every op passes it: nothing is made per call)."""

    __slots__ = ("compute", "cls", "classes", "value_cls")

    def __init__(self, compute, cls, classes, value_cls):
        self.compute, self.cls, self.classes, self.value_cls = tuple(compute), cls, tuple(classes), value_cls


class ConvGeometry(NamedTuple):
    """A convolution's windows over the spatial dims (a tuple per field, an entry per dim):
    kernel, stride, padding (before), dilation, the input's and the output's sizes. im2col,
    col2im and the conv ops share it; pooling windows are one too (PoolSpec.geom)."""
    kernel: tuple
    stride: tuple
    padding: tuple
    dilation: tuple
    in_size: tuple
    out_size: tuple

    K = property(lambda self: prod(self.kernel), doc="Elements of one window.")
    L = property(lambda self: prod(self.out_size), doc="Output positions.")


class AttentionSpec(NamedTuple):
    """What the fused attention kernels compute besides q, k, v: softmax(q k^T * scale + mask),
    mask None, bool (False: left out) or additive, broadcast to [*B, L, S] (stride 0) already;
    causal: the upper triangle left out as well."""
    mask: Any
    causal: bool
    scale: float


class TrsmPlan(NamedTuple):
    """One triangular block solve (trsm_block): n x n blocks (upper or lower triangle; unit:
    ones taken on the diagonal) against k right-hand sides, count matrices in the batch."""
    upper: bool
    unit: bool
    n: int
    k: int
    count: int


class QRPanelPlan(NamedTuple):
    """One Householder panel (qr_panel): m x w panels (w <= the kernel's width), count matrices."""
    m: int
    w: int
    count: int


class ReducePass(NamedTuple):
    """One reduction kernel: kind (sum, mean, prod, max, min, argmax, argmin, all, any) over the
    last nred dims, accumulating in class acc_cls (f, i, u); a split reduction's passes
    (SPLIT_REDUCTIONS): nchunks partials per output, divisor (mean's count, for the pass that
    totals the partials), pairs_out / pairs_in (int64 partials written / read as (lo, hi) int32
    pairs)."""
    kind: str
    nred: int
    acc_cls: str
    nchunks: int = 1
    divisor: int | None = None
    pairs_in: bool = False
    pairs_out: bool = False


class ScanPass(NamedTuple):
    """One scan kernel along the last dim: kind (sum, prod, max, min, logsumexp) accumulating
    in class acc_cls, reverse (from the end); a split scan's passes (SPLIT_SCANS): nchunks
    chunks a row, totals_only (each chunk's total, not its scan), pairs_out / pairs_in (int64
    totals written / read as (lo, hi) int32 pairs)."""
    kind: str
    acc_cls: str
    reverse: bool = False
    nchunks: int = 1
    totals_only: bool = False
    pairs_in: bool = False
    pairs_out: bool = False


class SortPlan(NamedTuple):
    """A block sort's rows (SORT_BLOCK set: sort_block, then merge passes sort_step and
    sort_merge over work buffers): rows of length R, compared in class acc_cls (f, i, u),
    descending or not; stable (equal keys keep their order)."""
    acc_cls: str
    descending: bool
    R: int


class SearchSpec(NamedTuple):
    """searchsorted's options: right (the last insertion point among equals), acc_cls (the
    class values compare in: f, i, u), shared (one sorted row for every row of values)."""
    right: bool
    acc_cls: str
    shared: bool


class PoolSpec(NamedTuple):
    """A pooling: kind (max, avg) over windows geom (a ConvGeometry; adaptive: PyTorch's
    adaptive windows, start floor(o * S / O), end ceil((o + 1) * S / O), geom's kernel then
    unused); avg's count_include_pad and divisor_override."""
    kind: str
    geom: ConvGeometry
    adaptive: bool
    count_include_pad: bool = True
    divisor_override: int | None = None


class PadSpec(NamedTuple):
    """A padding of the trailing dims: mode (constant, reflect, replicate, circular), pads (per
    padded dim, (before, after)), value (constant's)."""
    mode: str
    pads: tuple
    value: Any = 0


class InterpolationSpec(NamedTuple):
    """A resampling of the trailing dims: mode (nearest, nearest-exact, linear, cubic,
    aa-linear, aa-cubic: antialiased), scales (input per output step, float32, a tuple over
    the dims), align (align_corners)."""
    mode: str
    scales: tuple
    align: bool


class GridSampleSpec(NamedTuple):
    """grid_sample's options: mode (bilinear, nearest, bicubic), padding_mode (zeros, border,
    reflection), align (align_corners)."""
    mode: str
    padding_mode: str
    align: bool


class RandomDraw(NamedTuple):
    """One draw of counter-based (Philox) random numbers: kind (uniform, normal, ...) with
    parameters a, b (random), or a sampler's (gamma, poisson, binomial: random_sample, whose
    parameters are tensors), at the counter (seed, call): the same numbers on every device. redraw: what
    gives a captured call's replay its next (seed, call), as an eager call would draw it (the
    generator's next_call), or None where a replay cannot draw again."""
    kind: str
    a: Any
    b: Any
    seed: int
    call: int
    redraw: Any = None


class FFTSpec(NamedTuple):
    """One batch of unnormalized discrete Fourier transforms of n points: sign -1 (forward) or
    +1 (inverse); real, the input is real float32 (imaginary parts 0) rather than pairs."""
    n: int
    sign: int
    real: bool = False
