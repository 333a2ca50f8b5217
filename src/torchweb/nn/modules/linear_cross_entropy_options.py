"""LinearCrossEntropyOptions: the chunking configuration of F.linear_cross_entropy (PyTorch
2.13). torchweb accepts it and computes the reference path (linear then cross_entropy), which
is what PyTorch does for configurations its chunked path does not cover."""

import dataclasses
from ... import _dtype as D

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's fields: allow_retain_graph, batch_chunk_size, chunking_method ('auto',
    'aspect_ratio', 'aspect_ratio:N' or None), acc_policy ('accurate', 'balanced', 'compact',
    'auto'), acc_dtype."""

    allow_retain_graph: bool = False
    batch_chunk_size: int = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        # PyTorch's checks and messages
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in (D.float16, D.float32):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, "
                             f"torch.float64}}, got {self.acc_dtype!r}. Pass acc_dtype=None to let the op "
                             "pick automatically.")
