"""Reading results back, tolerances, and comparing torchweb's results with PyTorch's.

Results are read into `Read`s (shape, dtype name, numpy values; float64 for floats) so that the
comparison is the same for every family. Integer and bool results are compared exactly. Float
results: NaN where PyTorch has NaN, the same infinity where it has one, and elsewhere
|ours - theirs| <= atol + rtol * |theirs|, per element. Signs of zeros are compared only for
the ops whose point is the sign (SIGNED_ZERO_OPS). Elements an op leaves order-dependent (a
float32 sum whose partial sums may overflow, see below) are left unchecked: `unchecked`.

Tolerances (the base, then what each family adds):
  float32: rtol 1e-5, atol 1e-5. Correctly rounded ops (+ - * / sqrt) are far inside it;
           GPU transcendentals (polynomials, a few ulp) too; exceptions in OP_RTOL say why.
  float16: rtol 1e-3 (one float16 ulp is 2**-10 relative: both libraries compute in float32
           and round, a result on a rounding boundary may round either way), atol 1e-5.
  Sums of n terms, in any order, differ from the exact sum by at most (n - 1) * u * sum|x_i|
  (u = 2**-24, the float32 unit roundoff; Higham, Accuracy and Stability, 4.2), so reductions
  and matmul add that to atol, per output element, with sum|x_i| taken in float64 over the
  finite terms. Where that sum of magnitudes passes float32's max, whether a partial sum
  overflows depends on the order (inf, nan or a finite value are all right): unchecked.
"""

import math

import numpy as np
import torch

U32 = 2.0 ** -24          # float32 unit roundoff
U16 = 2.0 ** -11          # float16 unit roundoff
F32_MAX = float(np.finfo(np.float32).max)
F16_MAX = 65504.0

BASE = {"float32": (1e-5, 1e-5), "float16": (1e-3, 1e-5)}
# float32 rtol above 1e-5, with why (the GPU's polynomial approximations of these functions are
# within a few ulp of the correctly rounded result where their arguments are moderate; the
# formulas below lose more where inputs are large, and PyTorch's own vectorised CPU kernels are
# not correctly rounded either).
OP_RTOL = {
    # pow: exp2(y * log2(x)): the relative error of the result is that of y * log2(x) times
    # ln 2 * |y * log2(x)| (up to ~88 for a finite float32 result): pow_rtol() adds it
    "pow": 2e-5, "**": 2e-5, "__ipow__": 2e-5,
}
SIGNED_ZERO_OPS = {"neg", "abs", "copy", "fill", "where", "copy_", "fill_", "zero_", "setitem", "clone"}


class Read:
    """A result read back: shape, dtype name and values (numpy; float64 for floats)."""

    def __init__(self, shape, dtype, values):
        self.shape, self.dtype, self.values = tuple(shape), dtype, values

    @property
    def is_float(self):
        return self.dtype in ("float32", "float16")

    def __repr__(self):
        return f"{fmt(self.values)} ({self.dtype}, shape {list(self.shape)})"


def fmt(arr, limit=24):
    flat = np.asarray(arr).reshape(-1)
    txt = ", ".join(_fmt1(v) for v in flat[:limit])
    return "[" + txt + (f", ... ({flat.size} values)" if flat.size > limit else "") + "]"


def _fmt1(v):
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if v == 0:
            return "-0.0" if math.copysign(1, v) < 0 else "0.0"
        return repr(v)
    return str(v.item() if hasattr(v, "item") else v)


def read_torch(r):
    if isinstance(r, torch.Tensor):
        name = str(r.dtype).replace("torch.", "")
        t = r.detach()
        vals = t.double().numpy() if t.dtype.is_floating_point else t.numpy().astype(bool if t.dtype is torch.bool else np.int64)
        return Read(t.shape, name, vals.copy())
    if isinstance(r, (tuple, list)):
        return [read_torch(x) for x in r]
    return ("scalar", r)


def read_ours(r):
    """Read a torchweb result back (this is where the webgpu device reports errors the GPU
    found, e.g. integer division by zero or int64 out of range)."""
    import torchweb
    if isinstance(r, torchweb.Tensor):
        name = r.dtype.name
        if r.numel() > 100000:
            vals = np.asarray(r.detach().numpy())
        else:
            vals = np.array(r.tolist())
        if name in ("float32", "float16"):
            vals = vals.astype(np.float64)
        elif name == "bool":
            vals = vals.astype(bool)
        else:
            vals = vals.astype(np.int64)
        return Read(r.shape, name, vals.reshape(tuple(r.shape)))
    if isinstance(r, (tuple, list)):
        return [read_ours(x) for x in r]
    return ("scalar", r)


# -- comparing ------------------------------------------------------------------------------------
class Tol:
    """Per-result tolerance: rtol, atol (a number or an array shaped like the result), and
    unchecked (a bool array or None)."""

    def __init__(self, rtol, atol, unchecked=None, deviation=""):
        self.rtol, self.atol, self.unchecked = rtol, atol, unchecked
        self.deviation = deviation  # the documented deviation that unchecked elements are, if any


