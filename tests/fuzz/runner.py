"""Running a case with PyTorch and with torchweb on a device, and judging the difference.

run_case(case, device) -> Outcome: "ok", "deviation" (a documented one: counted, not a
failure) or "fail" with a kind (for grouping), and a readable message showing the case.

When PyTorch raises, torchweb must raise an exception of the same built-in type; the torchweb
call and the read-back of its results both count (the webgpu device reports some errors, such
as integer division by zero, at the next read-back). Every tensor argument's base is compared
after the call too: in-place ops must write through to it, and other ops must leave it alone.
"""

import re
import warnings

import numpy as np
import torch

import torchweb
from . import catalogue as C
from . import tolerances as T
from .case import Built, apply_step, decode, describe, dumps
from .compare import SIGNED_ZERO_OPS, compare, read_ours, read_torch

INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1


class Outcome:
    def __init__(self, status, kind="", message="", deviation=""):
        self.status, self.kind, self.message, self.deviation = status, kind, message, deviation

    @property
    def failed(self):
        return self.status == "fail"

    def __repr__(self):
        return f"Outcome({self.status}, {self.kind or self.deviation})"


OK = Outcome("ok")


# -- exceptions -------------------------------------------------------------------------------
def builtin_type(e):
    """The first built-in exception class of e's type (PyTorch raises subclasses of its own)."""
    for k in type(e).__mro__:
        if k.__module__ == "builtins":
            return k
    return Exception


def is_int64_range_error(e):
    cls = getattr(torchweb.webgpu, "Int64RangeError", None)
    if cls is not None and isinstance(e, cls):
        return True
    return isinstance(e, RuntimeError) and "int64" in str(e)


def int64_out_of_range(reads):
    """Whether an int64 result holds a value outside int32 (deviation 1 on webgpu)."""
    if isinstance(reads, list):
        return any(int64_out_of_range(r) for r in reads)
    if isinstance(reads, tuple) or reads is None:
        return False
    return reads.dtype == "int64" and reads.values.size and (
        reads.values.min() < INT32_MIN or reads.values.max() > INT32_MAX)


def _err(e):
    return f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"


def _tag(e):
    """The gist of an exception's message, for grouping failures: its first words without
    numbers, quotes and shapes."""
    words = re.sub(r"\[[^\]]*\]|'[^']*'|\"[^\"]*\"|\([^)]*\)|-?\d+", "", str(e).split("\n")[0]).split()
    return " ".join(words[:6]).rstrip(":,.")


# -- the two sides ------------------------------------------------------------------------------
class Side:
    """One library's run: its result (or exception) and the reads of the result and bases."""

    def __init__(self):
        self.exc = None
        self.result = None
        self.read = None
        self.bases = []
        self.identity = None      # in-place: whether the result is the first argument


def _run_side(m, device, case, fn, read):
    s = Side()
    built = Built(m, device)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args = [built(a) for a in case.get("args", [])]
            kwargs = {k: built(v) for k, v in case.get("kwargs", {}).items()}
            if case.get("read_first") and args:
                read(args[0])
            # the arguments as they were before the call (in-place ops change them): what the
            # tolerances are worked out from
            s.args_before = [a.detach().clone() if m is torch and isinstance(a, torch.Tensor) else a for a in args]
            s.result = fn(m, *args, **kwargs)
            s.identity = bool(args) and s.result is args[0]
            s.read = read(s.result)
            s.bases = [read(b) for b in built.bases]
            s.args = args
            s.kwargs = kwargs
    except Exception as e:  # noqa: BLE001 - every exception is part of the comparison
        s.exc = e
    return s


def call_for(case):
    fam, op = case["family"], case["op"]
    if fam == "elementwise":
        return C.elementwise_call(op)
    if fam == "operator":
        return C.operator_call(op)
    if fam == "inplace":
        return C.inplace_call(op)
    if fam == "reduction":
        return C.reduction_call(op, case.get("form", "fn"))
    if fam == "matmul":
        return C.MATMUL[op]
    if fam == "view_write":
        return C.WRITES[op]
    raise ValueError(f"unknown family {fam}")


