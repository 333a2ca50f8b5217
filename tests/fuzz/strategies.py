"""Hypothesis strategies that draw cases (case.py's format), one per family.

Shapes: 0-d, empty, ranks 1-5 with small sizes, now and then a dim of 255/256/257, and (long
mode only: slow) 1-D tensors of 65535 * 256 +- 1 elements; broadcast pairs and triples (size-1
dims, missing leading dims) and now and then shapes that do not broadcast. Layouts: contiguous,
permuted, stepped slices with offsets, expanded (stride 0), and two of those composed; built as
a bigger base and a view, the same on both sides. dtypes: all six, mixed across operands, and
Python scalars. Values: see values.py.
"""

import math

import torch
from hypothesis import strategies as st

from torchweb.ops.elementwise.table import OPS
from . import catalogue as C
from . import values as V
from .case import TORCH_DTYPE, apply_step, enc, tensor_arg

EXPLICIT_MAX = 32        # tensors up to this many elements get hypothesis-drawn values
HUGE = 65535 * 256       # 16776960: one past the largest 1-D grid of 256-thread workgroups

def rare(draw, n):
    """True once in n + 1 draws; False is hypothesis's simplest choice, so shrinking drops the
    rare branch unless the failure needs it."""
    return draw(st.integers(0, n)) == n


DTYPE_WEIGHTS = ["float32"] * 6 + ["float16", "int32", "int64", "int64", "uint8", "bool"]


def dtypes():
    return st.sampled_from(DTYPE_WEIGHTS)


# -- shapes --------------------------------------------------------------------------------------
@st.composite
def shapes(draw, min_rank=0, max_rank=5, long=False, allow_empty=True, big=True):
    r = draw(st.sampled_from([0, 1, 1, 2, 2, 2, 3, 3, 4, 5]))
    r = min(max(r, min_rank), max_rank)
    if long and big and r == 1 and rare(draw, 400):
        return (HUGE + draw(st.sampled_from([-1, 0, 1])),)
    sizes = st.integers(0 if allow_empty else 1, 5) if rare(draw, 6) else st.integers(1, 5)
    shape = [draw(sizes) for _ in range(r)]
    if big and r and rare(draw, 14):
        shape[draw(st.integers(0, r - 1))] = draw(st.sampled_from([255, 256, 257]))
        if math.prod(shape) > 3000:
            shape = [s if s >= 255 else 1 for s in shape]
    return tuple(shape)


@st.composite
def broadcast_to(draw, shape, mismatch=True):
    """A shape that broadcasts against `shape` (dims set to 1, leading dims dropped); now and
    then (mismatch) one that does not."""
    r = len(shape)
    drop = draw(st.integers(0, r)) if draw(st.booleans()) else 0
    out = [1 if draw(st.integers(0, 3)) == 0 else s for s in shape[drop:]]
    if mismatch and out and rare(draw, 30):
        i = draw(st.integers(0, len(out) - 1))
        out[i] = out[i] + 1 if out[i] != 1 else 2
        if shape[drop + i] == 1:
            out[i] = 3
    return tuple(out)


@st.composite
def operand_shapes(draw, n, long=False):
    """n shapes that broadcast together (the first is the full result shape, or not)."""
    full = draw(shapes(long=long))
    out = [full if draw(st.booleans()) else draw(broadcast_to(full)) for _ in range(n)]
    return out


# -- layouts -------------------------------------------------------------------------------------
@st.composite
def _wrap(draw, shape, kind):
    """(base shape, step): applying step to a tensor of base shape gives `shape`."""
    r = len(shape)
    if kind == "permute" and r >= 2:
        p = draw(st.permutations(range(r)))
        base = [0] * r
        for i, d in enumerate(p):
            base[d] = shape[i]
        return tuple(base), ["permute", list(p)]
    if kind == "slice" and r >= 1:
        d = draw(st.integers(0, r - 1)) if draw(st.booleans()) else r - 1
        k = draw(st.sampled_from([1, 2, 2, 3]))
        o = draw(st.integers(0, 2))
        size = o + (k * (shape[d] - 1) + 1 if shape[d] else 0) + draw(st.integers(0, 1)) * (shape[d] > 0 and k == 1)
        base = list(shape)
        base[d] = size
        stop = None if size == o + k * (shape[d] - 1) + 1 or not shape[d] else o + k * (shape[d] - 1) + 1
        return tuple(base), ["slice", d, o, stop, k]
    if kind == "expand" and r >= 1:
        base = [1 if draw(st.booleans()) else s for s in shape]
        drop = draw(st.integers(0, r)) if draw(st.booleans()) else 0
        return tuple(base[drop:]), ["expand", list(shape)]
    return tuple(shape), None


