"""torch.optim.Optimizer: parameter groups, per-parameter state, state_dict in PyTorch's
layout, step hooks. Each optimizer writes its update as PyTorch's single-tensor function does
(`exp_avg.lerp_(grad, 1 - beta1)`, `param.addcdiv_(exp_avg, denom, value=-step_size)`) and has
a fusing scope run it (lazy/scope.py `update`) over the parameter, its gradient and its state:
on traced values, so that the update is one kernel per parameter and step (the parameters of a
group share one trace), or op by op where the tensors cannot be traced together. The step's
scalars (learning rate, bias corrections) are computed in Python doubles, as PyTorch's
single-tensor implementations compute them, and reach the kernel as float32 uniforms.

The `step` counter is a 0-d float32 tensor as in PyTorch: on the cpu device when numpy is there
(PyTorch keeps it on the CPU), else on the parameter's device; its value is cached on the
tensor so a step never reads the GPU back.
"""

import struct
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

from .._grads import zero_grads
from .._is_tensor import is_tensor
from ..autograd import grad_mode
from ..backends.cpu_arrays import array_for_write
from .._creation import tensor, zeros_like
from .. import _dtype
from ..backends.webgpu.runtime import _runtime
from ..lazy import collecting_scalars, fusing


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _f32(x):
    """x rounded to float32 (PyTorch's 0-d float32 state tensors)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def _typename(o):
    if is_tensor(o):
        return o._type_name()
    t = type(o)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


_HAS_NUMPY = []


def _scalar_device(p):
    """Where the 0-d step / mu_product tensors live: the cpu device (as PyTorch keeps them) when
    numpy is installed, else the parameter's device."""
    if not _HAS_NUMPY:
        try:
            import numpy  # noqa: F401  (optional dependency: only asking whether it is there)
            _HAS_NUMPY.append(True)
        except ImportError:
            _HAS_NUMPY.append(False)
    return "cpu" if _HAS_NUMPY[0] else p.device


def _scalar_tensor(value, p):
    t = tensor(_f32(value), dtype=_dtype.float32, device=_scalar_device(p))
    t.__dict__["_tw_value"] = (_f32(value), t._storage.version)
    rec = recording()
    if rec is not None and t.device.type == "webgpu":
        rec.exempt.add(t._storage._buffer_id)   # a replay's scalar hook makes it again
    return t


def check_nonnegative(**options):
    """PyTorch's checks of an optimizer's options, in the order given: each >= 0, else a
    ValueError naming it."""
    for name, value in options.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_OPTION_WORDS.get(name, name + ' value')}: {value}")


_OPTION_WORDS = {"lr": "learning rate", "eps": "epsilon value"}


def first_state(state, p, *zeros, **scalars):
    """A parameter's state at its first step, in PyTorch's key order: the step count at 0, other
    0-d float32 counters (scalars: name=value), and a zero tensor for each name in zeros (lazy
    zeros: the first update's kernel reads them, no kernel of their own)."""
    state["step"] = _scalar_tensor(0.0, p)
    for name, value in scalars.items():
        state[name] = _scalar_tensor(value, p)
    for name in zeros:
        state[name] = zeros_like(p)


def next_step(state, p):
    """The step count advanced by one (a float32 0-d tensor, as PyTorch's); its new value."""
    return _set_scalar(state, "step", _scalar_value(state["step"]) + 1, p)


def l2_grad(param, grad, weight_decay, maximize):
    """The gradient an update uses: negated to maximize, plus weight_decay * param (the L2
    penalty), as every single-tensor function of PyTorch begins."""
    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    return grad


def _scalar_value(t):
    """The value of a 0-d state tensor (a number stays a number), without a GPU readback when
    the value was cached at its last write."""
    if not is_tensor(t):
        return float(t)
    cached = t.__dict__.get("_tw_value")
    if cached is not None and cached[1] == t._storage.version:
        return cached[0]
    return float(t.item())