def tolerance(case, side, exp):
    fam, op = case["family"], case["op"]
    args = side.args_before
    if fam == "reduction":
        return T.reduction(op, args[0], side.kwargs, exp)
    if fam == "matmul":
        return T.matmul(op, args, side.kwargs, exp)
    return T.pointwise(op, args, side.kwargs, exp)


def run_case(case, device):
    if case["family"] == "grad":
        return run_grad(case, device)
    fn = call_for(case)
    theirs = _run_side(torch, "cpu", case, fn, read_torch)
    ours = _run_side(torchweb, device, case, fn, read_ours)
    return judge(case, device, theirs, ours)


def judge(case, device, theirs, ours, tol_fn=None):
    if theirs.exc is not None:
        want = builtin_type(theirs.exc)
        if ours.exc is None:
            return _fail(case, device, f"no-exception:{_tag(theirs.exc)}",
                         f"PyTorch raises {_err(theirs.exc)}\ntorchweb returns {_brief(ours.read)}")
        if not isinstance(ours.exc, want):
            return _fail(case, device, f"exception-type:{want.__name__}->{type(ours.exc).__name__}:{_tag(theirs.exc)}",
                         f"PyTorch raises {_err(theirs.exc)}\ntorchweb raises {_err(ours.exc)}")
        return OK
    out_of_range = device == "webgpu" and (int64_out_of_range(theirs.read) or int64_out_of_range(theirs.bases))
    if ours.exc is not None:
        if out_of_range and is_int64_range_error(ours.exc):
            return Outcome("deviation", deviation="int64-range")
        if _empty_mixed_matmul(case, theirs) and isinstance(ours.exc, RuntimeError):
            return Outcome("deviation", deviation="empty-skips-dtype-check")
        if _empty_result(theirs.read) and isinstance(ours.exc, (NotImplementedError, RuntimeError)) \
                and "not implemented for" in str(ours.exc):
            return Outcome("deviation", deviation="empty-skips-dtype-check")
        return _fail(case, device, f"unexpected-exception:{type(ours.exc).__name__}:{_tag(ours.exc)}",
                     f"PyTorch returns {_brief(theirs.read)}\ntorchweb raises {_err(ours.exc)}")
    if out_of_range:
        return _fail(case, device, "int64-wrap",
                     "PyTorch's int64 result leaves int32's range: the webgpu device must raise "
                     f"Int64RangeError, not return a number\nPyTorch:  {_brief(theirs.read)}\ntorchweb: {_brief(ours.read)}")
    problems = []
    if theirs.identity and not ours.identity:
        problems.append(("identity", "PyTorch returns its first argument (in place), torchweb another object"))
    tol = tol_fn(theirs.read) if tol_fn else tolerance(case, theirs, theirs.read)
    signed = case["op"] in SIGNED_ZERO_OPS or case.get("kwargs", {}).get("form") == "clone"
    problems += compare(ours.read, theirs.read, tol, signed)
    for i, (g, e) in enumerate(zip(ours.bases, theirs.bases)):
        # what the call left in each tensor argument's storage: written through views by the
        # in-place forms, untouched by the others
        problems += compare(g, e, tolerance(case, theirs, e) if case["family"] in ("inplace", "view_write") else T.EXACT,
                            signed, f"arg{i}'s base after the call")
    if problems:
        kind = problems[0][0]
        return _fail(case, device, kind, "\n".join(p[1] for p in problems))
    dev = _deviations(tol)
    return Outcome("deviation", deviation=dev) if dev else OK


def _deviations(tol):
    if isinstance(tol, (list, tuple)):
        return next((d for d in map(_deviations, tol) if d), "")
    return getattr(tol, "deviation", "")


def _empty_result(read):
    if isinstance(read, list):
        return bool(read) and all(_empty_result(r) for r in read)
    return not isinstance(read, tuple) and read is not None and read.values.size == 0


