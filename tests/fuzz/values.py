"""Element values per dtype, with special values mixed in, and their JSON encoding.

Floats are stored exactly: a float32 (or float16) value is a Python float that the dtype holds
exactly. JSON has no NaN, infinity or negative zero that every reader keeps, so those are
written as strings: "nan", "inf", "-inf", "-0.0".
"""

import math

import numpy as np
from hypothesis import strategies as st

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1
F32_MAX = float(np.finfo(np.float32).max)
F16_MAX = 65504.0

# Special values per dtype. int64 inputs stay within int32: the webgpu device holds int64 in
# 32 bits and cannot even create larger ones (a documented deviation); results may leave it.
_F32_SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40, 1e30, -1e30, 3.4e38,
                -3.4e38, 2.0 ** 24, 2.0 ** 24 + 2, -(2.0 ** 24), 2.0 ** 31, -(2.0 ** 31), 2.0 ** 31 - 128,
                0.5, -0.5, 1.0, -1.0, 2.0, 3.0, -3.0, 1e-7, 100.0, -88.7, 88.7, 1e10]
_F16_SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 6e-8, -6e-8, 1e-5, 65504.0, -65504.0,
                2048.0, 2050.0, -2048.0, 0.5, -0.5, 1.0, -1.0, 2.0, 3.0, -3.0, 11.0, -11.0, 1000.0]
_INT_SPECIAL = [0, 1, -1, 2, -2, 3, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1, 2 ** 24,
                2 ** 24 + 1, -(2 ** 24), 46341, -46341, 65535, 65536, 2 ** 30, -(2 ** 30), 255, 256]
_U8_SPECIAL = [0, 1, 2, 127, 128, 254, 255]

SPECIAL = {"float32": _F32_SPECIAL, "float16": _F16_SPECIAL, "int32": _INT_SPECIAL,
           "int64": _INT_SPECIAL, "uint8": _U8_SPECIAL, "bool": [False, True]}
RANGE = {"int32": (INT32_MIN, INT32_MAX), "int64": (INT32_MIN, INT32_MAX), "uint8": (0, 255)}
FLOATS = ("float32", "float16")
INTS = ("int32", "int64", "uint8")
DTYPES = ("float32", "float16", "int32", "int64", "uint8", "bool")


def exact(v, dtype):
    """v as the dtype holds it (a Python float or int or bool)."""
    if dtype == "float32":
        with np.errstate(over="ignore"):
            return float(np.float32(v))
    if dtype == "float16":
        with np.errstate(over="ignore"):
            return float(np.float16(v))
    if dtype == "bool":
        return bool(v)
    return int(v)


# -- strategies --------------------------------------------------------------------------------
def element(dtype, mode="mixed"):
    """One element of `dtype`. mode: 'small' (small integers and moderate floats only),
    'mixed' (those and special values) or 'wide' (the whole range too)."""
    if dtype == "bool":
        return st.booleans()
    if dtype in INTS:
        lo, hi = RANGE[dtype]
        small = st.integers(max(lo, -5), min(hi, 9))
        if mode == "small":
            return small
        special = st.sampled_from(SPECIAL[dtype])
        parts = [small, small, special] + ([st.integers(lo, hi)] if mode == "wide" else [])
        return st.one_of(*parts)
    width = 32 if dtype == "float32" else 16
    moderate = st.floats(-10, 10, width=width)
    small_int = st.integers(-5, 5).map(float)
    if mode == "small":
        return st.one_of(small_int, moderate).map(lambda v: exact(v, dtype))
    special = st.sampled_from(SPECIAL[dtype])
    parts = [small_int, moderate, special, special]
    if mode == "wide":
        parts.append(st.floats(width=width, allow_nan=True, allow_infinity=True))
    return st.one_of(*parts).map(lambda v: exact(v, dtype))


def python_scalar(kind, mode="mixed"):
    """A Python scalar operand: 'int' (within int32), 'float' (any double) or 'bool'."""
    if kind == "bool":
        return st.booleans()
    if kind == "int":
        parts = [st.integers(-5, 9)]
        if mode != "small":
            parts.append(st.sampled_from(_INT_SPECIAL))
        return st.one_of(*parts)
    parts = [st.integers(-5, 5).map(float), st.sampled_from([0.5, -0.5, 2.5, 0.1, -1.5, 1e-3])]
    if mode != "small":
        parts.append(st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1e30, -1e30, 3.4e38,
                                      1e-40, 1e300, 2.0 ** 31, 70000.0, 1e-8]))
        parts.append(st.floats(-1e6, 1e6))
    return st.one_of(*parts)


def seeded_values(dtype, n, seed, mode="mixed"):
    """n values from a numpy generator, for tensors too big to draw element by element: moderate
    values with (mode != 'small') a few special values at random places."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype in INTS:
        lo, hi = RANGE[dtype]
        v = rng.integers(max(lo, -9), min(hi, 9) + 1, n).astype(np.int64)
    else:
        v = (rng.standard_normal(n) * 3).astype(np.float32 if dtype == "float32" else np.float16)
    if mode != "small" and n:
        specials = SPECIAL[dtype]
        k = min(n, max(1, n // 50))
        idx = rng.integers(0, n, k)
        v[idx] = [specials[i] for i in rng.integers(0, len(specials), k)]
    return v


# -- JSON --------------------------------------------------------------------------------------
def enc_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0 and math.copysign(1.0, v) < 0:
        return "-0.0"
    return v


def dec_float(v):
    return float(v) if isinstance(v, str) else v


def enc_values(values):
    return [enc_float(v) if isinstance(v, float) else v for v in values]


def dec_values(values):
    return [float(v) if isinstance(v, str) else v for v in values]
