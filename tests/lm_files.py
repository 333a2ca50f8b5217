"""torchweb.models' plain-PyTorch files (config, kv_cache, gpt2, llama, generation) executed with
`import torchweb as torch` resolving to another library (PyTorch), so the same model code runs
under both. The files import only torchweb (its attributes) and each other, by full names."""

import os
import sys
import types

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "torchweb", "models")
FILES = ("config", "kv_cache", "gpt2", "llama", "generation")


def load_models_with(lib):
    """A namespace with the model files' modules, `torchweb` bound to lib while they execute."""
    package = types.SimpleNamespace()
    saved = {k: sys.modules.get(k) for k in ["torchweb"] + [f"torchweb.models.{n}" for n in FILES]}
    sys.modules["torchweb"] = lib     # `from torchweb.models.x import` finds the modules below by their full names
    try:
        for name in FILES:
            path = os.path.join(SRC, name + ".py")
            module = types.ModuleType(f"torchweb.models.{name}")
            sys.modules[module.__name__] = module
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), module.__dict__)
            setattr(package, name, module)
    finally:
        for k in saved:
            sys.modules.pop(k, None)
        sys.modules.update({k: v for k, v in saved.items() if v is not None})
    return package
