"""The named arguments of backend primitives (backends/base.py): one small immutable class per
family, made by ops/ and read by the backends, so that neither side passes long lists by
position. Here, below both, because backends never import ops. Each is made once per signature
where ops call it often (ElementwiseDtypes: the cached dtype plan of ops/elementwise)."""


from math import prod


class ElementwiseDtypes:
    """What an elementwise op's signature decides for its kernel: compute, the dtype each
    operand is computed in (uint8 wraps values to 8 bits, float16 rounds); cls, the kernel
    template's class (f, i, u, b); classes, each operand's class; value_cls, the class of the
    value written (b for comparisons). ops/elementwise/dtype_plan.py's DtypePlan is one, cached
    per signature."""

    __slots__ = ("compute", "cls", "classes", "value_cls")

    def __init__(self, compute, cls, classes, value_cls):
        self.compute, self.cls, self.classes, self.value_cls = tuple(compute), cls, tuple(classes), value_cls



class ConvGeometry:
    """A convolution's windows over the spatial dims (one entry per dim in each): kernel,
    stride, padding (before), dilation, the input's and the output's sizes. im2col, col2im and
    the conv ops share it; pooling windows are one too (PoolSpec.geom)."""

    __slots__ = ("kernel", "stride", "padding", "dilation", "in_size", "out_size")

    def __init__(self, kernel, stride, padding, dilation, in_size, out_size):
        self.kernel, self.stride, self.padding = tuple(kernel), tuple(stride), tuple(padding)
        self.dilation, self.in_size, self.out_size = tuple(dilation), tuple(in_size), tuple(out_size)

    @property
    def K(self):
        """Elements of one window."""
        return prod(self.kernel)

    @property
    def L(self):
        """Output positions."""
        return prod(self.out_size)


class AttentionSpec:
    """What the fused attention kernels compute besides q, k, v: softmax(q k^T * scale + mask),
    mask None, bool (False: left out) or additive, broadcast to [*B, L, S] (stride 0) already;
    causal: the upper triangle left out as well."""

    __slots__ = ("mask", "causal", "scale")

    def __init__(self, mask, causal, scale):
        self.mask, self.causal, self.scale = mask, causal, scale


class ReducePass:
    """One reduction kernel: kind (sum, mean, prod, max, min, argmax, argmin, all, any) over the
    last nred dims, accumulating in class acc_cls (f, i, u); a split reduction's passes
    (SPLIT_REDUCTIONS): nchunks partials per output, divisor (mean's count, for the pass that
    totals the partials), pairs_out / pairs_in (int64 partials written / read as (lo, hi) int32
    pairs). Made by reduce_pass, one object per value: kernels key their caches on it."""

    __slots__ = ("kind", "nred", "acc_cls", "nchunks", "divisor", "pairs_in", "pairs_out")

    def __init__(self, kind, nred, acc_cls, nchunks, divisor, pairs_in, pairs_out):
        self.kind, self.nred, self.acc_cls, self.nchunks = kind, nred, acc_cls, nchunks
        self.divisor, self.pairs_in, self.pairs_out = divisor, pairs_in, pairs_out


_REDUCE_PASSES = {}


def reduce_pass(kind, nred, acc_cls, nchunks=1, divisor=None, pairs_in=False, pairs_out=False):
    """The ReducePass of these values (every reduction asks: made once, bounded)."""
    key = (kind, nred, acc_cls, nchunks, divisor, pairs_in, pairs_out)
    p = _REDUCE_PASSES.get(key)
    if p is None:
        if len(_REDUCE_PASSES) > 4096:   # (divisors of ever new lengths: stay bounded)
            _REDUCE_PASSES.clear()
        p = _REDUCE_PASSES[key] = ReducePass(*key)
    return p


class ScanPass:
    """One scan kernel along the last dim: kind (sum, prod, max, min, logsumexp) accumulating
    in class acc_cls, reverse (from the end); a split scan's passes (SPLIT_SCANS): nchunks
    chunks a row, totals_only (each chunk's total, not its scan), pairs_out / pairs_in (int64
    totals written / read as (lo, hi) int32 pairs)."""

    __slots__ = ("kind", "acc_cls", "reverse", "nchunks", "totals_only", "pairs_in", "pairs_out")

    def __init__(self, kind, acc_cls, reverse=False, nchunks=1, totals_only=False, pairs_in=False,
                 pairs_out=False):
        self.kind, self.acc_cls, self.reverse, self.nchunks = kind, acc_cls, reverse, nchunks
        self.totals_only, self.pairs_in, self.pairs_out = totals_only, pairs_in, pairs_out


class PoolSpec:
    """A pooling: kind (max, avg) over windows geom (a ConvGeometry; adaptive: PyTorch's
    adaptive windows, start floor(o * S / O), end ceil((o + 1) * S / O), geom's kernel then
    unused); avg's count_include_pad and divisor_override."""

    __slots__ = ("kind", "geom", "adaptive", "count_include_pad", "divisor_override")

    def __init__(self, kind, geom, adaptive, count_include_pad=True, divisor_override=None):
        self.kind, self.geom, self.adaptive = kind, geom, adaptive
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override


class PadSpec:
    """A padding of the trailing dims: mode (constant, reflect, replicate, circular), pads (per
    padded dim, (before, after)), value (constant's)."""

    __slots__ = ("mode", "pads", "value")

    def __init__(self, mode, pads, value=0):
        self.mode, self.pads, self.value = mode, tuple(pads), value


class InterpolationSpec:
    """A resampling of the trailing dims: mode (nearest, nearest-exact, linear, cubic,
    aa-linear, aa-cubic: antialiased), scales (input per output step, float32, per dim),
    align (align_corners)."""

    __slots__ = ("mode", "scales", "align")

    def __init__(self, mode, scales, align):
        self.mode, self.scales, self.align = mode, tuple(scales), align


class GridSampleSpec:
    """grid_sample's options: mode (bilinear, nearest, bicubic), padding_mode (zeros, border,
    reflection), align (align_corners)."""

    __slots__ = ("mode", "padding_mode", "align")

    def __init__(self, mode, padding_mode, align):
        self.mode, self.padding_mode, self.align = mode, padding_mode, align


class SearchSpec:
    """searchsorted's options: right (the last insertion point among equals), acc_cls (the
    class values compare in: f, i, u), shared (one sorted row for every row of values)."""

    __slots__ = ("right", "acc_cls", "shared")

    def __init__(self, right, acc_cls, shared):
        self.right, self.acc_cls, self.shared = right, acc_cls, shared


class RandomDraw:
    """One draw of counter-based (Philox) random numbers: kind (uniform, normal, ...) with
    parameters a, b, at the counter (seed, call): the same numbers on every device."""

    __slots__ = ("kind", "a", "b", "seed", "call")

    def __init__(self, kind, a, b, seed, call):
        self.kind, self.a, self.b, self.seed, self.call = kind, a, b, seed, call


class SortPlan:
    """A block sort's rows (SORT_BLOCK set: sort_block, then merge passes sort_step and
    sort_merge over work buffers): rows of length R, compared in class acc_cls (f, i, u),
    descending or not; stable (equal keys keep their order)."""

    __slots__ = ("acc_cls", "descending", "R")

    def __init__(self, acc_cls, descending, R):
        self.acc_cls, self.descending, self.R = acc_cls, descending, R
