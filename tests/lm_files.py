"""torchweb.models' plain-PyTorch files (config, kv_cache, gpt2, llama, generation) executed with
`import torchweb as torch` resolving to another library (PyTorch), so the same model code runs
under both. The files import only torchweb, torchweb.nn, torchweb.nn.functional and each other."""

import os
import sys
import types

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src", "torchweb", "models")
FILES = ("config", "kv_cache", "gpt2", "llama", "generation")


def load_models_with(lib):
    """A namespace with the model files' modules, `torchweb` bound to lib while they execute."""
    package = types.ModuleType("torchweb.models")
    package.__path__ = []
    aliases = {"torchweb": lib, "torchweb.nn": lib.nn, "torchweb.nn.functional": lib.nn.functional,
               "torchweb.models": package}
    saved = {k: sys.modules.get(k) for k in aliases}
    saved.update({f"torchweb.models.{n}": sys.modules.get(f"torchweb.models.{n}") for n in FILES})
    sys.modules.update(aliases)
    try:
        for name in FILES:
            path = os.path.join(SRC, name + ".py")
            module = types.ModuleType(f"torchweb.models.{name}")
            sys.modules[module.__name__] = module
            with open(path) as f:
                exec(compile(f.read(), path, "exec"), module.__dict__)
            setattr(package, name, module)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return package
