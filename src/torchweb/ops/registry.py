"""One definition per op. An op is registered once, where it is implemented, and everything a
user reaches comes from that entry: the `torch.*` function, the `Tensor.*` method, the in-place
`Tensor.*_` form, the `nn.functional.*` name, the docs (docs/ops.md, scripts/ops_doc.py) and the
lists the tests walk (tests/test_registry.py).

    @define("logsumexp", "reduction", out=True, doc="log(sum(exp(input), dim)), computed stably.")
    def logsumexp(input, dim, keepdim=False): ...

Elementwise ops need no decorator: each row of ops/elementwise/table.py becomes an entry
(ops/pointwise_api.py).
"""

import functools
import inspect
from dataclasses import dataclass, field

from .out_arg import with_out

KINDS = ("elementwise", "reduction", "linalg", "shape", "join", "activation", "creation",
         "comparison", "indexing", "loss", "normalization", "convolution", "pooling", "other")

# dtypes an op accepts (its input's, by name): `dtypes=` on define, else its kind's default.
# docs/ops.md lists them; tests/test_registry.py calls each op on every dtype to check the claim.
ALL_DTYPES = ("bool", "uint8", "int32", "int64", "float16", "float32")
NUMERIC = ALL_DTYPES[1:]
FLOATING = ("float16", "float32")
INTEGRAL = ALL_DTYPES[:4]
KIND_DTYPES = {"activation": FLOATING, "loss": FLOATING, "normalization": FLOATING, "convolution": FLOATING,
               "pooling": FLOATING, "linalg": NUMERIC}
DTYPE_SETS = {"all": ALL_DTYPES, "numeric": NUMERIC, "floating": FLOATING, "integral": INTEGRAL}
DEVICES = ("cpu", "webgpu")    # every op has a kernel (or composition) on both


@dataclass
class OpDef:
    name: str
    fn: object                      # torch.<name>(input, ...), PyTorch's signature
    kind: str
    method: bool = True             # Tensor.<name>(self, ...) is fn
    inplace: object = None          # Tensor.<name>_(self, ...), if PyTorch has it
    functional: bool = False        # also torch.nn.functional.<name>
    torch: bool = True              # also torch.<name> (False for nn.functional-only ops)
    aliases: tuple = ()             # other torch.* / Tensor.* names of the same op
    differentiable: bool = True     # has a backward (or is a composition of ops that do)
    extra: dict = field(default_factory=dict)
    dtypes: object = None           # input dtype names it accepts, or a DTYPE_SETS name (None: by kind)
    devices: tuple = DEVICES
    out: bool = False               # torch.<name> takes out= (ops/out_arg.py adds it where fn has none)
    _torch_fn: object = field(default=None, repr=False, compare=False)

    @property
    def doc(self):
        return (self.fn.__doc__ or "").strip()

    @property
    def torch_fn(self):
        """What torch.<name> (and nn.functional.<name>) is: fn, with out= added where the op
        takes it and fn has none (made once, so the name stays one object)."""
        if self._torch_fn is None:
            self._torch_fn = _public(self)
        return self._torch_fn

    @property
    def accepts(self):
        """The input dtype names this op accepts: its own claim or its kind's default."""
        if isinstance(self.dtypes, str):
            return DTYPE_SETS[self.dtypes]
        return tuple(self.dtypes) if self.dtypes is not None else KIND_DTYPES.get(self.kind, ALL_DTYPES)


OPS = {}

# Ops whose in-place form PyTorch also has as a torch.* function (torch.relu_(x), torch.abs_(x),
# ...): torch_names() adds torch.<name>_ from the entry's `inplace`. tests/test_registry.py checks
# that each is an op with an in-place form and that PyTorch has the name.
TORCH_INPLACE = frozenset((
    "abs", "acos", "acosh", "addmv", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "asin", "asinh",
    "atan", "atanh", "ceil", "clamp", "clamp_max", "clamp_min", "clip", "cos", "cosh", "deg2rad", "erf",
    "erfc", "exp", "exp2", "expm1", "fix", "floor", "frac", "gcd", "i0", "index_put", "lcm", "ldexp", "log",
    "log10", "log1p", "log2", "logit", "nan_to_num", "neg", "negative", "rad2deg", "reciprocal", "relu",
    "round", "rsqrt", "sigmoid", "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc", "xlogy"))


def register(name, fn, kind, key=None, **kw):
    """key: the entry's name in OPS where it differs from the op's (an nn.functional form whose
    signature differs from torch.<name>'s is "F.<name>")."""
    if kind not in KINDS:
        raise ValueError(f"unknown op kind {kind!r}")
    key = key or name
    if key in OPS:
        raise ValueError(f"op {key!r} defined twice")
    OPS[key] = OpDef(name, fn, kind, **kw)
    return fn


def define(name, kind, *, doc=None, **kw):
    """Decorator: register fn as op `name` (see OpDef for the keywords)."""
    def deco(fn):
        if doc:
            fn.__doc__ = doc
        if not fn.__doc__:
            raise ValueError(f"op {name!r} needs a docstring: help() and docs/ops.md show it")
        return register(name, fn, kind, **kw)
    return deco


def torch_names():
    """name -> function for the torch.* namespace."""
    out = {}
    for op in OPS.values():
        if op.torch:
            fn = op.torch_fn
            out[op.name] = fn
            for a in op.aliases:
                out[a] = fn
            if op.inplace is not None:
                for n in (op.name,) + op.aliases:
                    if n in TORCH_INPLACE:
                        out[n + "_"] = _torch_inplace(op.inplace)
    return out


_TORCH_INPLACE_FNS = {}


def _torch_inplace(method):
    """torch.<name>_: the Tensor.<name>_ method with its first argument called `input`, as
    PyTorch's schemas name it (made once per method, so the name stays one object)."""
    fn = _TORCH_INPLACE_FNS.get(method)
    if fn is None:
        @functools.wraps(method)
        def fn(input, *args, **kwargs):
            return method(input, *args, **kwargs)
        try:
            sig = inspect.signature(method)
            params = list(sig.parameters.values())
            fn.__signature__ = sig.replace(parameters=[params[0].replace(name="input")] + params[1:])
        except (TypeError, ValueError, IndexError):
            pass
        _TORCH_INPLACE_FNS[method] = fn
    return fn


def method_names():
    """name -> function for Tensor methods (in-place forms included)."""
    out = {}
    for op in OPS.values():
        if op.method:
            for n in (op.name,) + op.aliases:
                out[n] = op.fn
        if op.inplace is not None:
            for n in (op.name,) + op.aliases:
                out[n + "_"] = op.inplace
    return out


def functional_names():
    return {op.name: op.torch_fn for op in OPS.values() if op.functional}


def _public(op):
    """The function torch.<name> (and F.<name>) gives: op.fn, with out= added where PyTorch's
    has it and op.fn does not."""
    fn = op.fn
    code = getattr(fn, "__code__", None)
    if op.out and code is not None and "out" not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        fn = with_out(fn, op.name)
    return fn