LAYOUTS = ["contiguous"] * 4 + ["permute", "permute", "slice", "slice", "expand", "compose"]


@st.composite
def layout(draw, shape, allow_expand=True):
    """(base shape, view steps) for a tensor of `shape`."""
    kind = draw(st.sampled_from(LAYOUTS))
    if kind == "expand" and not allow_expand:
        kind = "slice"
    if kind == "contiguous":
        return tuple(shape), []
    if kind == "compose":
        kinds = draw(st.lists(st.sampled_from(["permute", "slice", "expand"] if allow_expand else ["permute", "slice"]),
                              min_size=2, max_size=2))
    else:
        kinds = [kind]
    steps = []
    cur = tuple(shape)
    for k in kinds:
        cur, step = draw(_wrap(cur, k))
        if step:
            steps.insert(0, step)
    return cur, steps


# -- tensors -------------------------------------------------------------------------------------
def _values(dtype, n, mode):
    if n <= EXPLICIT_MAX:
        return st.lists(V.element(dtype, mode), min_size=n, max_size=n).map(V.enc_values)
    return st.builds(lambda s: {"seed": s, "mode": mode}, st.integers(0, 2 ** 31 - 1))


@st.composite
def value_mode(draw):
    return draw(st.sampled_from(["small", "mixed", "mixed", "wide"]))


@st.composite
def tensor(draw, shape, dtype=None, mode=None, lay=True, allow_expand=True, values_mode=None):
    dtype = dtype or draw(dtypes())
    mode = mode or draw(value_mode())
    if lay:
        base, steps = draw(layout(shape, allow_expand))
    else:
        base, steps = tuple(shape), []
    vals = draw(_values(dtype, math.prod(base), mode))
    return tensor_arg(dtype, base, vals, steps)


@st.composite
def scalar(draw, kind=None, mode="mixed"):
    kind = kind or draw(st.sampled_from(["int", "float", "float", "bool"]))
    return enc(draw(V.python_scalar(kind, mode)))


@st.composite
def operand(draw, shape, scalar_chance=5, dtype=None):
    """A tensor of `shape`, or (1 in scalar_chance) a Python scalar."""
    if scalar_chance and rare(draw, scalar_chance - 1):
        return draw(scalar())
    return draw(tensor(shape, dtype=dtype))


def restrict(a, lo, hi):
    """A tensor argument whose values a conversion to an integer dtype can take (float -> int
    of NaN, infinity or out-of-range values is undefined in PyTorch: deviation 2)."""
    if not (isinstance(a, dict) and "tensor" in a):
        return a
    spec = dict(a["tensor"])
    vals = spec["values"]
    if isinstance(vals, dict):
        spec["values"] = dict(vals, clip=[lo, hi])
    else:
        out = []
        for v in V.dec_values(vals):
            if isinstance(v, float):
                v = 0.0 if math.isnan(v) else min(max(v, lo), hi)
                v = V.exact(v, spec["dtype"])
            out.append(v)
        spec["values"] = V.enc_values(out)
    return {"tensor": spec}


INT_LIMITS = {"uint8": (0.0, 255.0), "int32": (-2.0 ** 31, 2.0 ** 31 - 128), "int64": (-2.0 ** 31, 2.0 ** 31 - 128),
              "bool": None, "float32": None, "float16": None}


def restrict_for(src, target_dtype):
    """restrict() src (a tensor argument) for a conversion to target_dtype, where src is float."""
    lim = INT_LIMITS.get(target_dtype)
    if lim is None or not (isinstance(src, dict) and "tensor" in src) or src["tensor"]["dtype"] not in V.FLOATS:
        return src
    return restrict(src, *lim)


def no_int32_min(a):
    """PyTorch's CPU trunc division traps (SIGFPE, the process dies) on int32 -2**31 / -1: keep
    -2**31 out of int32 operands of those ops (an exclusion, not a torchweb deviation)."""
    if isinstance(a, int) and not isinstance(a, bool):
        return a if a != V.INT32_MIN else V.INT32_MIN + 1
    if isinstance(a, dict) and "tensor" in a and a["tensor"]["dtype"] == "int32":
        return restrict(a, V.INT32_MIN + 1, V.INT32_MAX)
    return a


