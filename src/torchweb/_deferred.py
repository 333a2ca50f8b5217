"""Rarely used parts of a package load on first use (PEP 562), so `import torchweb` stays fast:
in Pyodide every module imported is one more file to unmarshal and run at each page load.

    __getattr__, __dir__ = deferred(__name__, globals(), {
        "fft": ".fft",                        # a submodule
        "save": ".serialization:save",        # a name of a submodule
    }, fallback=_refused_getattr)

The first access imports the module and stores the value in the package's namespace, so later
accesses are plain attribute reads; dir() lists the deferred names as if they were there, and
hasattr() and `from package import name` find them.
"""

import importlib


def deferred(package, namespace, names, fallback=None):
    """(__getattr__, __dir__) for package: names maps each deferred attribute to "module"
    (relative to package) or "module:attribute"; any other name goes to fallback(name)."""

    def __getattr__(name):
        target = names.get(name)
        if target is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(target.partition(":")[0], package)
        # every name this module gives, at once: importing a submodule binds its name in the
        # package, which must not hide a function of the same name (autograd.gradcheck)
        for other, where in names.items():
            path, _, attr = where.partition(":")
            if path == target.partition(":")[0]:
                namespace[other] = getattr(module, attr) if attr else module
        return namespace[name]

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__


def deferred_star(module, names):
    """{name: "module:name"} for each name of a star-imported module's __all__, written out
    (tests/test_deferred_imports.py checks each list against the module's __all__)."""
    return {n: f"{module}:{n}" for n in names}
