"""The machinery of tests/test_corpus.py: running a vendored program (tests/corpus/*.py) against
torchweb and against PyTorch on the same weights and batches.

A program file is executed as a fresh module whose `import torch...` statements resolve to the
library under test (through the module's own `__import__`, so nothing in sys.modules changes).
Imports of the program's own package (torchvision's `from ..ops.misc import ...`, whisper's
`from .decoding import ...`) and of small third-party helpers resolve to vendored files or shims
named in IMPORTS, loaded once per library."""

import builtins
import contextlib
import importlib
import inspect
import os
import types

import numpy as np
import torch

import torchweb as tw

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

# (import level, module name) -> vendored file in tests/corpus, for every program alike (the
# names do not collide within the corpus); level 0 names of files in tests/corpus
# (torchvision_shims, ...) resolve there too
IMPORTS = {
    (1, "_api"): "torchvision_models_api.py", (1, "_utils"): "torchvision_models_utils.py",
    (1, "_meta"): "torchvision_shims.py", (2, "_utils"): "torchvision_shims.py",
    (2, "utils"): "torchvision_shims.py", (2, "transforms._presets"): "torchvision_shims.py",
    (2, "_internally_replaced_utils"): "torchvision_shims.py",
    (2, "ops.misc"): "torchvision_ops_misc.py",
    (2, "ops.stochastic_depth"): "torchvision_ops_stochastic_depth.py",
    (0, "torchvision.ops"): "torchvision_ops_stochastic_depth.py",
    (0, "torchvision"): "torchvision_package.py",
    (0, "torchvision.datasets"): "torchvision_shims.py",
    (0, "torchvision.transforms"): "torchvision_shims.py",
    (0, "torchvision.utils"): "torchvision_shims.py",
    (0, "mingpt.utils"): "mingpt_utils.py", (0, "mingpt.model"): "mingpt_model.py",
    (0, "mingpt.trainer"): "mingpt_trainer.py",
    (0, "layers"): "pygat_layers.py", (0, "pygcn.layers"): "pygcn_layers.py",
    (0, "helpers"): "char_rnn_helpers.py", (0, "model"): "char_rnn_model.py",
    (0, "mambapy.pscan"): "mambapy_pscan.py", (0, "datautils"): "examples_ddp_series_datautils.py",
    (1, "fp16_util"): "improved_diffusion_fp16_util.py", (1, "nn"): "improved_diffusion_nn.py",
    (1, "decoding"): "whisper_shims.py", (1, "transcribe"): "whisper_shims.py",
    (1, "utils"): "whisper_utils.py",
}
# third-party modules only the left-out parts of a program use (plots, environments, downloads)
STUBS = {"matplotlib", "matplotlib.pyplot", "gymnasium", "gym", "requests", "unidecode"}

_cache = {}


class _Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self.__name__}.{name}")

    def __call__(self, *args, **kwargs):
        return self


def _importer(lib):
    real_import = builtins.__import__

    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        if (level, name) in IMPORTS:
            module = load(IMPORTS[level, name], lib)
            if level == 0 and not fromlist and name.startswith("torchvision."):
                return load("torchvision_package.py", lib)   # `import torchvision.x` binds torchvision
            return module
        if level == 0 and os.path.exists(os.path.join(CORPUS, name + ".py")):
            return load(name + ".py", lib)
        if level == 0 and name in STUBS:
            return _Stub(name)
        if level == 0 and lib is tw and (name == "torch" or name.startswith("torch.")):
            module = importlib.import_module("torchweb" + name[len("torch"):])
            return module if fromlist else tw
        return real_import(name, globals, locals, fromlist, level)
    return imp


def load(filename, lib, fresh=False, preset=None):
    """The vendored file tests/corpus/<filename> executed with `torch` bound to lib (cached unless
    fresh); preset: globals set before it runs (what a script's left-out setup would define)."""
    key = (filename, lib.__name__)
    if key in _cache and not fresh:
        return _cache[key]
    path = os.path.join(CORPUS, filename)
    with open(path) as f:
        source = f.read()
    module = types.ModuleType(f"corpus_{os.path.splitext(filename)[0]}_{lib.__name__}")
    module.__file__ = path
    module.__dict__["__builtins__"] = dict(vars(builtins), __import__=_importer(lib))
    module.__dict__.update(preset or {})
    if not fresh:
        _cache[key] = module
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    except BaseException:
        _cache.pop(key, None)
        raise
    return module


# -- moving values between the libraries ------------------------------------------------------
def to_ours(t, device):
    if isinstance(t, torch.Tensor):
        return tw.tensor(t.detach().numpy(), device=device)
    if isinstance(t, (list, tuple)):
        return type(t)(to_ours(v, device) for v in t)
    if isinstance(t, dict):
        return {k: to_ours(v, device) for k, v in t.items()}
    return t


def to_torch(t):
    return torch.from_numpy(np.array(t.detach().cpu().numpy()))


