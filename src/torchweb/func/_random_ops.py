"""Random ops under vmap, by the level's randomness= rule (PyTorch's): 'error' raises at the
first draw; 'different' gives every entry its own numbers (one batched draw where the op has a
rule, else one draw per entry); 'same' gives every entry the numbers one unbatched call draws
(factories called once, ops on batched tensors run per entry from the same generator state)."""

import math

import torchweb

from ._batched import active_levels, wrap
from ._randomness import RandomnessScope

# torch.* factories routed even where the registry does not define them
FACTORIES = frozenset(("rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like",
                       "normal", "bernoulli", "multinomial", "poisson"))
RANDOM = FACTORIES | frozenset((
    "dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "dropout1d", "dropout2d", "dropout3d", "feature_dropout", "feature_dropout_", "rrelu", "rrelu_",
    "gumbel_softmax", "bernoulli_", "uniform_", "normal_", "random_", "cauchy_", "exponential_", "geometric_",
    "log_normal_"))


def mode_of(levels):
    """'error' where any of the levels says so, else the innermost level's mode."""
    return "error" if any(lvl.randomness == "error" for lvl in levels) else levels[-1].randomness


def unbatched(orig, args, kwargs):
    """A random op with no batched argument, called while vmaps run."""
    levels = active_levels()
    if not levels:
        return orig(*args, **kwargs)
    if mode_of(levels) == "error" or getattr(orig, "__name__", "").endswith("_"):
        with RandomnessScope("error" if mode_of(levels) == "error" else "different"):
            return orig(*args, **kwargs)
    return _draw(orig, args, kwargs, levels)


def _draw(orig, args, kwargs, levels):
    """One draw per entry of the 'different' levels (all of their entries), one for 'same' ones."""
    different = [lvl for lvl in levels if lvl.randomness == "different"]
    sizes = tuple(lvl.size for lvl in different)
    with RandomnessScope("different"):
        draws = [orig(*args, **kwargs) for _ in range(math.prod(sizes))]
    p = torchweb.stack(draws, 0)
    p = p.reshape(sizes + tuple(p.shape[1:]))
    for lvl in different:            # outermost first: the innermost level's wrapper is outside
        p = wrap(p, 0, lvl.id)
    return p
