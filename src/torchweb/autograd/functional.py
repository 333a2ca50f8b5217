"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp on top of autograd.grad,
with PyTorch's signatures, argument checks and strict-mode errors.

Forward-mode products come from reverse mode by the double-vjp trick, as PyTorch's own
jvp/hvp do: with u a zero tensor that requires grad, g(u) = J^T u is linear in u, and the
gradient of <g(u), v> with respect to u is J v. vectorize=True gives the same numbers as
vectorize=False (PyTorch batches the products with vmap; here they run one by one).
"""

from .._is_tensor import is_tensor
from . import grad_mode
from .differentiate import grad
from .._creation import zeros_like
from ..ops.join import stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x, arg_name, fn_name):
    """(whether x was a tuple, x as a tuple of tensors), with PyTorch's TypeError otherwise."""
    was_tuple = isinstance(x, tuple)
    xs = x if was_tuple else (x,)
    for i, el in enumerate(xs):
        if not is_tensor(el):
            where = f"the value at index {i} has type {type(el)}" if was_tuple else \
                f"the given {arg_name} has type {type(el)}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                            f"Tensors but {where}.")
    return was_tuple, xs


def _unpack(res, to_unpack):
    """Undo _as_tuple on a result (to_unpack: one flag, or (outer, inner) for nested tuples)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
        return res
    return res if to_unpack else res[0]


def _prepare(inputs, create_graph, need_graph):
    """New tensor objects for the inputs (so that the user's function sees ours, not tensors
    it captured): differentiable views where the caller's graph must reach through them."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in inputs)


def _finish(tensors, create_graph):
    if tensors and isinstance(tensors[0], tuple):
        return tuple(_finish(t, create_graph) for t in tensors)
    return tensors if create_graph else tuple(t.detach() for t in tensors)


def _validate_v(v, other, other_is_tuple):
    if len(other) != len(v):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
                           if other_is_tuple else "The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


_STRICT = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent of "
                "the input. This is not allowed in strict mode. You should ensure that your function is "
                "thrice differentiable and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with "
                 "respect to input {i} is independent of the input. This is not allowed in strict mode. "
                 "You should ensure that your function is twice differentiable and that the jacobian "
                 "depends on the inputs (this would be violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs must "
                "be computed in a differentiable manner from the input when running in strict mode."),
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (None for every input where none does)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                create_graph=create_graph, allow_unused=True)


_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed "
            "in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs "
                  "when using the double backward trick to compute forward mode gradients. This is not "
                  "allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not "
                   "allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                         "double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _v_or_scalar(v, ref, ref_is_tuple, create_graph, fn_name, what):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, ref, ref_is_tuple)
        return v
    if len(ref) != 1 or ref[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if the {what} single Tensor with a "
                           "single element.")
    return None


def _single_output(outputs, outputs_tuple, fn_name):
    if outputs_tuple or not is_tensor(outputs[0]):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_or_scalar(v, outputs, outputs_tuple, create_graph, "vjp", "user-provided function returns a")
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-vjp trick."""
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_scalar(v, inputs, inputs_tuple, create_graph, "jvp",
                         "input to the user-provided function is a")
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        us = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, us, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_grad(grad_inputs, us, v, create_graph), outputs, strict, create_graph,
                             "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: for output i and input j, a tensor of shape
    outputs[i].shape + inputs[j].shape (nested tuples as PyTorch's). One backward per output
    element (strategy='forward-mode' gives the same numbers)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please '
                                      'either set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                               'are not supported together (yet). Please either set `strict=False` or '
                               '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                      "only implemented for `vectorize=True`.")
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    with grad_mode.enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        result = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.numel()):
                vj = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                               f"input {j}. This is not allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of "
                                           f"input {i}. This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            result.append(tuple(
                (stack(r, 0) if r else zeros_like(inp).reshape((0,) + tuple(inp.shape)))
                .reshape(tuple(out.shape) + tuple(inp.shape)) for r, inp in zip(rows, inputs)))
        return _unpack(_finish(tuple(result), create_graph), (outputs_tuple, inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs (nested tuples for several inputs)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*inp):
        out = func(*inp)
        out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if out_tuple or not is_tensor(out):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        j = jacobian(scalar, inp, create_graph=True)
        _check_requires_grad(j, "jacobian", strict)
        return j

    res = jacobian(jac, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (inputs_tuple, inputs_tuple))


def _first_derivative(func, inputs, v, create_graph, strict, fn_name):
    """The common start of vhp and hvp: (inputs, v, outputs, outputs_tuple, inputs_tuple, jac)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _v_or_scalar(v, inputs, inputs_tuple, create_graph, fn_name, "input to the user-provided function is a")
    outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    _single_output(outputs, outputs_tuple, fn_name)
    jac = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs, v, outputs, outputs_tuple, inputs_tuple, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func."""
    with grad_mode.enable_grad():
        inputs, v, outputs, outputs_tuple, inputs_tuple, jac = _first_derivative(
            func, inputs, v, create_graph, strict, "vhp")
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_grad(jac, inputs, v, create_graph), inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, by the double-vjp trick."""
    with grad_mode.enable_grad():
        inputs, v, outputs, outputs_tuple, inputs_tuple, jac = _first_derivative(
            func, inputs, v, create_graph, strict, "hvp")
        us = tuple(zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad(jac, inputs, us, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with grad_mode.set_grad_enabled(create_graph or grad_mode.is_grad_enabled()):
        res = _fill_in_zeros(_grad(double_back, us, v, create_graph), inputs, strict, create_graph,
                             "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(res, create_graph), inputs_tuple))