# -- elementwise rows ---------------------------------------------------------------------------
ELEMENTWISE_ROWS = sorted(OPS)
INPLACE_ROWS = sorted(n for n in OPS if n not in C.NO_INPLACE)


@st.composite
def row_args(draw, name, target=None, long=False):
    """(args, kwargs) for a table row. target: for the in-place form, the shape of the tensor
    written to (its first argument)."""
    row = OPS[name]
    if target is not None:
        shape = target
        first = draw(tensor(shape))
        rest_shapes = [shape if draw(st.booleans()) else draw(broadcast_to(shape)) for _ in range(row.nin - 1)]
    else:
        shs = draw(operand_shapes(row.nin, long))
        first = draw(operand(shs[0], scalar_chance=25))
        rest_shapes = shs[1:]
        shape = shs[0]
    kwargs = {}
    if name == "where":
        cond = first if target is not None else draw(tensor(shs[0], dtype=None if rare(draw, 9) else "bool"))
        args = [cond] + [draw(operand(s)) for s in rest_shapes]
    elif name == "clamp":
        lo_hi = []
        for s in rest_shapes:
            k = draw(st.integers(0, 3))
            lo_hi.append(None if k == 0 else draw(scalar()) if k == 1 else draw(tensor(s)))
        args = [first] + lo_hi
    elif name == "nan_to_num":
        args = [first]
        for k in ("nan", "posinf", "neginf"):
            if draw(st.booleans()):
                kwargs[k] = draw(scalar(draw(st.sampled_from(["float", "float", "int"]))))
    elif name in ("add_alpha", "sub_alpha"):
        args = [first, draw(operand(rest_shapes[0]))]
        kwargs["alpha"] = draw(scalar())
    elif name == "copy":
        form = "copy_" if target is not None else draw(st.sampled_from(["clone", "to", "copy_"]))
        if form == "clone":
            args = [first]
        elif form == "to":
            dt = draw(dtypes())
            args = [restrict_for(first, dt)]
            kwargs["dtype"] = {"dtype": dt}
        else:
            dst = first if isinstance(first, dict) else draw(tensor(shape))
            src = draw(tensor(draw(broadcast_to(dst_shape(dst)))))
            args = [dst, restrict_for(src, dst["tensor"]["dtype"])]
        if target is None:
            kwargs["form"] = form
    elif name == "fill":
        k = draw(st.integers(0, 7))
        v = draw(tensor((), lay=False)) if k == 6 else draw(tensor((2,), lay=False)) if k == 7 else draw(scalar())
        first = first if isinstance(first, dict) else draw(tensor(shape))
        args = [first, v]
    else:
        args = [first] + [draw(operand(s)) for s in rest_shapes]
    if name in C.TRAPS_ON_INT_MIN:
        args = [no_int32_min(a) for a in args]
    return args, kwargs


def dst_shape(arg):
    from .case import view_shape
    return view_shape(arg["tensor"])


@st.composite
def elementwise_case(draw, long=False):
    name = draw(st.sampled_from(ELEMENTWISE_ROWS))
    args, kwargs = draw(row_args(name, long=long))
    return {"family": "elementwise", "op": name, "args": args, "kwargs": kwargs}


@st.composite
def operator_case(draw, long=False):
    names = list(C.BINARY_OPERATORS) + list(C.UNARY_OPERATORS)
    name = draw(st.sampled_from(names))
    if name in C.UNARY_OPERATORS:
        return {"family": "operator", "op": name, "args": [draw(tensor(draw(shapes(long=long))))]}
    sa, sb = draw(operand_shapes(2, long))
    side = draw(st.sampled_from(["tt", "tt", "ts", "st"]))
    a = draw(tensor(sa)) if side != "st" else draw(scalar())
    b = draw(tensor(sb)) if side != "ts" else draw(scalar())
    return {"family": "operator", "op": name, "args": [a, b]}


@st.composite
def inplace_case(draw, long=False):
    name = draw(st.sampled_from(INPLACE_ROWS + C.INPLACE_OPERATORS))
    shape = draw(shapes(long=long))
    if name.startswith("__i"):
        t = draw(tensor(shape))
        args, kwargs = [t, draw(operand(shape if draw(st.booleans()) else draw(broadcast_to(shape))))], {}
        if name == "__ifloordiv__":
            args = [no_int32_min(a) for a in args]
    else:
        args, kwargs = draw(row_args(name, target=shape, long=long))
    return {"family": "inplace", "op": name, "args": args, "kwargs": kwargs}