def base_tol(dtype, op=None):
    rtol, atol = BASE.get(dtype, (0.0, 0.0))
    if dtype == "float32" and op in OP_RTOL:
        rtol = max(rtol, OP_RTOL[op])
    return Tol(rtol, atol)


def compare(got, exp, tol, signed_zero=False, where="result"):
    """Problems (a list of (kind, text)) between a torchweb Read and a torch Read."""
    if isinstance(exp, list):
        if not isinstance(got, list) or len(got) != len(exp):
            return [("structure", f"{where}: PyTorch gives {len(exp)} results, torchweb {describe_read(got)}")]
        out = []
        for i, (g, e) in enumerate(zip(got, exp)):
            t = tol[i] if isinstance(tol, (list, tuple)) else tol
            out += compare(g, e, t, signed_zero, f"{where}[{i}]")
        return out
    if isinstance(exp, tuple):  # ("scalar", value)
        if not isinstance(got, tuple) or type(got[1]) is not type(exp[1]) or not _same_scalar(got[1], exp[1]):
            return [("value", f"{where}: PyTorch gives {exp[1]!r}, torchweb {describe_read(got)}")]
        return []
    if not isinstance(got, Read):
        return [("structure", f"{where}: PyTorch gives a tensor, torchweb {describe_read(got)}")]
    if got.shape != exp.shape:
        return [("shape", f"{where}: shape {list(got.shape)}, PyTorch's {list(exp.shape)}")]
    if got.dtype != exp.dtype:
        return [("dtype", f"{where}: dtype {got.dtype}, PyTorch's {exp.dtype}")]
    if got.values.size == 0:
        return []
    if not exp.is_float:
        bad = got.values != exp.values
        return _report("value", where, bad, got, exp) if bad.any() else []
    return _compare_float(got, exp, tol, signed_zero, where)


def _same_scalar(a, b):
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


def describe_read(r):
    if isinstance(r, list):
        return f"{len(r)} results"
    if isinstance(r, tuple):
        return f"the scalar {r[1]!r}"
    return f"{r!r}"


def _compare_float(got, exp, tol, signed_zero, where):
    g, e = got.values, exp.values
    skip = np.zeros(e.shape, bool) if tol.unchecked is None else np.broadcast_to(tol.unchecked, e.shape)
    gn, en = np.isnan(g), np.isnan(e)
    bad_nan = (gn != en) & ~skip
    if bad_nan.any():
        return _report("nan", where, bad_nan, got, exp)
    ei, gi = np.isinf(e), np.isinf(g)
    bad_inf = ((ei | gi) & ~en & (g != e)) & ~skip
    if bad_inf.any():
        return _report("inf", where, bad_inf, got, exp)
    fin = ~(en | ei | gi) & ~skip
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(g - e)
        allowed = np.asarray(tol.atol, dtype=np.float64) + tol.rtol * np.abs(e)
        bad = fin & ~(diff <= allowed)
    if bad.any():
        return _report("value", where, bad, got, exp, diff, allowed)
    if signed_zero:
        z = (e == 0) & (g == 0) & (np.signbit(e) != np.signbit(g)) & ~skip
        if z.any():
            return _report("signed-zero", where, z, got, exp)
    return []


def _report(kind, where, bad, got, exp, diff=None, allowed=None, limit=6):
    kind = f"{kind}[{exp.dtype}]"
    idx = np.argwhere(bad)
    lines = [f"{where}: {int(bad.sum())} of {bad.size} elements differ ({kind})"]
    for ix in idx[:limit]:
        ix = tuple(int(i) for i in ix)
        extra = ""
        if diff is not None:
            a = np.broadcast_to(allowed, bad.shape)[ix]
            extra = f"  |diff| {diff[ix]:.3g} > allowed {a:.3g}"
        lines.append(f"    at {list(ix)}: torchweb {_fmt1(got.values[ix])}, PyTorch {_fmt1(exp.values[ix])}{extra}")
    lines.append(f"    torchweb: {fmt(got.values)}")
    lines.append(f"    PyTorch:  {fmt(exp.values)}")
    return [(kind, "\n".join(lines))]


# -- tolerance helpers that families use --------------------------------------------------------
def finite_abs64(t):
    """|t| in float64 with non-finite elements as 0 (a torch tensor)."""
    a = t.detach().double().abs()
    return torch.where(torch.isfinite(a), a, torch.zeros_like(a))


def terms(n):
    """How many roundings a sum of n terms is allowed: n - 1, the worst case for any order
    (rigorous), up to 4 sqrt(n) past n = 16, where the worst case grows useless (n u reaches 1
    at n = 2**24) and rounding errors of any sensible order (pairwise, tree, blocked) add up
    like a random walk; a naive running sum of millions of terms falls outside it, rightly."""
    return max(min(n - 1, 4 * math.sqrt(n)), 0)


def sum_bound(abs_sum, n, u=U32):
    """The terms(n) u sum|x| bound, and the elements it cannot vouch for (order-dependent
    overflow), as numpy arrays."""
    s = np.asarray(abs_sum, dtype=np.float64)
    return terms(n) * u * s, s > F32_MAX * (1 - 4 * U32)
