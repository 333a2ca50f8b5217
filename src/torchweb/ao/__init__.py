"""torchweb.ao: architecture optimization as torchao names it (`torchao.quantization`)."""

from . import quantization  # noqa: F401