def _set_scalar(state, key, value, p):
    """state[key] = value (rounded to float32), in place (as PyTorch's `step += 1`): on the cpu
    device a host write, on webgpu an upload into its buffer (neither an op's dispatch: once per
    parameter and step). A fresh 0-d tensor for a new key, a webgpu one not float32, or while
    torchweb.compile records (a replay's scalar hook makes it again: _scalar_tensor)."""
    value = _f32(value)
    t = state.get(key)
    if not is_tensor(t) or t._shape:
        state[key] = _scalar_tensor(value, p)
        return value
    s = t._storage
    if t.device.type == "cpu":
        array_for_write(s)[t._offset] = value
    elif t.device.type == "webgpu" and t.dtype is _dtype.float32 and recording() is None:
        # Not a fresh tensor each step: its buffer would come from the pool as the old one's
        # went back, one parameter's step tensor taking the id the previous one's freed, so the
        # small buffers' ids rotated by one place a step (a 1-layer GPT's 19 parameters: the
        # same ids again after 38 steps), and each step bound new combinations of buffers:
        # bind groups made afresh (runtime.mjs caches them by buffer) for 38 steps, and again
        # whenever anything else shifted the pool. Without numpy (Pyodide) these tensors live
        # on the parameter's device: the page's soak grew its bind groups, natively flat.
        _runtime[0].upload(s.buffer_for_write(), t._offset * 4, struct.pack("<f", value))
    else:
        state[key] = _scalar_tensor(value, p)
        return value
    s.version += 1   # (Tensor._bump_version)
    t.__dict__["_tw_value"] = (value, s.version)
    return value


