"""torch.cond and torch.while_loop: PyTorch's control-flow operators for code that torch.compile
traces. Run eagerly they are a Python `if` and `while`, which is their meaning (torchweb's
torch.compile captures GPU work, so the branch taken is part of what a replay guards)."""

from ._is_tensor import is_tensor


def _truth(pred, what):
    if is_tensor(pred):
        if pred.numel() != 1:
            raise RuntimeError(f"{what}: expected a predicate with one element, got shape {list(pred.shape)}")
        return bool(pred.item())
    if isinstance(pred, (bool, int, float)):
        return bool(pred)
    raise RuntimeError(f"{what}: expected pred to be bool or a one-element tensor, got {type(pred).__name__}")


def cond(pred, true_fn, false_fn, operands=()):
    """cond(pred, true_fn, false_fn, operands=()) -> true_fn(*operands) if pred else false_fn(*operands)."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple, got {type(operands).__name__}")
    fn = true_fn if _truth(pred, "torch.cond") else false_fn
    return fn(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """while_loop(cond_fn, body_fn, carried_inputs): carried = body_fn(*carried) while
    cond_fn(*carried); returns the final carried values (a tuple)."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got {type(carried_inputs).__name__}")
    carried = tuple(carried_inputs)
    while _truth(cond_fn(*carried), "torch.while_loop"):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(carried) != len(carried_inputs):
            raise RuntimeError(f"body_fn must return as many values as carried_inputs ({len(carried_inputs)}), "
                               f"got {len(carried)}")
    return carried