def copy_weights(ours, theirs):
    """PyTorch's model takes our model's parameters and buffers (the same state_dict keys)."""
    sd, want = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(want), "state_dict keys differ"
    copied = type(want)((k, to_torch(v)) for k, v in sd.items())
    copied._metadata = want._metadata       # module versions (MNASNet checks its own)
    theirs.load_state_dict(copied)


def no_dropout(model):
    """Dropout off in both models: the libraries' random streams differ."""
    for m in model.modules():
        if "Dropout" in type(m).__name__:
            m.p = 0.0
    return model


def assert_same(got, want, rtol, atol, what="output"):
    """got (torchweb values, nested) equals want (PyTorch's)."""
    if isinstance(want, torch.Tensor):
        assert isinstance(got, tw.Tensor), f"{what}: expected a tensor, got {type(got).__name__}"
        assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
        g = to_torch(got)
        if want.dtype.is_floating_point:
            torch.testing.assert_close(g.to(want.dtype), want.detach(), rtol=rtol, atol=atol,
                                       msg=lambda m: f"{what}: {m}")
        else:
            assert torch.equal(g.to(want.dtype), want), f"{what}: {g} != {want}"
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{what}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, atol, f"{what}[{i}]")
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want), what
        for k in want:
            assert_same(got[k], want[k], rtol, atol, f"{what}[{k!r}]")
    elif isinstance(want, float):
        assert abs(got - want) <= atol + rtol * abs(want), f"{what}: {got} != {want}"
    else:
        assert got == want, f"{what}: {got!r} != {want!r}"


def assert_same_grads(ours, theirs, rtol, atol):
    grads = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        if p.grad is None:
            assert grads[name].grad is None, f"{name}: a gradient PyTorch has none of"
            continue
        assert grads[name].grad is not None, f"{name}: no gradient"
        assert_same(grads[name].grad, p.grad, rtol, atol, f"grad of {name}")


def assert_same_state(ours, theirs, rtol, atol):
    sd = ours.state_dict()
    for name, v in theirs.state_dict().items():
        assert_same(sd[name], v, rtol, atol, f"state {name}")


# -- one stream of random numbers for both libraries ------------------------------------------
class SharedNoise:
    """While active, torch.randn/randn_like/rand/rand_like/multinomial in both libraries draw from
    one numpy stream in call order, so that a program that samples noise (a VAE's
    reparameterization, a diffusion step, a policy's action) sees the same numbers in both runs.
    With init=True, Tensor.uniform_/normal_ (what nn.init and the layers' default initialization
    call), F.dropout/dropout2d's masks and the DataLoader's shuffling draw from it too: a whole
    script then builds the same weights and batches, and drops the same units, in both libraries.
    Enter it once per library run with the same seed."""

    def __init__(self, seed=0, init=False):
        self.seed, self.init = seed, init

    @contextlib.contextmanager
    def active(self, lib):
        rng = np.random.default_rng(self.seed)

        def make(shape, draw, like=None, **kw):
            if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
                shape = shape[0]
            shape = tuple(shape)
            data = draw(shape).astype(np.float32)
            device = kw.get("device", None if like is None else like.device)
            out = lib.tensor(data, device=device) if lib is tw else torch.from_numpy(data)
            if kw.get("dtype") is not None:
                out = out.to(kw["dtype"])
            elif like is not None:
                out = out.to(like.dtype)
            return out

        def multinomial(probs, num_samples=1, replacement=False, **kw):
            p = (to_torch(probs) if lib is tw else probs).detach().double()
            p = p / p.sum(-1, keepdim=True)
            u = torch.from_numpy(rng.random(p.shape[:-1] + (num_samples,)))
            idx = torch.searchsorted(p.cumsum(-1), u.contiguous()).clamp(max=p.shape[-1] - 1)
            return lib.tensor(idx.numpy(), device=probs.device) if lib is tw else idx

        patches = {
            "randn": lambda *s, **kw: make(s, rng.standard_normal, **kw),
            "rand": lambda *s, **kw: make(s, rng.random, **kw),
            "randn_like": lambda x, **kw: make(tuple(x.shape), rng.standard_normal, like=x, **kw),
            "rand_like": lambda x, **kw: make(tuple(x.shape), rng.random, like=x, **kw),
            "multinomial": multinomial,
        }
        targets = [(lib, k, v) for k, v in patches.items()]
        if self.init:
            def fill(t, values):
                values = values.astype(np.float32)
                with lib.no_grad():
                    t.copy_(lib.tensor(values, device=t.device) if lib is tw else torch.from_numpy(values))
                return t

            def parsed(method, names, defaults):
                # the library's own argument handling (torchweb's signature; PyTorch's names)
                # decides what is accepted: a keyword torchweb lacks still fails here
                def parse(t, *args, generator=None, **kwargs):
                    if lib is tw:
                        inspect.signature(method).bind(t, *args, **kwargs)
                        method(t.new_empty(0), *args, **kwargs)  # its own checks, on no elements
                    values = dict(zip(names, args), **kwargs)
                    return [values.get(n, d) for n, d in zip(names, defaults)]
                return parse

            parse_uniform = parsed(lib.Tensor.uniform_, ("from", "to"), (0.0, 1.0))
            parse_normal = parsed(lib.Tensor.normal_, ("mean", "std"), (0.0, 1.0))

            def uniform_(t, *args, **kwargs):
                lo, hi = parse_uniform(t, *args, **kwargs)
                return fill(t, rng.uniform(lo, hi, tuple(t.shape)))

            def normal_(t, *args, **kwargs):
                mean, std = parse_normal(t, *args, **kwargs)
                return fill(t, rng.normal(mean, std, tuple(t.shape)))

            def dropout_mask(input, p, shape):
                keep = (rng.random(shape) >= p).astype(np.float32) / (1.0 - p)
                return lib.tensor(keep, device=input.device) if lib is tw else torch.from_numpy(keep)

            def dropout(input, p=0.5, training=True, inplace=False):
                if not training or p == 0.0:
                    return input
                return input * dropout_mask(input, p, tuple(input.shape))

            def dropout2d(input, p=0.5, training=True, inplace=False):
                if not training or p == 0.0:
                    return input
                shape = tuple(input.shape)
                # whole channels of (N, C, H, W) or unbatched (C, H, W); elementwise for 2-D input
                mask = shape[:2] + (1,) * (len(shape) - 2) if len(shape) == 4 else \
                    shape[:1] + (1,) * (len(shape) - 1) if len(shape) == 3 else shape
                return input * dropout_mask(input, p, mask)

            targets += [(lib.Tensor, "uniform_", uniform_), (lib.Tensor, "normal_", normal_),
                        (lib.nn.functional, "dropout", dropout), (lib.nn.functional, "dropout2d", dropout2d)]
            if lib is tw:
                from torchweb.utils.data import sampler
                targets.append((sampler, "randperm_list", lambda n, generator: [int(i) for i in rng.permutation(n)]))
            else:
                targets.append((torch, "randperm", lambda n, **kw: torch.from_numpy(rng.permutation(n))))
        saved = [(obj, k, obj.__dict__[k] if k in obj.__dict__ else getattr(obj, k)) for obj, k, _ in targets]
        for obj, k, v in targets:
            setattr(obj, k, v)
        try:
            yield
        finally:
            for obj, k, v in saved:
                if obj is torch.Tensor and k in ("uniform_", "normal_"):
                    delattr(obj, k)      # back to the C method of its base
                else:
                    setattr(obj, k, v)