class _RemovableHandle:
    """What register_step_pre_hook/post_hook return: handle.remove() unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks):
        self.hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        self.hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _wrap_step(step):
    def wrapped(self, *args, **kwargs):
        if self.__dict__.get("_tw_in_step"):
            # a subclass's step calling super().step(): the hooks run once, around the outer one
            return step(self, *args, **kwargs)
        self._tw_in_step = True
        try:
            return _hooked(self, args, kwargs)
        finally:
            self._tw_in_step = False

    def _hooked(self, args, kwargs):
        for hook in list(self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        self._opt_called = True
        out = step(self, *args, **kwargs)
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapped.__doc__ = step.__doc__
    wrapped.__name__ = step.__name__
    wrapped._tw_wrapped = True
    return wrapped


class Optimizer:
    """Base class for all optimizers (torch.optim.Optimizer).

    params: an iterable of tensors, or of dicts (parameter groups: a "params" entry and the
    options that differ from `defaults`)."""

    __module__ = "torchweb.optim"
    _sparse_grads = False    # the update takes sparse gradients (SGD, Adagrad, SparseAdam)
    _sparse_refusal = None   # PyTorch's message where it refuses them, if not "<name> does not support ..."
    _eager_update = False    # the update runs tensor ops, not traced values: a capture is refused
    # _update is one fusing-scope update and nothing else that reads what it writes: eager steps
    # may then run two parameters' kernels as one (lazy/scope.py's pairing; Muon's Newton-Schulz
    # ops read its momentum kernel's output, so it keeps them one by one)
    _pairs_updates = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_tw_wrapped", False):
            cls.step = _wrap_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        if is_tensor(params):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors "
                            "or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(dict(group))

    # -- state -----------------------------------------------------------------------------
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", OrderedDict())

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def state_dict(self):
        """{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}, parameters
        numbered in the order of the groups (PyTorch's layout; the state tensors are the live
        ones, not copies)."""
        mapping = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if is_tensor(k) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def _cast_state(self, param, value, group, key=None):
        if is_tensor(value):
            if key == "step":
                return value
            if param.is_floating_point():
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
        if isinstance(value, dict):
            return {k: self._cast_state(param, v, group, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self._cast_state(param, v, group, key=key) for v in value)
        return value

    def load_state_dict(self, state_dict):
        """Load a state_dict() (this optimizer's or one of the same structure): group and
        parameter counts must match; state moves to each parameter's device and dtype."""
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the "
                             "size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = self._cast_state(param, v, None)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

    # -- grads and groups ------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None by default, else to zeros)."""
        zero_grads([p for group in self.param_groups for p in group["params"]], set_to_none)

    def step(self, closure=None):
        """Perform a single optimization step (closure: reevaluates the model, returns the loss)."""
        if type(self)._update is Optimizer._update:
            raise NotImplementedError
        return self._run_step(closure)

    def add_param_group(self, param_group):
        """Add a parameter group (a dict with "params" and any options that differ from the
        defaults) to param_groups."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if is_tensor(params):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but "
                            "the ordering of tensors in sets will change between runs. Please use a "
                            "list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
        for p in tensors:
            if not is_tensor(p):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization "
                                 f"parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see github.com/pytorch/pytorch/issues/40967 "
                          "for more information", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- hooks -----------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before each step."""
        handle = _RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, after each step."""
        handle = _RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    # -- the step loop shared by the subclasses --------------------------------------------
    def _run_step(self, closure, replaying=None):
        """The step; replaying: the kernel forms a captured call recorded (a replay's scalars are
        recomputed, and its kernels must have those forms)."""
        rec = None if replaying is not None else recording()
        captured = rec is not None or replaying is not None
        forms = [] if captured else None   # (this step's kernel forms)
        groups = [] if rec is not None else None   # (the captured kernels' pairs of updates)
        if rec is not None:
            if self._optimizer_step_pre_hooks or self._optimizer_step_post_hooks or closure is not None:
                rec.refuse("the optimizer has step hooks or a closure (Python a replay would skip)")
            if self._eager_update:
                rec.refuse(f"{type(self).__name__}'s update runs op by op (reductions, readbacks or "
                           "sparse indices): a replay could not recompute its scalars")
            rec.hooks.append(lambda: self._replay_scalars(forms, groups))
            rec.optimizers.append(self)
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        scope = fusing(captured, forms, pairing=self._pairs_updates, groups=groups)   # (an update: one kernel)
        _CAPTURED.append(captured)
        try:
            self._each_update(scope)
        finally:
            _CAPTURED.pop()
            scope.flush()
        if replaying is not None and forms != replaying:
            raise RuntimeError(f"torchweb.compile: {type(self).__name__}'s update no longer has the form it had when "
                               "the step was captured (an option changed inside the step?); the replay cannot "
                               "recompute its scalars")
        return loss

    def _each_update(self, scope):
        """Every parameter with a gradient updated (scope.update runs each one's kernel)."""
        with grad_mode.no_grad():
            for group in self.param_groups:
                update = self._group_update(group, scope.update)
                for p in group["params"]:
                    grad = p.grad
                    if grad is None:
                        continue
                    if getattr(grad, "is_sparse", False):
                        self._check_sparse_grad()
                    key = p
                    if p.dtype.is_complex:   # (as PyTorch: a complex parameter updated as its real view)
                        p, grad = p._r, grad._r
                    # self.state gets an entry only once an update stored something in it
                    # (SGD without momentum keeps none, as PyTorch's)
                    state = self.state.get(key)
                    if state is None:
                        state = {}
                        self._update(p, grad, state, group, update)
                        if state:
                            self.state[key] = state
                    else:
                        self._update(p, grad, state, group, update)

    def _group_update(self, group, update):
        """What _update runs its kernel with, made once per group and step: update itself
        (lazy/scope.py's fusing.update), or an optimizer's own with the group's options bound
        (Adam's: read once a step, as a scheduler may change them between steps)."""
        return update

    def _check_sparse_grad(self):
        """A sparse gradient: refused with PyTorch's message unless the update takes one; its
        update runs op by op, so a torchweb.compile capture is refused (a replay could not
        recompute it)."""
        if not self._sparse_grads:
            raise RuntimeError(self._sparse_refusal or f"{type(self).__name__} does not support sparse gradients")
        rec = recording()
        if rec is not None:
            rec.refuse(f"{type(self).__name__}'s update of a sparse gradient runs op by op")

    def _update(self, p, grad, state, group, update):
        """One parameter's update: its state made or advanced, then its single-tensor function
        run by update(fn, (p, grad, *state tensors), *numbers, **options) (lazy/scope.py)."""
        raise NotImplementedError

    def _replay_scalars(self, forms, groups=None):
        """For a captured step's replay (torchweb.compile): run the step's Python again, which
        advances the state's step counts, but collect each kernel's scalars instead of
        dispatching it (forms: the kernels' forms at capture, which they must keep; groups: the
        updates whose kernels the capture ran as one dispatch, whose scalars go together)."""
        with collecting_scalars() as sink:   # (each scope's kernel's, in order)
            self._run_step(None, replaying=forms)
        if groups:
            return [[v for i in group for v in sink[i]] for group in groups]
        return sink


_CAPTURED = []   # while a step runs: whether torchweb.compile captures or replays it (captured())


def captured():
    """Whether the step running is captured or replayed by torchweb.compile: an update whose
    form depends on the step count (RAdam's) then takes its branch-free form, as PyTorch's
    capturable one does, so that every replay runs the captured kernels."""
    return bool(_CAPTURED) and _CAPTURED[-1]


def recording():
    """The capture.Recorder if torchweb.compile is recording a call on the webgpu device, else
    None: the optimizer then registers how a replay recomputes its scalars."""
    rt = _runtime[0]
    return rt.capture if rt is not None else None


Optimizer.step = _wrap_step(Optimizer.step)   # (subclasses' own steps are wrapped by __init_subclass__)