def _empty_mixed_matmul(case, theirs):
    """Deviation 4: with nothing to compute, PyTorch skips some dtype checks: matmul of two
    dtypes with an empty operand returns zeros, softmax of an empty integer tensor returns it;
    torchweb refuses those dtypes always (the same error as for non-empty tensors)."""
    if case["family"] != "matmul" or not getattr(theirs, "args", None):
        return False
    ts = [a for a in theirs.args if isinstance(a, torch.Tensor)]
    return len({t.dtype for t in ts}) > 1 and any(t.numel() == 0 for t in ts)


def _brief(read):
    if read is None:
        return "None"
    if isinstance(read, list):
        return "(" + ", ".join(_brief(r) for r in read) + ")"
    if isinstance(read, tuple):
        return repr(read[1])
    return repr(read)


def _fail(case, device, kind, text):
    sig = f"{case['family']}:{case['op']}:{kind}"
    msg = (f"torchweb differs from PyTorch on {device}: {sig}\n{describe(case)}\n{text}\n"
           f"case: {dumps(case)}")
    return Outcome("fail", sig, msg)


# -- gradients -------------------------------------------------------------------------------
def grad_step(m, x, step, device):
    kind = step["op"]
    args = [decode(a, m, device) for a in step.get("args", [])]
    kwargs = {k: decode(v, m, device) for k, v in step.get("kwargs", {}).items()}
    args.insert(step.get("pos", 0), x)
    if kind == "guard":                      # x * x + 0.5: positive, smooth
        return args[0] * args[0] + 0.5
    if kind == "guard_ge1":                  # x * x + 1.5: past 1
        return args[0] * args[0] + 1.5
    if kind == "guard_unit":                 # into (0.1, 0.9)
        return m.sigmoid(args[0]) * 0.8 + 0.1
    if kind.startswith("view:"):
        return apply_step(x, [kind[5:], *step.get("args", [])])
    fam, name = kind.split(":", 1)
    if fam == "ew":
        r = C.elementwise_call(name)(m, *args, **kwargs)
    elif fam == "red":
        r = C.reduction_call(name)(m, *args, **kwargs)
    elif fam == "mm":
        r = C.MATMUL[name](m, *args, **kwargs)
    else:
        raise ValueError(kind)
    return r[0] if isinstance(r, tuple) else r


def _grad_side(m, device, case, read):
    s = Side()
    built = Built(m, device)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spec = dict(case["args"][0]["tensor"])
            spec.pop("grad", None)
            x = built({"tensor": spec}).detach().requires_grad_(True)   # a leaf, maybe strided
            leaf = x
            for step in case["chain"]:
                x = grad_step(m, x, step, device)
            final = case.get("final", "sum")
            if final == "sum":
                x.sum().backward()
            else:
                x.backward(built(final["grad_output"]))
            s.result = x
            g = leaf.grad
            s.read = [read(x.detach()), ("scalar", bool(x.requires_grad)), ("scalar", g is None),
                      read(g) if g is not None else ("scalar", None)]
            s.finite = bool(torch.isfinite(x.detach()).all()) if m is torch else True
    except Exception as e:  # noqa: BLE001
        s.exc = e
    return s


def run_grad(case, device):
    theirs = _grad_side(torch, "cpu", case, read_torch)
    ours = _grad_side(torchweb, device, case, read_ours)
    if theirs.exc is None and not theirs.finite and ours.exc is None and isinstance(ours.read, list):
        # a non-finite forward result: its gradients mean nothing; compare the forward only
        theirs.read[3] = ours.read[3] = ("scalar", "not compared: non-finite forward result")
    return judge(case, device, theirs, ours, tol_fn=T.chain)


def replay(case, devices=("cpu", "webgpu")):
    return {d: run_case(case, d) for d in devices}


__all__ = ["run_case", "Outcome", "replay"]
np.seterr(all="ignore")
