"""An opt-in alias that lets code written for PyTorch say `import torch` unchanged:

    import torchweb
    torchweb.install_torch_alias()
    import torch, torch.nn as nn, torch.nn.functional as F   # torchweb's

`torch.<sub>` resolves to `torchweb.<sub>`; a submodule torchweb lacks fails at import with a
ModuleNotFoundError that names it (rather than a NameError later, or a half-working module).
`torchvision.<sub>` resolves to torchweb.vision's pure-Python subset the same way, and
`safetensors` / `safetensors.torch` to torchweb.safetensors, unless the real package is
installed (it is then left to the normal import). `torchao.<sub>` resolves to `torchweb.ao.<sub>`
(quantize_, int8_weight_only)."""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass  # already imported under its torchweb name


# alias root -> torchweb's package standing in for it
_ROOTS = {"torch": "torchweb", "torchao": "torchweb.ao", "torchvision": "torchweb.vision",
          "safetensors": "torchweb.safetensors"}


def _real_installed(name):
    return importlib.machinery.PathFinder.find_spec(name) is not None


class _TorchAliasFinder(importlib.abc.MetaPathFinder):
    # torchvision / safetensors: True answers with ours; None only where the real one is absent
    companions = {"torchvision": None, "safetensors": None}

    def find_spec(self, fullname, path=None, target=None):
        root = fullname.partition(".")[0]
        if root not in _ROOTS:
            return None
        mode = self.companions.get(root, True)
        if not mode and (mode is False or _real_installed(root)):
            return None
        real = _ROOTS[root] + fullname[len(root):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name is None or not (e.name == real or real.startswith(e.name + ".")):
                raise  # a missing dependency inside torchweb's module, not a missing alias
            raise ModuleNotFoundError(
                f"No module named '{fullname}': torchweb (standing in for torch) does not provide "
                f"'{fullname}'", name=fullname) from None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module))


_finder = _TorchAliasFinder()


def install_torch_alias(cuda=True, torchvision=None, safetensors=None):
    """Make `import torch` (and torch.nn, torch.optim, ...) give torchweb's modules.

    `torch.__version__` then answers the PyTorch version whose API torchweb follows (a
    TorchVersion, "2.13.0"), for the scripts that check it; torchweb's own version stays in
    `torch.version.torchweb`. With cuda=True, "cuda" names the webgpu device and
    torch.cuda answers for it (torchweb/cuda.py); cuda=False keeps torch.cuda unavailable.
    torchvision=None makes `import torchvision` give torchweb.vision where the real torchvision
    is not installed; True gives it even so (the real one cannot run on torchweb), False never.
    safetensors: the same for `import safetensors.torch` and torchweb.safetensors."""
    existing = sys.modules.get("torch")
    if existing is not None and not getattr(existing, "__name__", "").startswith("torchweb"):
        raise RuntimeError("install_torch_alias(): the real torch is already imported in this "
                           "process; call it before anything imports torch")
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
    _finder.companions = {"torchvision": torchvision, "safetensors": safetensors}
    torchweb = importlib.import_module("torchweb")
    sys.modules["torch"] = torchweb
    torchweb.__version__ = torchweb.version.__version__
    torchweb._device.CUDA_IS_WEBGPU[0] = bool(cuda)


def uninstall_torch_alias():
    """Undo install_torch_alias(): forget the torch.* aliases ("cuda" is refused again)."""
    torchweb = sys.modules.get("torchweb")
    if torchweb is not None:
        torchweb.__version__ = torchweb.version.torchweb
        torchweb._device.CUDA_IS_WEBGPU[0] = False
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n.partition(".")[0] in _ROOTS]:
        if getattr(sys.modules[name], "__name__", "").startswith("torchweb"):
            del sys.modules[name]
