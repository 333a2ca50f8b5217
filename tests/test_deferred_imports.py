"""`import torchweb` leaves the rarely used parts unimported (torchweb/_deferred.py: in Pyodide
each module imported costs page-load time), and each deferred name still resolves on first use:
attribute access, hasattr, dir(), `from ... import` and the submodule import all give the object
the defining module holds. A fresh interpreter per check: this test process has imported
everything already."""

import json
import os
import subprocess
import sys

import pytest

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

# Modules `import torchweb` must not import (each loads on first use of its name)
DEFERRED_MODULES = [
    "torchweb.optim", "torchweb.optim.lr_scheduler", "torchweb.optim.rmsprop", "torchweb.optim.lbfgs",
    "torchweb.utils", "torchweb.utils.data", "torchweb.fft", "torchweb.special", "torchweb.sparse",
    "torchweb.distributions", "torchweb.func", "torchweb.hub", "torchweb.safetensors",
    "torchweb._torch_alias", "torchweb.serialization.zipfile_format", "torchweb.serialization.safetensors",
    "torchweb.nn.utils", "torchweb.nn.modules.rnn", "torchweb.nn.modules.transformer",
    "torchweb.nn.modules.multihead_attention", "torchweb.nn.modules.adaptive", "torchweb.nn.modules.fold",
    "torchweb.nn.modules.pixelshuffle", "torchweb.nn.modules.channelshuffle", "torchweb.nn.modules.lazy",
    "torchweb.nn.modules.linear_cross_entropy_options", "torchweb.autograd.functional",
    "torchweb.autograd.gradcheck", "zipfile",
]

# (package, name, the module that defines it): each must resolve to the defining module's object
NAMES = [
    ("torchweb", "optim", "torchweb.optim"), ("torchweb", "utils", "torchweb.utils"),
    ("torchweb", "fft", "torchweb.fft"), ("torchweb", "special", "torchweb.special"),
    ("torchweb", "sparse", "torchweb.sparse"), ("torchweb", "distributions", "torchweb.distributions"),
    ("torchweb", "func", "torchweb.func"), ("torchweb", "hub", "torchweb.hub"),
    ("torchweb", "safetensors", "torchweb.safetensors"),
    ("torchweb", "vmap", "torchweb.func:vmap"),
    ("torchweb", "install_torch_alias", "torchweb._torch_alias:install_torch_alias"),
    ("torchweb", "uninstall_torch_alias", "torchweb._torch_alias:uninstall_torch_alias"),
    ("torchweb.optim", "lr_scheduler", "torchweb.optim.lr_scheduler"),
    ("torchweb.optim", "swa_utils", "torchweb.optim.swa_utils"),
    ("torchweb.optim", "RMSprop", "torchweb.optim.rmsprop:RMSprop"),
    ("torchweb.optim", "RAdam", "torchweb.optim.nadam:RAdam"),
    ("torchweb.optim", "LBFGS", "torchweb.optim.lbfgs:LBFGS"),
    ("torchweb.optim", "Muon", "torchweb.optim.muon:Muon"),
    ("torchweb.nn", "utils", "torchweb.nn.utils"),
    ("torchweb.nn", "LSTM", "torchweb.nn.modules.rnn:LSTM"),
    ("torchweb.nn", "TransformerEncoderLayer", "torchweb.nn.modules.transformer:TransformerEncoderLayer"),
    ("torchweb.nn", "MultiheadAttention", "torchweb.nn.modules.multihead_attention:MultiheadAttention"),
    ("torchweb.nn", "LazyLinear", "torchweb.nn.modules.lazy:LazyLinear"),
    ("torchweb.nn", "PixelShuffle", "torchweb.nn.modules.pixelshuffle:PixelShuffle"),
    ("torchweb.nn.modules", "GRU", "torchweb.nn.modules.rnn:GRU"),
    ("torchweb.nn.modules", "rnn", "torchweb.nn.modules.rnn"),
    ("torchweb.serialization", "safetensors", "torchweb.serialization.safetensors"),
    ("torchweb.autograd", "functional", "torchweb.autograd.functional"),
    # gradgradcheck first: importing the gradcheck module binds autograd.gradcheck to the module
    ("torchweb.autograd", "gradgradcheck", "torchweb.autograd.gradcheck:gradgradcheck"),
    ("torchweb.autograd", "gradcheck", "torchweb.autograd.gradcheck:gradcheck"),
]

CHECK = r"""
import importlib, json, sys
import torchweb
out = {"loaded": sorted(m for m in DEFERRED if m in sys.modules), "names": {}}
for package, name, target in NAMES:
    pkg = importlib.import_module(package)
    r = {"in_dir": name in dir(pkg), "hasattr": hasattr(pkg, name)}
    got = getattr(pkg, name)
    module, _, attr = target.partition(":")
    want = importlib.import_module(module)
    want = getattr(want, attr) if attr else want
    ns = {}
    exec(f"from {package} import {name} as x", ns)
    r["same"] = got is want and ns["x"] is want
    out["names"][f"{package}.{name}"] = r
print(json.dumps(out))
"""


def _fresh(code):
    env = dict(os.environ, PYTHONPATH=SRC)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def fresh():
    return _fresh(f"DEFERRED = {DEFERRED_MODULES!r}\nNAMES = {NAMES!r}\n" + CHECK)


def test_import_torchweb_leaves_the_deferred_parts_unimported(fresh):
    assert fresh["loaded"] == []


@pytest.mark.parametrize("package,name,target", NAMES)
def test_each_deferred_name_resolves(fresh, package, name, target):
    assert fresh["names"][f"{package}.{name}"] == {"in_dir": True, "hasattr": True, "same": True}


def test_deferred_layer_lists_are_their_modules_all():
    """nn.modules writes out each deferred module's __all__: they must not drift apart."""
    import importlib

    from torchweb.nn import modules
    by_module = {}
    for name, target in modules._DEFERRED.items():
        module, _, attr = target.partition(":")
        if attr:
            by_module.setdefault(module, []).append(attr)
    for module, names in by_module.items():
        mod = importlib.import_module(module, "torchweb.nn.modules")
        want = list(getattr(mod, "__all__", names))
        assert sorted(names) == sorted(want), module


def test_unknown_names_still_raise_attribute_error():
    import torchweb
    for pkg in (torchweb, torchweb.nn, torchweb.optim, torchweb.nn.modules):
        with pytest.raises(AttributeError):
            getattr(pkg, "no_such_name_anywhere")
        assert not hasattr(pkg, "no_such_name_anywhere")
