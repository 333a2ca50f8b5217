"""torchweb.vision: a pure-Python subset of torchvision on torchweb tensors.

`install_torch_alias()` also answers `import torchvision` with this package when the real
torchvision is not installed (see _torch_alias.py), so code written for PyTorch keeps its
`from torchvision import datasets, transforms, models`. Nothing imports this package until then:
`import torchweb` stays as fast as before. See docs/libraries.md for what is covered.
"""

from . import datasets, models, transforms, utils  # noqa: F401
from ._image import Image  # noqa: F401

__version__ = "0.28.0"   # the torchvision release whose API (and checkpoints) this follows

_image_backend = "tensor"


def get_image_backend():
    return _image_backend


def set_image_backend(backend):
    if backend not in ("PIL", "accimage", "tensor"):
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
