"""torch.distributions.transforms: the Transform classes (defined by kind in transform_*.py)."""

from .transform_base import (CatTransform, ComposeTransform, IndependentTransform, ReshapeTransform,
                             StackTransform, Transform, identity_transform, _InverseTransform)  # noqa: F401
from .transform_elementwise import (AbsTransform, AffineTransform, CumulativeDistributionTransform,
                                    ExpTransform, PowerTransform, SigmoidTransform, SoftplusTransform,
                                    TanhTransform)
from .transform_vector import (CorrCholeskyTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
                               SoftmaxTransform, StickBreakingTransform)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform",
           "SigmoidTransform", "SoftplusTransform", "TanhTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform", "Transform", "identity_transform"]
