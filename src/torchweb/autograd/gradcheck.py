"""torch.autograd.gradcheck / gradgradcheck: gradients from the backward rules compared with
central finite differences, with PyTorch's signatures and GradcheckError.

torchweb computes in float32 (WebGPU has no float64), so the defaults suit float32 where
PyTorch's (eps=1e-6, atol=1e-5, rtol=1e-3) suit float64: eps=1e-3, atol=1e-3, rtol=1e-2.
The numerical derivative divides by the perturbation the input really got (x + eps rounded to
float32 minus x - eps rounded), not by 2 * eps, which keeps float32 rounding out of it.
The whole Jacobian is compared (fast_mode gives the same verdict); the vmap-based checks
(check_batched_grad, check_batched_forward_grad) are not run.
"""

import itertools

from .._is_tensor import is_tensor
from . import grad_mode
from .differentiate import grad
from .._creation import randn_like, tensor, zeros_like
from .functional import jvp

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _float_outputs(outputs):
    return [o for o in outputs if is_tensor(o) and o.dtype.is_floating_point]


def _check_inputs(inputs):
    found = False
    for i, t in enumerate(inputs):
        if is_tensor(t) and t.requires_grad:
            if not all(st > 0 or sz <= 1 for st, sz in zip(t.stride(), t.shape)):
                raise RuntimeError(
                    f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that "
                    "are non-overlapping to be able to compute the numerical gradients correctly. You "
                    "should call .contiguous on the input before passing it to gradcheck.")
            found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of "
                         "them have requires_grad=True.")


def _values(outputs):
    """Each float output's elements as a flat list of Python floats."""
    out = []
    for o in outputs:
        v = o.detach().reshape(-1).tolist()
        out.append(v)
    return out


def _numerical(func, inputs, diff, n_out, eps):
    """numerical[i][j]: rows (one per element of input i) of d output j / d input."""
    result = [[[] for _ in range(n_out)] for _ in diff]
    for a, i in enumerate(diff):
        x = inputs[i]
        for idx in itertools.product(*[range(s) for s in x.shape]):
            # (in place, as PyTorch: func sees its inputs; the version bumps come after the
            # analytical Jacobian's backward passes)
            with grad_mode.no_grad():
                orig = x[idx].item()
                x[idx] = orig - eps
                lo = x[idx].item()
            minus = _values(_float_outputs(_as_tuple(func(*inputs))))
            with grad_mode.no_grad():
                x[idx] = orig + eps
                hi = x[idx].item()
            plus = _values(_float_outputs(_as_tuple(func(*inputs))))
            with grad_mode.no_grad():
                x[idx] = orig
            for j in range(n_out):
                result[a][j].append([(p - m) / (hi - lo) for p, m in zip(plus[j], minus[j])])
    return result


def _analytical(outputs, inputs, diff):
    """analytical[i][j]: the same layout from the backward rules (one backward per output
    element)."""
    result = [[[] for _ in outputs] for _ in diff]
    targets = [inputs[i] for i in diff]
    for j, o in enumerate(outputs):
        cols = []   # per output element: the gradient of every input, flattened
        flat = o.reshape(-1)
        for k in range(o.numel()):
            if not o.requires_grad:
                cols.append([None] * len(diff))
                continue
            gs = grad(flat[k], targets, retain_graph=True, allow_unused=True)
            cols.append([None if g is None else g.reshape(-1).tolist() for g in gs])
        for a, i in enumerate(diff):
            n = inputs[i].numel()
            result[a][j] = [[0.0 if c[a] is None else c[a][e] for c in cols] for e in range(n)]
    return result


def _close(an, num, atol, rtol):
    for ra, rn in zip(an, num):
        for a, n in zip(ra, rn):
            if not abs(a - n) <= atol + rtol * abs(n):
                return False
    return True


