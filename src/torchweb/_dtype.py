"""dtypes and PyTorch's type promotion.

A dtype knows three representations: the name the user sees (int64), how the GPU stores it
(`gpu_storage`, a WGSL element type; int64 is held as i32 and range-checked on upload), and
which WGSL type kernels compute in (`gpu_compute`; float16 is computed in f32 as PyTorch's
CPU path does). float16's storage is f16, or f32 words on an adapter without 'shader-f16'
(backends/webgpu/runtime.py decides it when the adapter is known).
"""

import builtins


class dtype:
    __slots__ = ("name", "itemsize", "category", "gpu_storage", "gpu_compute", "numpy_name",
                 "struct_code", "min", "max", "word", "c_name", "c_int", "c_scalar", "scalar_range",
                 "is_floating_point", "is_complex", "is_signed")

    def __init__(self, name, itemsize, category, gpu_storage, gpu_compute, numpy_name,
                 struct_code, lo=None, hi=None):
        self.name = name
        self.itemsize = itemsize          # bytes per element as PyTorch reports it
        self.category = category          # 0 bool, 1 integer, 2 floating
        self.gpu_storage = gpu_storage    # WGSL storage element type
        self.gpu_compute = gpu_compute    # WGSL type kernels compute in
        self.numpy_name = numpy_name
        self.struct_code = struct_code    # array/struct code of the host transfer format
        self.min = lo
        self.max = hi
        # plain attributes, as PyTorch's (every op asks: a property would run Python each time)
        self.is_floating_point = category == 2
        self.is_complex = False
        self.is_signed = name not in ("bool", "uint8")

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


bool = dtype("bool", 1, 0, "u32", "bool", "bool_", "I", 0, 1)
uint8 = dtype("uint8", 1, 1, "u32", "u32", "uint8", "I", 0, 255)
int32 = dtype("int32", 4, 1, "i32", "i32", "int32", "i", -2**31, 2**31 - 1)
# int64 is PyTorch's default integer type. WGSL has no 64-bit integers, so the GPU holds
# 32 bits: values outside int32's range are refused on upload.
int64 = dtype("int64", 8, 1, "i32", "i32", "int64", "i", -2**31, 2**31 - 1)
float16 = dtype("float16", 2, 2, "f16", "f32", "float16", "f", -65504.0, 65504.0)
float32 = dtype("float32", 4, 2, "f32", "f32", "float32", "f",
                -3.4028234663852886e38, 3.4028234663852886e38)
# bfloat16 (WebGPU has none) is held in f32 words (float32 arrays on the cpu device) whose
# values are bfloat16's: every op writing a bfloat16 tensor rounds its result to the nearest
# (ties to even, as c10::BFloat16), kernels through wgsl.store, the cpu device through
# backends/cpu_bfloat16.py. Computed in float32, as PyTorch's CPU path does.
bfloat16 = dtype("bfloat16", 2, 2, "f32", "f32", "float32", "f",
                 -3.3895313892515355e38, 3.3895313892515355e38)

# float64 has no GPU form (WebGPU has no 64-bit floats): its tensors are held on the host
# (torchweb/host64/), and GPU kernels never see it (ops/operands.py refuses it at allocation).
float64 = dtype("float64", 8, 2, None, None, "float64", "d",
                -1.7976931348623157e308, 1.7976931348623157e308)

# complex64 is float32 pairs (torchweb/_complex/: a ComplexTensor wraps its float32 view with
# a trailing dim of 2); category 3 so that promotion with any real dtype gives it.
complex64 = dtype("complex64", 8, 3, None, None, "complex64", "f")
complex64.is_complex = True

half = float16
double = float64
float = float32
int = int32
long = int64

ALL = (bool, uint8, int32, int64, float16, bfloat16, float32)
# the 16-bit floats: PyTorch accumulates them in float32 and rounds the result once
HALF_FLOATS = (float16, bfloat16)

# PyTorch's words for each dtype in its messages: the ScalarType name ("Long"), the C type of
# matmul's dtype errors, of where/clamp's and of fill's overflow errors; and the range a Python
# int may take when converted (PyTorch's int64 range even where the GPU holds 32 bits; unsigned
# types accept negatives down to -max, which wrap).
for _d, _facts in {
    bool: ("Bool", "bool", None, None, None),
    uint8: ("Byte", "unsigned char", "uint8_t", "uint8_t", (-255, 255)),
    int32: ("Int", "int", "int32_t", "int", (-2**31, 2**31 - 1)),
    int64: ("Long", "long int", "int64_t", "long", (-2**63, 2**63 - 1)),
    float16: ("Half", "c10::Half", None, None, None),
    bfloat16: ("BFloat16", "c10::BFloat16", None, None, None),
    float32: ("Float", "float", None, None, None),
    float64: ("Double", "double", None, None, None),
    complex64: ("ComplexFloat", "c10::complex<float>", None, None, None),
}.items():
    _d.word, _d.c_name, _d.c_int, _d.c_scalar, _d.scalar_range = _facts
