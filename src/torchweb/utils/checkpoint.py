"""torch.utils.checkpoint: activation checkpointing trades memory for recomputation; computing
the function once and keeping its graph gives the same values and gradients, which is what it
means here (models such as torchvision's DenseNet import it and call it when asked to save memory)."""

import warnings


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    children = list(functions.children()) if hasattr(functions, "children") else list(functions)
    for f in children:
        input = f(input)
    return input


def set_checkpoint_debug_enabled(enabled):
    warnings.warn("torch.utils.checkpoint debug mode has no effect: nothing is recomputed")