@contextlib.contextmanager
def cuda_names_webgpu(on=True):
    """While on, "cuda" names torchweb's webgpu device and webgpu tensors are is_cuda, as under
    install_torch_alias(): for a program that picks its device with `'cuda' if x.is_cuda`."""
    saved = tw._device.CUDA_IS_WEBGPU[0]
    tw._device.CUDA_IS_WEBGPU[0] = saved or on
    try:
        yield
    finally:
        tw._device.CUDA_IS_WEBGPU[0] = saved


@contextlib.contextmanager
def script_run(lib, device, argv, cwd):
    """A whole script's surroundings: sys.argv, the working directory, torchweb's default device.
    When torchweb runs on webgpu, the script takes its accelerator path; PyTorch's run then takes
    the same path (loader options, shuffling) with the CPU as its "accelerator"."""
    import sys
    saved_argv, saved_cwd = sys.argv, os.getcwd()
    saved_device = tw.get_default_device()
    saved_accel = torch.accelerator.is_available, torch.accelerator.current_accelerator
    sys.argv = list(argv)
    os.chdir(cwd)
    if lib is tw:
        tw.set_default_device(device)
    elif device == "webgpu":
        torch.accelerator.is_available = lambda: True
        torch.accelerator.current_accelerator = lambda check_available=False: torch.device("cpu")
    saved_loader = torch.utils.data.DataLoader
    if lib is torch:
        torch.utils.data.DataLoader = _InProcessLoader   # no workers, no pinning: same batches
    try:
        yield
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        tw.set_default_device(saved_device)
        torch.accelerator.is_available, torch.accelerator.current_accelerator = saved_accel
        torch.utils.data.DataLoader = saved_loader


class _InProcessLoader(torch.utils.data.DataLoader):
    def __init__(self, *args, **kwargs):
        kwargs.update(num_workers=0, persistent_workers=False, pin_memory=False)
        super().__init__(*args, **kwargs)


def run_script(filename, lib, device, argv, cwd, seed=0, preset=None):
    """Execute the vendored script as __main__ with argv, every random draw (initialization,
    noise, shuffling) from SharedNoise(seed, init=True); returns its globals."""
    with script_run(lib, device, argv, cwd), SharedNoise(seed, init=True).active(lib):
        return load(filename, lib, fresh=True, preset=dict(preset or {}, __name__="__main__"))
