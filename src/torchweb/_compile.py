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
attributes of the modules it uses, clearing the gradients after an optimizer step, work on the
cpu device. The optimizer's Python (step counts, bias corrections, learning rate from a
scheduler) runs on each replay, so schedulers stepped outside the function
are followed; so do the random kernels' counters (dropout, torch.rand...): each replay draws
from the generator as an eager call would, so a seeded compiled run gives the eager run's
numbers.

A call whose outputs require grad and that runs no backward (a compiled module's forward in an
ordinary training loop) is captured with its backward as a pair (_compile_autograd.py): its
outputs hang from one autograd node whose backward replays the backward program. The guards
are _compile_guards.py's; train and eval calls, and each input shape, are separate signatures
(at most CACHE_LIMIT; calls past it run eagerly).

Not covered by the guards: Python state the function reads from objects other than modules,
optimizers and the scalars of named globals (e.g. an attribute of some other object); keep
such values as arguments. The outputs of a call that ran its own backward come back detached.
"""

import functools
import os
import warnings

from . import _compile_guards as guards
from ._compile_autograd import Tape
from ._tensor import Tensor
from .autograd import grad_mode
from .autograd.engine import BACKWARD_RUNS
from .backends.webgpu import capture
from .backends.webgpu.runtime import get_runtime, on_device_lost
from .nn.modules.module import Module

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
on_device_lost(lambda _rt: reset())   # captured programs bind the lost device's buffers


class _Entry:
    __slots__ = ("calls", "graph", "world", "watch_grads", "grads_in", "spec", "eager_reason",
                 "probe", "mismatches", "block", "tape")

    def __init__(self):
        self.calls = 0
        self.probe = None        # the signature of the last recorded call (capture.py)
        self.mismatches = 0
        self.block = None        # its device-errors block, the same for every recording
        self.graph = None
        self.world = None
        self.watch_grads = False  # the world includes the gradients (the call trains)
        self.grads_in = None     # an optimizer step without backward: its gradients' signature (inputs)
        self.spec = None
        self.eager_reason = None
        self.tape = None         # outputs that require grad: forward and backward (_compile_autograd)


class CompiledFunction:
    def __init__(self, fn):
        self.fn = fn
        self.cache = {}
        self.compile_stats = {"eager": 0, "captures": 0, "replays": 0, "backward_captures": 0,
                              "backward_replays": 0, "reasons": []}
        functools.update_wrapper(self, fn)
        _live.add(self)

    def __get__(self, obj, objtype=None):      # a compiled method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if not _enabled[0] or not guards.webgpu_ready() or guards.capturing_now():
            # (inside an outer compiled call's recording, this call is part of its program)
            return self._eager(args, kwargs)
        tensors, key = guards.signature(args, kwargs)
        if key is None:
            return self._eager(args, kwargs)
        roots = guards.roots(self.fn, args, kwargs)
        modes, state, grads = guards.world(roots)
        key = (key, modes)       # train and eval calls are separate captures
        entry = self.cache.get(key)
        if entry is None:
            if len(self.cache) >= CACHE_LIMIT:
                self._note(f"more than {CACHE_LIMIT} input signatures (shapes, dtypes, train/eval, "
                           "grad mode; torch._dynamo.config.cache_size_limit): new ones run eagerly")
                return self._eager(args, kwargs)
            entry = self.cache[key] = _Entry()
        if entry.eager_reason is not None:
            return self._eager(args, kwargs)
        if entry.tape is not None:
            return entry.tape.call(args, kwargs, tensors, roots, state)
        if entry.grads_in is not None:
            # (a compiled optimizer step: the gradients are its inputs, copied in on replay)
            grads_now = guards.optimizer_grads(roots)
            more, layout = guards.signature(grads_now, {})
            if layout != entry.grads_in:
                self._note("its optimizer's gradients changed shape or layout between calls")
                return self._eager(args, kwargs)
            tensors = tensors + more
        if entry.graph is not None:
            if (state, grads if entry.watch_grads else None) == entry.world:
                return self._replay(entry, tensors)
            entry.graph = None
            entry.calls = 0
            entry.probe = None
        entry.calls += 1
        if entry.calls <= WARMUP_CALLS:
            return self._warm_up(entry, args, kwargs)
        return self._capture(entry, tensors, roots, args, kwargs)

    def _eager(self, args, kwargs):
        self.compile_stats["eager"] += 1
        return self.fn(*args, **kwargs)

    def _warm_up(self, entry, args, kwargs):
        """An eager call. Where its outputs require grad and it ran no backward, the signature's
        later calls capture its forward and backward separately (_compile_autograd); where it
        steps an optimizer without a backward (a compiled opt.step), the gradients are inputs of
        its later calls (new tensors each step after zero_grad(set_to_none=True))."""
        backward = BACKWARD_RUNS[0]
        out = self._eager(args, kwargs)
        if BACKWARD_RUNS[0] != backward:
            return out
        if grad_mode.is_grad_enabled() and any(t.requires_grad for t in guards.flatten_out(out)[0]):
            entry.tape = Tape(self, entry)
            return out
        reached = guards.roots(self.fn, args, kwargs)
        if any(guards.kind(o) == "optimizer" for o in reached[0]):
            entry.grads_in = guards.signature(guards.optimizer_grads(reached), {})[1]
        return out

    def _capture(self, entry, tensors, roots, args, kwargs):
        rt = get_runtime()
        in_storages = guards.unique_storages(tensors)
        for s in in_storages:
            s.buffer_for_write()   # buffers taken and pending work run before recording
        backward = BACKWARD_RUNS[0]
        out, rec = guards.record_call(rt, entry.block, self.fn, args, kwargs, roots)
        entry.block = rec.error_block
        out_tensors, spec = guards.flatten_out(out)
        trained = BACKWARD_RUNS[0] != backward
        reason = guards.off_device(out_tensors, roots)
        if reason is None and not trained and any(t.requires_grad for t in out_tensors):
            reason = ("it returns a tensor that requires grad without running backward, and did not "
                      "on its first call")
        if reason is None and guards.grads_unset(rec.optimizers):
            reason = ("it sets the gradients to None after the optimizer step (zero_grad(set_to_none=True) "
                      "at its end): a replay's optimizer would find none. Call zero_grad at the start "
                      "of the step, or compile the model instead")
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
            graph = capture.build(rt, rec, in_storages, guards.unique_storages(out_tensors))
        except capture.Refused as e:
            rt.pool.trim(rt.pool.limit)
            self._give_up(entry, str(e))
            return out
        # a step that trains, steps an optimizer or reads gradients: they are guarded too
        entry.watch_grads = trained or entry.grads_in is None and (
            any(guards.kind(o) == "optimizer" for o in roots[0]) or guards.reads_grads(roots, rec))
        _, state, grads = guards.world(roots)
        entry.graph, entry.spec = graph, spec
        entry.world = (state, grads if entry.watch_grads else None)
        self.compile_stats["captures"] += 1
        return out

    def _give_up(self, entry, reason):
        entry.eager_reason = reason
        self._note(reason)

    def _note(self, reason):
        """A reason for eager calls, listed once in compile_stats (and warned once with
        TORCHWEB_COMPILE_WARN=1)."""
        reasons = self.compile_stats["reasons"]
        if reason in reasons:
            return
        reasons.append(reason)
        if os.environ.get("TORCHWEB_COMPILE_WARN"):
            name = getattr(self.fn, "__qualname__", repr(self.fn))
            warnings.warn(f"torchweb.compile: {name} runs eagerly: {reason}", stacklevel=4)

    def _replay(self, entry, tensors):
        self.compile_stats["replays"] += 1
        storages = entry.graph.replay(guards.unique_storages(tensors))
        return guards.rebuild(entry.spec, lambda i, shape, stride, offset, dtype, device:
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
