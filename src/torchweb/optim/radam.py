"""torch.optim.RAdam (defined beside NAdam in nadam.py: the two share their Adam moments)."""

from .nadam import RAdam

__all__ = ["RAdam"]
