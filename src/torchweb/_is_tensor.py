"""is_tensor, in a leaf module so that every layer (autograd included, which Tensor itself
imports) can use the one definition without an import cycle."""


def is_tensor(obj):
    """torch.is_tensor: whether obj is a torchweb Tensor (or a subclass, e.g. Parameter)."""
    return getattr(type(obj), "_is_torchweb_tensor", False)
