"""torch.autograd.backward and torch.autograd.grad: the engine run from outputs, with
PyTorch's checks and defaults for the gradients given."""

from .._creation import full, ones_like, zeros_like
from .._is_tensor import is_tensor
from ..ops.join import stack
from . import engine


def _make_grads(outputs, grads):
    out = []
    for o, g in zip(outputs, grads):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {o.dtype}")
            g = ones_like(o)
        elif is_tensor(g):
            if g.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {g.shape} and "
                                   f"output[0] has a shape of {o.shape}.")
        else:
            g = full(o.shape, g, dtype=o.dtype, device=o.device)
        out.append(g)
    return out


def _as_list(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None,
             grad_variables=None):
    if grad_variables is not None and grad_tensors is None:
        grad_tensors = grad_variables
    if retain_graph is None:
        retain_graph = create_graph
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    for t in tensors:
        if not t.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    grads = _make_grads(tensors, grads)
    if inputs is None:
        engine.run_backward(tensors, grads, bool(retain_graph), create_graph=create_graph)
        return
    inputs = _as_list(inputs)
    if not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    capture, keys = _capture_slots(inputs)
    engine.run_backward(tensors, grads, bool(retain_graph), capture=capture, accumulate=False,
                        create_graph=create_graph)
    for t, (key, _node) in zip(inputs, keys):  # only these accumulate, leaves or not
        if capture[key] is not None:
            engine.accumulate_grad(t, capture[key])


def _capture_slots(inputs):
    """The engine's capture slots {(node id, output nr): None} for inputs, and each one's
    (key, node): holding the node keeps a leaf's AccumulateGrad, and so its id, alive."""
    capture, keys = {}, []
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        node = t.grad_fn if t.grad_fn is not None else t._accumulator()
        key = (id(node), t._output_nr if t.grad_fn is not None else 0)
        capture[key] = None
        keys.append((key, node))
    return capture, keys


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    outputs = _as_list(outputs)
    inputs_l = _as_list(inputs)
    grads = _make_grads(outputs, _as_list(grad_outputs) or [None] * len(outputs))
    for o in outputs:
        if not o.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    capture, keys = _capture_slots(inputs_l)
    engine.run_backward(outputs, grads, bool(retain_graph), capture=capture, accumulate=False,
                        create_graph=create_graph)
    result = []
    for i, (key, _node) in enumerate(keys):
        g = capture[key]
        if g is None and not allow_unused and not materialize_grads:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used "
                               "in the graph. Set allow_unused=True if this is the desired behavior.")
        if g is None and materialize_grads:
            g = zeros_like(inputs_l[i])
        result.append(g)
    return tuple(result)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """is_grads_batched: grad_outputs carry a leading batch dim; one backward per entry (PyTorch
    vmaps it), the gradients stacked."""
    outs = _as_list(outputs)
    gos = _as_list(grad_outputs)
    if gos is None or any(g is None for g in gos):
        raise RuntimeError("is_grads_batched=True requires grad_outputs")
    n = gos[0].shape[0]
    per = [grad(outs, inputs, [g[i] for g in gos], retain_graph=True, create_graph=create_graph,
                allow_unused=allow_unused, materialize_grads=materialize_grads) for i in range(n)]
    return tuple(None if per[0][k] is None else stack([p[k] for p in per])
                 for k in range(len(per[0])))
