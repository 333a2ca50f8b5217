"""repr(tensor) the way PyTorch prints it (torch/_tensor_str.py's rules, on Python lists)."""

import math

from . import _dtype as D
from ._device import get_default_device
from .ops.join import cat
from .ops import shape as S


class _Opts:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _Opts()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            setattr(PRINT_OPTS, k, v)
    PRINT_OPTS.sci_mode = sci_mode


def _flatten(x, out):
    if isinstance(x, list):
        for v in x:
            _flatten(v, out)
    else:
        out.append(x)
    return out


class _Formatter:
    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(str(v)))
        else:
            finite = [v for v in values if math.isfinite(v) and v != 0]
            if not finite:
                return
            absv = [abs(v) for v in finite]
            lo, hi = min(absv), max(absv)
            self.int_mode = all(v == math.ceil(v) for v in finite)
            # sci_mode is decided first (a forced sci_mode changes the widths too), as PyTorch
            auto_sci = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
            self.sci_mode = auto_sci if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
            if self.sci_mode:
                self.max_width = max(len(f"{v:.{p}e}") for v in finite)
            elif self.int_mode:
                self.max_width = max(len(f"{v:.0f}") + 1 for v in finite)
            else:
                self.max_width = max(len(f"{v:.{p}f}") for v in finite)

    def format(self, v):
        p = PRINT_OPTS.precision
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if math.isfinite(v):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return (self.max_width - len(s)) * " " + s


class _ComplexFormatter:
    """PyTorch's two formatters of a complex tensor: one over the real parts, one over the
    imaginary parts (whose padding is stripped), joined as a+bj."""

    def __init__(self, values):
        self.re = _Formatter([v.real for v in values], True)
        self.im = _Formatter([v.imag for v in values], True)
        self.max_width = self.re.max_width + self.im.max_width + 1

    def format(self, v):
        im = (self.im.format(v.imag) + "j").lstrip()
        return self.re.format(v.real) + (im if im[0] in "+-" else "+" + im)


def _vector_str(x, n, indent, summarize, fmt):
    """x: the values shown (only the edges of a summarized dim of original length n)."""
    element_length = fmt.max_width + 2
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and n > 2 * e:
        data = [fmt.format(v) for v in x[:e]] + [" ..."] + [fmt.format(v) for v in x[-e:]]
    else:
        data = [fmt.format(v) for v in x]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(x, shape, indent, summarize, fmt):
    ndim = len(shape)
    if ndim == 0:
        return fmt.format(x)
    if ndim == 1:
        return _vector_str(x, shape[0], indent, summarize, fmt)
    e = PRINT_OPTS.edgeitems
    rest = shape[1:]
    if summarize and shape[0] > 2 * e:
        slices = ([_tensor_str(v, rest, indent + 1, summarize, fmt) for v in x[:e]] + ["..."]
                  + [_tensor_str(v, rest, indent + 1, summarize, fmt) for v in x[-e:]])
    else:
        slices = [_tensor_str(v, rest, indent + 1, summarize, fmt) for v in x]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(s, suffixes, indent):
    parts = [s]
    last = len(s) - s.rfind("\n") + 1
    for suf in suffixes:
        if last + len(suf) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suf)
            last = indent + len(suf)
        else:
            parts.append(", " + suf)
            last += len(suf) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, prefix="tensor("):
    indent = len(prefix)
    suffixes = []
    if t.device.type != get_default_device().type:
        suffixes.append(f"device='{t.device}'")
    if t.numel() == 0:
        body = "[]"
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype is not D.get_default_dtype():  # no values to tell int64 by: PyTorch names it
            suffixes.append(f"dtype={t.dtype}")
    else:
        if t.dtype not in (D.get_default_dtype(), D.int64, D.bool, D.complex64):
            suffixes.append(f"dtype={t.dtype}")
        summarize = t.numel() > PRINT_OPTS.threshold
        src = t.detach()
        if summarize:
            edges = getattr(src, "_edges", None)   # (a float64 tensor: its own, on the host)
            src = edges(PRINT_OPTS.edgeitems) if edges else _edge_view(src, PRINT_OPTS.edgeitems)
        values = src.tolist()
        flat = _flatten(values, []) if t.dim() else [values]
        fmt = _ComplexFormatter(flat) if t.dtype.is_complex else _Formatter(flat, t.dtype.is_floating_point)
        body = _tensor_str(values, tuple(t.shape), indent, summarize, fmt)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + _add_suffixes(body, suffixes, indent)


def _edge_view(t, edge):
    """Only the printed corners of a big tensor, so that printing reads back little."""
    for d in range(t.dim()):
        n = t.shape[d]
        if n > 2 * edge:
            t = cat([S.narrow(t, d, 0, edge), S.narrow(t, d, n - edge, edge)], d)
    return t