# -- reductions ----------------------------------------------------------------------------------
@st.composite
def dim_arg(draw, rank, kinds, empty=True):
    """A dim argument: None, an int (now and then out of range) or a tuple (now and then with a
    repeat); empty=False: no empty tuple."""
    kind = draw(st.sampled_from(kinds))
    r = max(rank, 1)
    if kind == "none":
        return None
    if kind == "int":
        d = draw(st.sampled_from([r, -r - 1])) if rare(draw, 40) else draw(st.integers(-r, r - 1))
        return d
    k = draw(st.integers(0 if empty else 1, max(min(rank, 4), 1)))
    ds = draw(st.lists(st.integers(0, r - 1), min_size=k, max_size=k, unique=True))
    ds = [d - r if draw(st.booleans()) else d for d in ds]
    if ds and rare(draw, 40):
        ds.append(ds[0])            # a repeated dim: refused
    return {"tuple": ds}


@st.composite
def reduction_case(draw, long=False):
    name = draw(st.sampled_from(sorted(C.REDUCTIONS)))
    spec = C.REDUCTIONS[name]
    shape = draw(shapes(max_rank=4, long=long))
    dt = draw(dtypes())
    x = draw(tensor(shape, dtype=dt))
    kwargs = {}
    # PyTorch 2.13's logsumexp(x, dim=()) fails inside (an output shape error): not drawn
    d = draw(dim_arg(len(shape), spec["dims"], empty=name != "logsumexp"))
    if d is not None or spec.get("dim_required"):
        kwargs["dim"] = d
    if spec.get("keepdim") and "dim" in kwargs and draw(st.booleans()):
        kwargs["keepdim"] = draw(st.booleans())
    if spec.get("dtype") and rare(draw, 3):
        if dt in V.FLOATS or name in ("mean", "softmax", "log_softmax"):
            choices = ["float32", "float16"]
        else:
            choices = ["int32", "int64", "float32", "uint8"]
        kwargs["dtype"] = {"dtype": draw(st.sampled_from(choices))}
    if spec.get("var"):
        k = draw(st.integers(0, 3))
        if k == 1:
            kwargs["unbiased"] = draw(st.booleans())
        elif k >= 2:
            kwargs["correction"] = draw(st.sampled_from([0, 1, 2]))
    if spec.get("p"):
        key = "ord" if name == "linalg.vector_norm" else "p"
        if draw(st.integers(0, 4)):
            kwargs[key] = enc(draw(st.sampled_from(spec["p"])))
    forms = ["fn"] + (["method"] if C.has_method(name) else []) + (["nn"] if name in ("softmax", "log_softmax") else [])
    case = {"family": "reduction", "op": name, "args": [x], "kwargs": kwargs}
    form = draw(st.sampled_from(forms))
    if form != "fn":
        case["form"] = form
    return case


# -- matmul ----------------------------------------------------------------------------------
SIZES = st.one_of(st.integers(0, 6), st.integers(1, 9), st.sampled_from([1, 2, 3, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129]))