_BY_NAME = {d.name: d for d in ALL + (float64, complex64)}
_ORDER = {bool: 0, uint8: 1, int32: 2, int64: 3, float16: 4, bfloat16: 4, float32: 5, float64: 6, complex64: 7}

# Names PyTorch has that we refuse, with the reason the user needs.
UNSUPPORTED = {
    "complex128": "complex128 needs 64-bit floats, which WebGPU does not have; use torch.complex64",
    "int16": "int16 is not supported; use torch.int32",
    "int8": "int8 is not supported; use torch.int32 or torch.uint8",
}


def _dtype_by_name(name):
    return _BY_NAME[name]


class _UnsupportedDtype:
    """Stands in for torch.float64 and friends so that using one gives a clear error."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


def as_dtype(d, what="dtype"):
    """Normalise a user-given dtype (ours, numpy's or Python's type) or raise TypeError. A name
    (dtype="float32") is refused, as PyTorch does; torchweb's own names go through dtype_named."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, str):
        raise TypeError(f"{what} must be torch.dtype, not str ({d!r}: use torch.{d.replace('torch.', '')})")
    return dtype_named(d, what)


def dtype_named(d, what="dtype"):
    """as_dtype that also takes a dtype's name ("float32", "torch.half"): the legacy tensor
    types and torchweb's own calls."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, _UnsupportedDtype):
        raise TypeError(f"{what} torch.{d.name} is not supported by torchweb: {UNSUPPORTED[d.name]}")
    if d is builtins.float:
        return float32
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    name = getattr(d, "name", None) if not isinstance(d, str) else d
    if name is None and hasattr(d, "__name__"):
        name = d.__name__
    if isinstance(name, str):
        name = name.replace("torch.", "")
        if name in _BY_NAME:
            return _BY_NAME[name]
        if name in ("float", "float_"):
            return float32
        if name in ("half",):
            return float16
        if name in ("long",):
            return int64
        if name in ("double",):
            return float64
        if name in ("cfloat", "complex"):
            return complex64
        if name in ("int",):
            return int32
        if name in UNSUPPORTED:
            raise TypeError(f"{what} {name} is not supported by torchweb: {UNSUPPORTED[name]}")
    raise TypeError(f"{what} must be a torch dtype, got {d!r}")


def promote_types(type1, type2):
    """torch.promote_types for our dtypes: the smallest type both fit in."""
    a, b = type1, type2
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        return hi
    # Same category: the wider one. (uint8 with int32 goes to int32, like PyTorch; float16 with
    # bfloat16, neither holding the other, to float32.)
    oa, ob = _ORDER[a], _ORDER[b]
    if oa == ob:
        return float32
    return a if oa > ob else b


def default_float():
    return _default_float[0]


_default_float = [float32]
# called with no argument when the default float dtype changes (caches keyed without it)
DEFAULT_FLOAT_LISTENERS = []


def set_default_dtype(d):
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    if d is float64:
        raise TypeError("torch.float64 cannot be torchweb's default dtype: float64 tensors are held "
                        "on the host for small computations (WebGPU has no 64-bit floats)")
    if d is not _default_float[0]:
        _default_float[0] = d
        for listener in DEFAULT_FLOAT_LISTENERS:
            listener()


def get_default_dtype():
    return _default_float[0]


def scalar_dtype(value):
    """The dtype PyTorch gives a Python scalar standing alone (torch.tensor(value))."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return default_float()
    if isinstance(value, builtins.complex):
        return complex64
    raise TypeError(f"expected a Python number, got {type(value).__name__}")


def _combine_categories(higher, lower):
    # Mirrors c10's combine_categories: a higher-priority group keeps its dtype unless a
    # lower-priority group is of a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """torch.result_type over tensors and Python scalars, with PyTorch's priority rules:
    dimensioned tensors > zero-dim tensors > Python scalars, each only winning its category."""
    dim_result = zero_result = wrapped_result = None
    for op in operands:
        if op is None:
            continue
        d = getattr(op, "dtype", None)
        if isinstance(d, dtype):
            if op.dim() > 0:
                dim_result = d if dim_result is None else promote_types(dim_result, d)
            else:
                zero_result = d if zero_result is None else promote_types(zero_result, d)
        else:
            d = scalar_dtype(op)
            wrapped_result = d if wrapped_result is None else promote_types(wrapped_result, d)
    return _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))