def _matrix(rows):
    return tensor(rows, device="cpu") if rows and rows[0] else tensor(rows, device="cpu").reshape(len(rows), 0)


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(func, inputs, *, eps=1e-3, atol=1e-3, rtol=1e-2, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """True if the Jacobian of func at inputs from the backward rules matches central finite
    differences within atol + rtol * |numerical| (float32 defaults: see the module's doc).
    A mismatch raises GradcheckError naming the output and input, or, with
    raise_exception=False, returns False."""
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    diff = [i for i, t in enumerate(inputs) if is_tensor(t) and t.requires_grad]
    with grad_mode.enable_grad():
        outputs = _float_outputs(_as_tuple(func(*inputs)))
    if not any(o.requires_grad for o in outputs):
        num = _numerical(func, inputs, diff, len(outputs), eps)
        if any(v != 0 for per_in in num for per_out in per_in for row in per_out for v in row):
            return _fail("Numerical gradient for function expected to be zero", raise_exception)
        return True
    an = _analytical(outputs, inputs, diff) if check_backward_ad else None
    fw = _forward_columns(func, inputs, diff, len(outputs)) if check_forward_ad else None
    num = _numerical(func, inputs, diff, len(outputs), eps)
    if check_backward_ad:
        for a, i in enumerate(diff):
            for j in range(len(outputs)):
                if check_grad_dtypes and outputs[j].dtype is not inputs[i].dtype:
                    return _fail("Gradient has dtype mismatch", raise_exception)
                if not _close(an[a][j], num[a][j], atol, rtol):
                    return _fail(f"Jacobian mismatch for output {j:d} with respect to input {i:d},\n"
                                 f"numerical:{_matrix(num[a][j])}\nanalytical:{_matrix(an[a][j])}\n",
                                 raise_exception)
    if check_forward_ad:
        for a, i in enumerate(diff):
            for j in range(len(outputs)):
                if not _close(fw[a][j], num[a][j], atol, rtol):
                    return _fail(f"Jacobian computed with forward mode mismatch for output {j:d} with respect "
                                 f"to input {i:d},\nnumerical:{_matrix(num[a][j])}\n"
                                 f"analytical:{_matrix(fw[a][j])}\n", raise_exception)
    return True


def _forward_columns(func, inputs, diff, n_out):
    """The Jacobian from Jacobian-vector products (autograd.functional.jvp: the double-vjp
    trick), one per input element, in _numerical's layout."""
    result = [[[] for _ in range(n_out)] for _ in diff]
    for a, i in enumerate(diff):
        x = inputs[i]
        for idx in itertools.product(*[range(s) for s in x.shape]):
            vs = tuple(zeros_like(t) for t in (inputs[k] for k in diff))
            with grad_mode.no_grad():
                vs[a][idx] = 1.0

            def f(*d, i_=diff):
                args = list(inputs)
                for k, t in zip(i_, d):
                    args[k] = t
                return tuple(_float_outputs(_as_tuple(func(*args))))
            _, jv = jvp(f, tuple(inputs[k] for k in diff), vs)
            for j in range(n_out):
                result[a][j].append(jv[j].reshape(-1).tolist())
    return result


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-3, atol=1e-3, rtol=1e-2,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the function (inputs, grad_outputs) -> the gradients of func's outputs
    (weighted by grad_outputs, random normal ones by default) with create_graph=True: second
    derivatives against finite differences of the first."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        with grad_mode.no_grad():
            outs = _float_outputs(_as_tuple(func(*inputs)))
        grad_outputs = tuple(randn_like(o).requires_grad_() for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)
    diff_in = {i for i, t in enumerate(inputs) if is_tensor(t) and t.requires_grad}

    def first_derivatives(*args):
        xs, gos = args[:-n], args[-n:]
        pairs = [(o, g) for o, g in zip(_float_outputs(_as_tuple(func(*xs))), gos) if o.requires_grad]
        targets = tuple(x for i, x in enumerate(xs) if i in diff_in)
        gs = grad([o for o, _ in pairs], targets, [g for _, g in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivatives, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_grad_dtypes=check_grad_dtypes,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
