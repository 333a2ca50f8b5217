"""Operands as the backend primitives read them."""

from . import elementwise as E
from .dispatch import empty


def contiguous_operand(t):
    """t itself when contiguous, else a contiguous copy of it (no autograd): the layout a
    backend primitive that walks its operand row-major reads."""
    return t if t.is_contiguous() else E.copy_into(empty(t.shape, t.dtype, t.device), t)
