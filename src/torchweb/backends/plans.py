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