@st.composite
def matmul_case(draw, long=False):
    name = draw(st.sampled_from(sorted(C.MATMUL)))
    m_, k_, n_ = draw(SIZES), draw(SIZES), draw(SIZES)
    while m_ * k_ * n_ > 40000:
        m_, k_, n_ = max(m_ // 2, 1), max(k_ // 2, 1), max(n_ // 2, 1)
    if rare(draw, 10):
        k_ = 0
    kb = k_ + 1 if rare(draw, 25) else k_       # now and then: inner sizes differ
    b_ = draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["float32"] * 5 + ["float16", "int32", "int64", "mixed"]))
    dts = [kind, kind] if kind != "mixed" else [draw(dtypes()), draw(dtypes())]
    mode = draw(st.sampled_from(["small", "small", "mixed"]))
    kwargs = {}
    if name == "mm":
        shs = [(m_, k_), (kb, n_)]
    elif name == "bmm":
        shs = [(b_, m_, k_), (b_, kb, n_)]
    elif name == "mv":
        shs = [(m_, k_), (kb,)]
    elif name == "dot":
        shs = [(k_,), (kb,)]
    elif name in ("matmul", "@"):
        ra, rb = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        batch = [draw(st.integers(1, 3)) for _ in range(2)]
        sa = (k_,) if ra == 1 else tuple(batch[: ra - 2]) + (m_, k_)
        bb = [1 if draw(st.integers(0, 2)) == 0 else s for s in batch]
        sb = (kb,) if rb == 1 else tuple(bb[: rb - 2]) + (kb, n_)
        shs = [sa, sb]
    elif name == "addmm":
        c_shape = draw(st.sampled_from([(m_, n_), (n_,), (1, n_), (m_, 1), ()]))
        shs = [c_shape, (m_, k_), (kb, n_)]
        dts = [dts[0]] + dts
        for key in ("beta", "alpha"):
            if draw(st.booleans()):
                kwargs[key] = draw(st.sampled_from([0, 1, 2, -1, 0.5, 1.5]))
    else:  # linear
        lead = draw(st.sampled_from([(), (m_,), (2, m_)]))
        shs = [lead + (k_,), (kb,) if rare(draw, 5) else (n_, kb)]
        dts = dts + [dts[1]]
        if draw(st.booleans()) and len(shs[1]) == 2:
            shs.append(draw(st.sampled_from([(n_,), ()])))
    args = [draw(tensor(s, dtype=dts[min(i, len(dts) - 1)], mode=mode, allow_expand=True)) for i, s in enumerate(shs)]
    return {"family": "matmul", "op": name, "args": args, "kwargs": kwargs}


