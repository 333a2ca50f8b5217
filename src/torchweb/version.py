"""torch.version: what scripts read to branch on the PyTorch they run under.

`__version__` is the PyTorch version whose API torchweb follows (a TorchVersion: it compares
as a version), `torchweb` is torchweb's own. There is no CUDA or ROCm: `cuda` and `hip` are
None, as on PyTorch's CPU builds. Under `torchweb.install_torch_alias()`, `torch.__version__`
(torchweb's own attribute, since `torch` is torchweb then) answers the PyTorch version too."""

from .torch_version import TorchVersion

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu", "torchweb"]

PYTORCH_API = "2.13.0"     # the PyTorch whose API, names and results torchweb follows
__version__ = TorchVersion(PYTORCH_API)
torchweb = "0.1.0"         # torchweb's own version (pyproject.toml's)
debug = False
cuda = None
hip = None
rocm = None
xpu = None
git_version = None
