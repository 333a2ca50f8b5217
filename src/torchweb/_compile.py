"""torch.compile for torchweb: capture a call's GPU work once, replay it without Python per op.

`torchweb.compile(fn_or_module)` takes torch.compile's arguments (mode, fullgraph, dynamic,
backend, options are accepted and change nothing). For each input signature (the tensors'
shapes, strides, dtypes, devices and aliasing; other arguments by value) the first call runs
eagerly (warm-up: optimizer state and gradients get made), the second runs eagerly while its
GPU work is recorded (backends/webgpu/capture.py), and later calls replay the recording: the
inputs are copied in, one program runs, fresh output tensors come back.

A replay must give what an eager call would, so it is taken only while the world it was
recorded in still holds: the same parameter, buffer, gradient and optimizer-state tensors of
the modules and optimizers the function reaches (through its arguments, its closure, the globals
it names, or its `self`), the same training flags and optimizer options, the same Python
scalars in those globals, grad mode and default dtype. A call that cannot be captured runs
eagerly from then on for that signature, with the reason in `.compile_stats` (and in a
warning with TORCHWEB_COMPILE_WARN=1): reading values back inside it, uploading Python data
that the GPU reads, random numbers drawn on the host (randperm, a sampler), changing Python
attributes of the modules it uses, returning a tensor that requires grad without having run
backward, work on the cpu device. The optimizer's Python (step counts, bias corrections,
learning rate from a scheduler) runs on each replay, so schedulers stepped outside the function
are followed; so do the random kernels' counters (dropout, torch.rand...): each replay draws
from the generator as an eager call would, so a seeded compiled run gives the eager run's
numbers.

Not covered by the guards: Python state the function reads from objects other than modules,
optimizers and the scalars of named globals (e.g. an attribute of some other object); keep
such values as arguments. Outputs come back detached from autograd.
"""

import functools
import os
import warnings

from ._is_tensor import is_tensor
from .compiler import _CAPTURING
from .nn.modules.module import Module
from . import _dtype, _random
from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.engine import BACKWARD_RUNS
from .backends.webgpu import capture
from .backends.webgpu.runtime import get_runtime, _runtime
from .optim.lr_scheduler import LRScheduler
from .optim.optimizer import Optimizer

CACHE_LIMIT = 8       # signatures per compiled function (torch._dynamo's recompile limit)
WARMUP_CALLS = 1

