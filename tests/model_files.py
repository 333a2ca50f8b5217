"""Running a file written for PyTorch, unchanged, against either library: its `import torch`
(and the submodules it imports) resolve to `lib` (torchweb or torch) while the file executes.
Used by the real-model, MiniLM and digits tests and by bench/workloads.py."""

import os
import sys
import types


def _aliases(lib):
    names = {"torch": lib, "torch.nn": lib.nn, "torch.nn.functional": lib.nn.functional,
             "torch.optim": lib.optim, "torch.optim.lr_scheduler": lib.optim.lr_scheduler,
             "torch.utils": lib.utils, "torch.utils.data": lib.utils.data}
    return names


def load_file(path, lib):
    """Execute the file at path as a fresh module, `torch` bound to lib; returns the module."""
    with open(path) as f:
        source = f.read()
    name = os.path.splitext(os.path.basename(path))[0]
    module = types.ModuleType(f"{name}_{lib.__name__}")
    aliases = _aliases(lib)
    saved = {k: sys.modules.get(k) for k in aliases}
    sys.modules.update(aliases)
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module