# -- views, then writes through them ---------------------------------------------------------------
@st.composite
def view_step(draw, shape):
    r = len(shape)
    kinds = ["slice", "transpose", "permute", "narrow", "select", "unsqueeze", "reshape", "view",
             "flatten", "expand", "getitem"]
    kind = draw(st.sampled_from(kinds))
    if r == 0 and kind not in ("unsqueeze", "reshape", "view", "flatten", "getitem"):
        kind = "unsqueeze"
    if kind == "slice":
        d = draw(st.integers(0, r - 1))
        start = draw(st.integers(-shape[d] - 1, shape[d])) if shape[d] else 0
        return ["slice", d, start, None, draw(st.integers(1, 3))]
    if kind == "transpose":
        return ["transpose", draw(st.integers(-r, r - 1)), draw(st.integers(-r, r - 1))]
    if kind == "permute":
        return ["permute", list(draw(st.permutations(range(r))))]
    if kind == "narrow":
        d = draw(st.integers(0, r - 1))
        start = draw(st.integers(0, shape[d]))
        return ["narrow", d, start, draw(st.integers(0, shape[d] - start))]
    if kind == "select":
        d = draw(st.integers(0, r - 1))
        if shape[d] == 0:
            return ["slice", d, 0, None, 1]
        return ["select", d, draw(st.integers(-shape[d], shape[d] - 1))]
    if kind == "unsqueeze":
        return ["unsqueeze", draw(st.integers(-r - 1, r))]
    if kind in ("reshape", "view"):
        n = math.prod(shape)
        options = [[n], [-1]]
        if r >= 2:
            i = draw(st.integers(0, r - 2))
            options.append(list(shape[:i]) + [shape[i] * shape[i + 1]] + list(shape[i + 2:]))
        for i, s in enumerate(shape):
            for f in (2, 3):
                if s and s % f == 0 and s > f:
                    options.append(list(shape[:i]) + [f, s // f] + list(shape[i + 1:]))
        return [kind, draw(st.sampled_from(options))]
    if kind == "flatten":
        if r <= 1:
            return ["flatten", 0, -1]
        a = draw(st.integers(0, r - 1))
        return ["flatten", a, draw(st.integers(a, r - 1))]
    if kind == "expand":
        new = [s if s != 1 else draw(st.sampled_from([1, 2, 3])) for s in shape]
        return ["expand", new]
    # getitem: ints, slices, None and Ellipsis
    idx = []
    d = 0
    for _ in range(draw(st.integers(1, max(r, 1)))):
        k = draw(st.integers(0, 5))
        if k == 0:
            idx.append(None)
        elif k == 1 and Ellipsis not in idx:
            idx.append(Ellipsis)
        elif d < r and k == 2 and shape[d]:
            idx.append(draw(st.integers(-shape[d], shape[d] - 1)))
            d += 1
        elif d < r:
            idx.append(slice(draw(st.sampled_from([None, 0, 1, -1, -2])), draw(st.sampled_from([None, -1, 2, 3])),
                             draw(st.sampled_from([None, 1, 2]))))
            d += 1
    return ["getitem", enc(tuple(idx))]


def _shape_after(base, dtype, steps):
    t = torch.empty(base, dtype=TORCH_DTYPE[dtype])
    for s in steps:
        t = apply_step(t, s)
    return tuple(t.shape)


@st.composite
def view_write_case(draw, long=False):
    base_shape = draw(shapes(min_rank=1, max_rank=4, allow_empty=False, big=False))
    dt = draw(dtypes())
    steps = []
    shape = base_shape
    for _ in range(draw(st.integers(1, 4))):
        step = draw(view_step(shape))
        try:
            shape = _shape_after(base_shape, dt, steps + [step])
        except Exception:  # noqa: BLE001 - a view PyTorch refuses: the case ends there
            steps.append(step)
            shape = None
            break
        steps.append(step)
    vals = draw(_values(dt, math.prod(base_shape), draw(value_mode())))
    target = tensor_arg(dt, base_shape, vals, steps)
    op = draw(st.sampled_from(sorted(C.WRITES)))
    vshape = shape if shape is not None else ()
    if op in ("add_", "mul_"):
        args = [target, draw(operand(draw(broadcast_to(vshape)), scalar_chance=2))]
    elif op == "copy_":
        src = draw(tensor(draw(broadcast_to(vshape))))
        args = [target, restrict_for(src, dt)]
    elif op == "fill_":
        args = [target, draw(scalar())]
    elif op == "zero_":
        args = [target]
    elif op == "clamp_":
        lo, hi = draw(scalar("int", "small")), draw(scalar("int", "small"))
        args = [target, lo, hi]
    else:  # setitem
        idx_step = draw(view_step(vshape)) if vshape else ["getitem", enc(Ellipsis)]
        idx = idx_step[1] if idx_step[0] == "getitem" else enc(draw(st.integers(-1, 0)) if vshape and vshape[0] else Ellipsis)
        try:
            t = torch.empty(vshape)[_decode_index(idx)]
            tshape = tuple(t.shape)
        except Exception:  # noqa: BLE001
            tshape = ()
        if draw(st.booleans()):
            value = draw(scalar())
        else:
            value = restrict_for(draw(tensor(draw(broadcast_to(tshape)))), dt)
        args = [target, idx, value]
    case = {"family": "view_write", "op": op, "args": args}
    if rare(draw, 4):
        case["read_first"] = True
    return case


def _decode_index(idx):
    from .case import decode
    return decode(idx, torch, "cpu")


# -- gradients -------------------------------------------------------------------------------
# Gradient chains stay inside each op's domain, away from its edges (where a rounding of the
# input decides between a number and NaN): a guard step maps the input first. Rows defined on
# the whole line go unguarded; rows this list does not know (new ones) get the unit guard.
WHOLE_LINE = {"abs", "add", "add_alpha", "asinh", "atan", "atan2", "ceil", "clamp", "clamp_max", "clamp_min",
              "copy", "copysign", "cos", "cosh", "deg2rad", "erf", "erfc", "exp", "exp2", "expm1", "floor",
              "fmax", "fmin", "frac", "gelu", "gelu_tanh", "heaviside", "hypot", "logaddexp", "logaddexp2",
              "maximum", "minimum", "mul", "nan_to_num", "neg", "nextafter", "rad2deg", "relu", "round", "sgn",
              "sigmoid", "sign", "silu", "sin", "sinc", "sinh", "square", "sub", "sub_alpha", "tanh", "trunc",
              "where"}
POSITIVE = {"log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "xlogy"}     # x * x + 0.5
AT_LEAST_1 = {"acosh"}                                                                    # x * x + 1.5
# anything else (asin, acos, atanh, logit, erfinv, tan, new rows): into (0.1, 0.9)


def guard_for(name):
    if name in WHOLE_LINE:
        return []
    if name in POSITIVE:
        return [{"op": "guard"}]
    if name in AT_LEAST_1:
        return [{"op": "guard_ge1"}]
    return [{"op": "guard_unit"}]
# table rows with a float result and a derivative in PyTorch (floor and friends: zero)
def _NO_GRAD(name, row):
    """torch.special's Cephes rows that PyTorch computes without a gradient."""
    return name.startswith("special_") and row.grad is None and name != "special_zeta"


# Steps whose result jumps (sign, floor, ...) would turn a last-ulp difference of an earlier step
# into a difference of 1: gradient chains leave them out (the forward fuzz has them).
DISCONTINUOUS = {"sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "heaviside", "div_trunc", "div_floor",
                 "remainder", "fmod", "copysign", "bfloat16_round"}   # (a bfloat16 ulp is 2^-8 of the value)
# (rows PyTorch does not differentiate, the Bessel functions and polynomials, have no gradient to chain)
GRAD_UNARY = sorted(n for n, r in OPS.items() if r.nin == 1 and r.rule in ("arith", "float")
                    and n not in ("fill",) and n not in DISCONTINUOUS and not _NO_GRAD(n, r))
GRAD_BINARY = sorted(n for n, r in OPS.items() if r.nin == 2 and r.rule in ("arith", "float") and n not in DISCONTINUOUS
                     and not _NO_GRAD(n, r))
DIVISORS = {"div", "div_trunc", "div_floor", "remainder", "fmod"}
GRAD_REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "max", "min", "logsumexp", "var", "std", "norm",
                   "softmax", "log_softmax", "linalg.vector_norm", "var_mean", "std_mean"]


def _moderate(shape, lo=-2.0, hi=2.0, away=0.0):
    """Moderate float32 values (for gradients): |v| in [away, hi] when away > 0."""
    n = math.prod(shape)
    lo, hi, away = (V.exact(v, "float32") for v in (lo, hi, away))
    el = st.floats(lo, hi, width=32)
    if away:
        el = st.tuples(st.floats(away, hi, width=32), st.booleans()).map(lambda t: -t[0] if t[1] else t[0])
    if n <= EXPLICIT_MAX:
        return st.lists(el, min_size=n, max_size=n).map(V.enc_values)
    return st.builds(lambda s: {"seed": s, "mode": "small"}, st.integers(0, 2 ** 31 - 1))


@st.composite
def const(draw, shape, away=0.0, lo=-2.0):
    base, steps = draw(layout(shape))
    return tensor_arg("float32", base, draw(_moderate(base, lo=lo, away=away)), steps)


def _shape_of(cur, step):
    from .runner import grad_step
    with torch.no_grad():
        return tuple(grad_step(torch, torch.zeros(cur), step, "cpu").shape)


@st.composite
def grad_step_for(draw, shape):
    r = len(shape)
    kind = draw(st.sampled_from(["unary"] * 4 + ["binary"] * 3 + ["reduction"] * 2 + ["matmul", "view", "view"]))
    if kind == "unary":
        name = draw(st.sampled_from(GRAD_UNARY))
        kw = {}
        if name == "copy":
            kw = {"form": "clone"}
        if name == "nan_to_num":
            kw = {"nan": 0.0}
        return guard_for(name) + [{"op": "ew:" + name, "kwargs": kw}]
    if kind == "binary":
        name = draw(st.sampled_from(GRAD_BINARY + ["where", "clamp", "add_alpha"]))
        other_shape = shape if draw(st.booleans()) else draw(broadcast_to(shape, mismatch=False))
        pos = draw(st.integers(0, 1))
        if name == "where":
            cond = draw(tensor(other_shape, dtype="bool"))
            return [{"op": "ew:where", "args": [cond, draw(const(other_shape))], "pos": draw(st.integers(1, 2))}]
        if name == "clamp":
            return [{"op": "ew:clamp", "args": [enc(-0.7), enc(0.9)]}]
        if name in ("add_alpha", "sub_alpha"):
            return [{"op": "ew:" + name, "args": [draw(const(other_shape))], "kwargs": {"alpha": 2}, "pos": pos}]
        steps = []
        needs_positive = (name in DIVISORS and pos == 1) or (name == "pow" and pos == 0) or (name == "xlogy" and pos == 1)
        if needs_positive:
            steps.append({"op": "guard"})           # positive divisor, base, log's argument
        elif name not in WHOLE_LINE and name not in DIVISORS and name not in ("pow", "xlogy"):
            steps += guard_for(name)
        if name in DIVISORS and pos == 0:
            other = draw(const(other_shape, away=0.5))
        elif name == "pow" and pos == 1 or name == "xlogy" and pos == 0:
            other = draw(const(other_shape, lo=0.3))   # a positive base, a positive log argument
        elif rare(draw, 4) and pos == 0:
            other = draw(scalar("float", "small"))   # x op scalar (PyTorch refuses most scalar op x)
            if name in DIVISORS and other == 0:
                other = 1.5
        else:
            other = draw(const(other_shape))
        return steps + [{"op": "ew:" + name, "args": [other], "pos": pos}]
    if kind == "reduction":
        name = draw(st.sampled_from(GRAD_REDUCTIONS))
        spec = C.REDUCTIONS[name]
        kw = {}
        kinds = [k for k in spec["dims"] if k != "none" or not spec.get("dim_required")]
        # PyTorch's backward of var/std (and var_mean, std_mean) with dim=() treats it as no
        # reduction while its forward reduces everything (wrong gradients); logsumexp(dim=())
        # fails: no empty dims here
        d = draw(dim_arg(r, kinds, empty=False)) if r else None
        if d is not None or spec.get("dim_required"):
            kw["dim"] = d if d is not None else 0
        if spec.get("keepdim") and "dim" in kw:
            kw["keepdim"] = draw(st.booleans())
        if name in ("std", "std_mean", "norm", "linalg.vector_norm") and _reduced_count(shape, kw.get("dim")) < 2:
            # sqrt at 0 (the std or 2-norm of one element): not differentiable there
            name, spec = "var", C.REDUCTIONS["var"]
        if spec.get("p"):
            kw["ord" if name == "linalg.vector_norm" else "p"] = enc(draw(st.sampled_from([1, 2, 3, "fro", float("inf")])) if name == "norm"
                                                                    else draw(st.sampled_from([1, 2, 3, float("inf")])))
        if spec.get("var"):
            kw["correction"] = draw(st.sampled_from([0, 1]))
        return [{"op": "red:" + name, "kwargs": kw}]
    if kind == "matmul" and r >= 1:
        k = shape[-1]
        n = draw(st.integers(1, 4))
        name = draw(st.sampled_from(["mm", "matmul", "linear", "mv", "@"])) if r == 2 else draw(st.sampled_from(["matmul", "linear", "@"]))
        if name == "mv":
            return [{"op": "mm:mv", "args": [draw(const((k,)))]}]
        if name == "linear":
            return [{"op": "mm:linear", "args": [draw(const((n, k)))] + ([draw(const((n,)))] if draw(st.booleans()) else [])}]
        if draw(st.booleans()) or r == 1:
            return [{"op": "mm:" + name, "args": [draw(const((k, n)))]}]
        return [{"op": "mm:" + name, "args": [draw(const((n, shape[-2])))], "pos": 1}]
    # a view
    st_ = draw(view_step(shape)) if r else ["unsqueeze", 0]
    return [{"op": "view:" + st_[0], "args": st_[1:]}]


def _reduced_count(shape, dim):
    if not shape:
        return 1
    if dim is None or dim == {"tuple": []}:
        return math.prod(shape)
    ds = dim["tuple"] if isinstance(dim, dict) else [dim]
    return math.prod(shape[d % len(shape)] for d in set(d % len(shape) for d in ds))


@st.composite
def grad_case(draw, long=False):
    shape = draw(shapes(min_rank=1, max_rank=3, big=False))
    base, steps = draw(layout(shape, allow_expand=False))
    leaf = tensor_arg("float32", base, draw(_moderate(base, away=1 / 64)), steps, grad=True)
    chain = []
    cur = shape
    for _ in range(draw(st.integers(1, 4))):
        new = draw(grad_step_for(cur))
        try:
            nxt = cur
            for s in new:
                nxt = _shape_of(nxt, s)
        except Exception:  # noqa: BLE001 - a step PyTorch refuses: the chain ends with it
            chain += new
            cur = None
            break
        chain += new
        cur = nxt
        if math.prod(cur) > 5000:
            break
    case = {"family": "grad", "op": "chain", "args": [leaf], "chain": chain}
    if cur is not None and draw(st.booleans()):
        case["final"] = {"grad_output": tensor_arg("float32", cur, draw(_moderate(cur)))}
    return case


FAMILIES = {
    "elementwise": elementwise_case,
    "operator": operator_case,
    "inplace": inplace_case,
    "reduction": reduction_case,
    "matmul": matmul_case,
    "view_write": view_write_case,
    "grad": grad_case,
}