_enabled = [True]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile(model=None, *, fullgraph=False, dynamic=None, backend='inductor',
    mode=None, options=None, disable=False): a module or function whose calls are captured
    and replayed on the webgpu device (see this module's docstring)."""
    def wrap(m):
        if disable:
            return m
        if isinstance(m, Module):
            return OptimizedModule(m)
        if not callable(m):
            raise RuntimeError(f"torch.compile expects a callable or an nn.Module, got {type(m).__name__}")
        return CompiledFunction(m)
    return wrap if model is None else wrap(model)


def reset():
    """torch.compiler.reset(): forget every capture (they are remade on the next calls)."""
    for f in list(_live):
        f.cache.clear()


_live = set()


class _Entry:
    __slots__ = ("calls", "graph", "world", "spec", "eager_reason", "probe", "mismatches", "block")

    def __init__(self):
        self.calls = 0
        self.probe = None        # the signature of the last recorded call (capture.py)
        self.mismatches = 0
        self.block = None        # its device-errors block, the same for every recording
        self.graph = None
        self.world = None
        self.spec = None
        self.eager_reason = None


class CompiledFunction:
    def __init__(self, fn):
        self.fn = fn
        self.cache = {}
        self.compile_stats = {"eager": 0, "captures": 0, "replays": 0, "reasons": []}
        functools.update_wrapper(self, fn)
        _live.add(self)

    def __get__(self, obj, objtype=None):      # a compiled method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        tensors, key = _signature(args, kwargs)
        entry = None
        if key is not None and _enabled[0] and _webgpu_ready():
            entry = self.cache.get(key)
            if entry is None and len(self.cache) < CACHE_LIMIT:
                entry = self.cache[key] = _Entry()
        if entry is None or entry.eager_reason is not None:
            return self._eager(args, kwargs)
        roots = _roots(self.fn, args, kwargs)
        if entry.graph is not None:
            if _world(roots) == entry.world:
                return self._replay(entry, tensors)
            entry.graph = None
            entry.calls = 0
            entry.probe = None
        entry.calls += 1
        if entry.calls <= WARMUP_CALLS:
            return self._eager(args, kwargs)
        return self._capture(entry, tensors, roots, args, kwargs)

    def _eager(self, args, kwargs):
        self.compile_stats["eager"] += 1
        return self.fn(*args, **kwargs)

    def _capture(self, entry, tensors, roots, args, kwargs):
        rt = get_runtime()
        in_storages = _unique_storages(tensors)
        for s in in_storages:
            s.buffer_for_write()   # buffers taken and pending work run before recording
        effects, rng, backward = _effects(roots), _rng_state(), BACKWARD_RUNS[0]
        rec = capture.start(rt, entry.block)
        entry.block = rec.error_block
        _CAPTURING[0] += 1    # torch.compiler.is_compiling() is True while the Python records
        try:
            out = self.fn(*args, **kwargs)
        finally:
            _CAPTURING[0] -= 1
            capture.stop(rt, rec)
        out_tensors, spec = _flatten_out(out)
        reason = _refusal(out_tensors, roots, BACKWARD_RUNS[0] != backward)
        if reason is None and _effects(roots) != effects:
            reason = ("it changes Python attributes of a module, optimizer or scheduler it uses "
                      "(a replay would not)")
        if reason is None and not _advanced_by(rng, _rng_state(), rec.redraws):
            reason = ("it draws random numbers that a replay cannot draw again (randperm, a sampler, "
                      "a reseed inside the call)")
        if reason is not None:
            rec.refuse(reason)
        try:
            # Replay only what two calls in a row recorded identically (up to buffer renaming):
            # a Python value or uploaded data that changes between calls shows up here.
            sig = rec.signature(in_storages)
            if not sig[0]:
                raise capture.Refused("nothing ran on the GPU")
            same, entry.probe = sig == entry.probe, sig
            if not same:
                entry.mismatches += 1
                if entry.mismatches > 2:
                    raise capture.Refused("its GPU work differs from call to call (a Python value "
                                          "or uploaded data that changes: pass it as an argument)")
                rt.pool.trim(rt.pool.limit)
                return out
            graph = capture.build(rt, rec, in_storages, _unique_storages(out_tensors))
        except capture.Refused as e:
            rt.pool.trim(rt.pool.limit)
            self._give_up(entry, str(e))
            return out
        entry.graph, entry.spec, entry.world = graph, spec, _world(roots)
        self.compile_stats["captures"] += 1
        return out

    def _give_up(self, entry, reason):
        entry.eager_reason = reason
        name = getattr(self.fn, "__qualname__", repr(self.fn))
        self.compile_stats["reasons"].append(reason)
        if os.environ.get("TORCHWEB_COMPILE_WARN"):
            warnings.warn(f"torchweb.compile: {name} runs eagerly: {reason}", stacklevel=3)

    def _replay(self, entry, tensors):
        self.compile_stats["replays"] += 1
        storages = entry.graph.replay(_unique_storages(tensors))
        return _rebuild(entry.spec, lambda i, shape, stride, offset, dtype, device:
                        Tensor._make(storages[i], shape, stride, offset, dtype, device))


class OptimizedModule(Module):
    """What torch.compile(module) returns: calls go through the capture; attributes, state_dict
    ('_orig_mod.' prefixed, as PyTorch's) and train/eval reach the original module."""

    def __init__(self, orig):
        super().__init__()
        self._orig_mod = orig
        self.__dict__["_compiled_call"] = CompiledFunction(orig.__call__)

    def __call__(self, *args, **kwargs):
        return self.__dict__["_compiled_call"](*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    @property
    def compile_stats(self):
        return self.__dict__["_compiled_call"].compile_stats


# -- signatures, roots, guards -----------------------------------------------------------------
def _webgpu_ready():
    return _runtime[0] is not None


def _signature(args, kwargs):
    """(input tensors in order, hashable key), or (None, None) if an argument can't be keyed."""
    tensors, parts = [], []
    storage_index = {}

    def visit(x):
        if is_tensor(x):
            st = x._storage
            if getattr(st, "device_type", None) != "webgpu":
                raise TypeError
            k = storage_index.setdefault(id(st), len(storage_index))
            tensors.append(x)
            parts.append(("T", tuple(x.shape), tuple(x._stride), x._offset, x.dtype.name,
                          x.requires_grad, st.size, k))
        elif isinstance(x, (list, tuple)):
            parts.append((type(x).__name__, len(x)))
            for v in x:
                visit(v)
        elif isinstance(x, dict):
            parts.append(("dict", tuple(x)))
            for v in x.values():
                visit(v)
        elif x is None or isinstance(x, (bool, int, float, str)):
            parts.append((type(x).__name__, x))
        else:
            parts.append(("obj", id(x)))     # modules, optimizers: guarded through _world
    try:
        visit(args)
        visit(kwargs)
    except TypeError:
        return None, None
    parts.append((grad_mode.is_grad_enabled(), _dtype.get_default_dtype().name))
    return tensors, tuple(parts)


def _roots(fn, args, kwargs):
    """The modules, optimizers, schedulers and global scalars the function can reach."""
    objs, scalars = [], []
    cands = list(args) + list(kwargs.values())
    target = getattr(fn, "__func__", fn)
    if getattr(fn, "__self__", None) is not None:
        cands.append(fn.__self__)
    for cell in getattr(target, "__closure__", None) or ():
        try:
            cands.append(cell.cell_contents)
        except ValueError:
            pass
    code, glb = getattr(target, "__code__", None), getattr(target, "__globals__", {})
    if code is not None:
        for name in code.co_names:
            v = glb.get(name)
            if isinstance(v, (bool, int, float, str)):
                scalars.append((name, v))
            else:
                cands.append(v)
    for v in cands:
        if _kind(v) is not None and all(v is not o for o in objs):
            objs.append(v)
    return objs, tuple(scalars)


_KINDS = ((Module, "module"), (Optimizer, "optimizer"), (LRScheduler, "scheduler"))


def _kind(v):
    for cls, name in _KINDS:
        if isinstance(v, cls):
            return name
    return None


def _world(roots):
    """What a replay needs to be unchanged since the capture (see the module's docstring): one
    flat tuple, built with plain loops (it is computed on every call)."""
    objs, scalars = roots
    out = [scalars]
    add = out.append
    for o in objs:
        k = _kind(o)
        if k == "module":
            stack = [o]
            while stack:
                m = stack.pop()
                d = m.__dict__
                add(id(m))
                add(d["training"])
                add(len(d["_forward_hooks"]) + len(d["_forward_pre_hooks"]))
                for n, p in d["_parameters"].items():
                    add(n)
                    if p is None:
                        add(None)
                        continue
                    add(id(p._storage))
                    add(p._offset)
                    add(p._shape)
                    add(p._requires_grad)
                    g = p.grad
                    add(None if g is None else id(g._storage))
                for n, b in d["_buffers"].items():
                    add(n)
                    add(None if b is None else id(b._storage))
                mods = d["_modules"]
                add(len(mods))
                stack.extend(c for c in mods.values() if c is not None)
        elif k == "optimizer":
            for g in o.param_groups:
                for n, v in g.items():
                    if n in ("params", "lr", "initial_lr") or isinstance(v, (list, dict)):
                        continue
                    add(n)
                    add(v if isinstance(v, (bool, str, type(None))) else v == 0)
                for p in g["params"]:
                    add(id(p._storage))
                    gr = p.grad
                    add(None if gr is None else id(gr._storage))
                    st = o.state.get(p)
                    if st:
                        for n, v in st.items():
                            if n != "step" and is_tensor(v):
                                add(n)
                                add(id(v._storage))
    return tuple(out)


def _effects(roots):
    """Python scalar attributes of the reachable modules and schedulers (a capture that
    changes them cannot be replayed)."""
    objs, _ = roots
    out = []
    for o in objs:
        items = o.modules() if _kind(o) == "module" else [o]
        for m in items:
            out.append(tuple((n, v) for n, v in vars(m).items()
                             if isinstance(v, (bool, int, float, str, type(None)))))
    return tuple(out)


def _rng_state():
    return tuple((k, g.get_state()) for k, g in sorted(_random._generators.items()))


def _advanced_by(before, after, draws):
    """Whether the generators went from `before` to `after` (_rng_state()s) by `draws` calls in
    all, their seeds unchanged: the draws of random kernels whose counters a replay recomputes
    (dropout, torch.rand...: the generator then advances on each replay as an eager call's would)."""
    if len(before) != len(after):
        return False
    taken = 0
    for (k0, (seed0, calls0)), (k1, (seed1, calls1)) in zip(before, after):
        if k0 != k1 or seed0 != seed1 or calls1 < calls0:
            return False
        taken += calls1 - calls0
    return taken == draws


def _refusal(out_tensors, roots, trained):
    for t in out_tensors:
        if getattr(t._storage, "device_type", None) != "webgpu":
            return "it returns a tensor that is not on the webgpu device"
        if t.requires_grad and not trained:
            return ("it returns a tensor that requires grad without running backward; a replay "
                    "gives no autograd graph (compile the whole training step, or run under "
                    "torch.no_grad())")
    for o in roots[0]:
        if _kind(o) == "module":
            for t in list(o.parameters()) + list(o.buffers()):
                if getattr(t._storage, "device_type", None) != "webgpu":
                    return "a module it uses has parameters or buffers off the webgpu device"
    return None


def _unique_storages(tensors):
    seen, out = set(), []
    for t in tensors:
        if id(t._storage) not in seen:
            seen.add(id(t._storage))
            out.append(t._storage)
    return out


def _flatten_out(out):
    """(output tensors, a spec to rebuild the structure with new storages)."""
    tensors, index = [], {}

    def spec(x):
        if is_tensor(x):
            i = index.setdefault(id(x._storage), len(index))
            tensors.append(x)
            return ("T", i, tuple(x.shape), tuple(x._stride), x._offset, x.dtype, x.device)
        if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
            return (type(x), [spec(v) for v in x])
        if isinstance(x, dict):
            return (dict, {k: spec(v) for k, v in x.items()})
        return ("V", x)
    return tensors, spec(out)


def _rebuild(spec, make):
    tag = spec[0]
    if tag == "T":
        return make(*spec[1:])
    if tag == "V":
        return spec[1]
    if tag is dict:
        return {k: _rebuild(v, make) for k, v in spec[1].items()}
    return tag(_rebuild(v, make) for v in spec[1])
