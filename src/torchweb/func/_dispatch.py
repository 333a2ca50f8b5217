"""How ops reach batched tensors. While a vmap runs, the op names users call (torch.*,
torch.nn.functional.*, and Tensor's methods and operators) are routed: a call with a batched
argument goes to the batching rule for the op's name (func/_rules_*.py), which moves batch
dims to the front and calls the op once on the whole batch; an op without a rule runs once per
batch entry (the fallback loop) after a one-time warning naming it. Outside vmap nothing is
routed, so the per-op path costs nothing extra.

Calls without a batched argument go straight to the op, except random ops, which follow the
level's randomness= rule (a 'different' draw is batched)."""

import functools
import inspect
import warnings

import torchweb
from .._is_tensor import is_tensor
from .. import _tensor_methods as TM
from ..nn import functional as F
from ..ops.registry import torch_names, functional_names, method_names
from ..utils._pytree import tree_flatten, tree_unflatten, tree_map
from ._batched import BatchedTensor, wrap, level_by_id, active_levels, to_front
from ._randomness import RandomnessScope
from . import _random_ops

_installed = {"depth": 0, "routed": {}, "in_dispatch": 0}    # routed: id(op) -> its routed form
_warned = set()
RULES = {}           # op name -> rule(call); filled by the _rules_* modules
_SIGNATURES = {}


def rule(*names):
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return deco


class Call:
    """One op call at one level: its bound arguments, for a rule to rewrite and run."""
    __slots__ = ("name", "fn", "level", "bound", "lid", "size")

    def __init__(self, name, fn, level, bound):
        self.name, self.fn, self.level, self.bound = name, fn, level, bound
        self.lid, self.size = level.id, level.size      # (the level's id and batch size)

    def get(self, key, default=None):
        """The argument's value: as passed, else the op's default for it, else `default`."""
        arguments = self.bound.arguments
        if key in arguments:
            return arguments[key]
        param = self.bound.signature.parameters.get(key)
        return default if param is None or param.default is param.empty else param.default

    def first(self):
        """(the first argument's name, its value, that value with this level's batch dim first,
        whether it is batched here)."""
        key = next(iter(self.bound.arguments))
        x = self.bound.arguments[key]
        v, batched = to_front(x, self.level.id)
        return key, x, v, batched

    def set(self, key, value):
        self.bound.arguments[key] = value

    def run(call, /, **changes):     # (positional-only: an op's first parameter may be called self)
        for k, v in changes.items():
            call.bound.arguments[k] = v
        args, kwargs = call.bound.args, call.bound.kwargs
        if _at_level(args, kwargs, call.level.id):
            raise _NoRule     # an argument the rule does not handle: the loop instead of recursing
        return call.fn(*args, **kwargs)


class _NoRule(Exception):
    pass


def _levels_in(args, kwargs):
    """The levels of the batched tensors among the arguments (and in list or tuple arguments)."""
    for a in list(args) + list(kwargs.values()):
        for e in (a if type(a) in (list, tuple) else (a,)):
            if type(e) is BatchedTensor:
                yield e._level


def _at_level(args, kwargs, lid):
    return any(level == lid for level in _levels_in(args, kwargs))


# -- routing ------------------------------------------------------------------------------------

def _batched_in(args, kwargs):
    for a in args:
        t = type(a)
        if t is BatchedTensor or ((t is list or t is tuple) and any(type(e) is BatchedTensor for e in a)):
            return True
    if kwargs:
        return _batched_in(tuple(kwargs.values()), None)
    return False


def _top_level(args, kwargs):
    return level_by_id(max(_levels_in(args, kwargs)))


def _routed(name, orig):
    random = name in _random_ops.RANDOM

    def f(*args, **kwargs):
        if _batched_in(args, kwargs):
            return dispatch(name, orig, f, args, kwargs)
        if random and not _installed["in_dispatch"]:    # (a rule's own call runs as asked)
            return _random_ops.unbatched(orig, args, kwargs)
        return orig(*args, **kwargs)
    functools.update_wrapper(f, orig)
    f._vmap_orig = orig
    return f


def _target_names():
    """(owner, names) for every routed name, found once."""
    if "names" not in _installed:
        tensor_names = set(method_names()) | set(TM.OPERATORS) | set(TM.INPLACE) | set(TM.METHODS) | {"type_as", "type"}
        _installed["names"] = ((torchweb, sorted(set(torch_names()) | _random_ops.FACTORIES)),
                               (F, sorted(functional_names())), (torchweb.Tensor, sorted(tensor_names)),
                               (torchweb.linalg, _public(torchweb.linalg)), (torchweb.special, _public(torchweb.special)))
    return _installed["names"]


def _public(module):
    return sorted(n for n, v in vars(module).items() if not n.startswith("_") and callable(v)
                  and getattr(v, "__module__", "").startswith("torchweb") and n not in _NOT_OPS)


_NOT_OPS = {"is_tensor", "no_grad", "tensor", "refuse_the_rest"}


def install():
    """Route the namespaces (the outermost vmap calls this; nested ones count)."""
    if _installed["depth"] == 0:
        plan = _installed.get("plan")
        if plan is None:
            plan = _installed["plan"] = [[owner, name, None, None] for owner, names in _target_names()
                                         for name in names]
        routed = _installed["routed"]
        for entry in plan:
            owner, name, orig, r = entry
            now = owner.__dict__.get(name)
            if now is not orig:        # (first use, or the name was set again since)
                if not callable(now) or isinstance(now, type):
                    entry[2] = entry[3] = None
                    continue
                entry[2], entry[3] = now, _routed(name, now)
                routed[id(now)] = entry[3]
                orig, r = now, entry[3]
            if r is not None:
                setattr(owner, name, r)
    _installed["depth"] += 1


def uninstall():
    _installed["depth"] -= 1
    if _installed["depth"] == 0:
        for owner, name, orig, r in _installed["plan"]:
            if r is not None:
                setattr(owner, name, orig)


def routed_form(fn):
    """The routed function for fn, an op captured before vmap started (vmap(torch.sin),
    functools.partial(torch.mul, ...)); fn itself otherwise."""
    if isinstance(fn, functools.partial):
        inner = routed_form(fn.func)
        return fn if inner is fn.func else functools.partial(inner, *fn.args, **fn.keywords)
    r = _installed["routed"].get(id(fn))
    return r if r is not None and r._vmap_orig is fn else fn


# -- dispatch -----------------------------------------------------------------------------------

def _signature(orig):
    sig = _SIGNATURES.get(orig, False)
    if sig is False:
        try:
            sig = inspect.signature(orig)
        except (TypeError, ValueError):
            sig = None
        _SIGNATURES[orig] = sig
    return sig


def dispatch(name, orig, routed, args, kwargs):
    _installed["in_dispatch"] += 1
    try:
        return _dispatch(name, orig, routed, args, kwargs)
    finally:
        _installed["in_dispatch"] -= 1


def _dispatch(name, orig, routed, args, kwargs):
    level = _top_level(args, kwargs)
    if name in _random_ops.RANDOM:
        # one batched draw by the rule ('different'), or one draw per entry from the same
        # generator state ('same'); 'error' raises at the draw
        mode = _random_ops.mode_of([lvl for lvl in active_levels() if lvl.id <= level.id])
        if mode != "same":
            with RandomnessScope(mode):
                out = _by_rule(name, orig, routed, level, args, kwargs)
            if out is not NotImplemented:
                return out
        return fallback(name, routed, level, args, kwargs, warn=False, randomness=mode)
    out = _by_rule(name, orig, routed, level, args, kwargs)
    return fallback(name, routed, level, args, kwargs) if out is NotImplemented else out


def _by_rule(name, orig, routed, level, args, kwargs):
    """The op's rule's result, or NotImplemented where it has none or declines the call."""
    r = RULES.get(name)
    bound = _bind(orig, args, kwargs) if r is not None else None
    if bound is None:
        return NotImplemented
    try:
        return r(Call(name, routed, level, bound))
    except _NoRule:
        return NotImplemented


def _bind(orig, args, kwargs):
    sig = _signature(orig)
    if sig is None:
        return None
    try:
        return sig.bind(*args, **kwargs)
    except TypeError:
        return None


def warn_fallback(name):
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the batching rule for "
                      f"{name}. Please file us an issue on GitHub so that we can prioritize its implementation.",
                      UserWarning, stacklevel=4)


def entry_of(tree, lid, b):
    return tree_map(lambda x: x._value.select(x._bdim, b) if type(x) is BatchedTensor and x._level == lid else x, tree)


def zero_entry(tree, lid):
    return tree_map(lambda x: x._value.new_zeros(tuple(x.shape)) if type(x) is BatchedTensor and x._level == lid
                    else x, tree)


def fallback(name, fn, level, args, kwargs, warn=True, randomness=None):
    """fn run once per batch entry of the level, results stacked at dim 0 (the loop)."""
    if warn:
        warn_fallback(name)
    lid, size = level.id, level.size
    if size == 0:
        a, k = zero_entry((args, kwargs), lid)
        return stack_entries(name, [fn(*a, **k)], lid, size)
    outs = []
    in_place = False
    with RandomnessScope(randomness or level.randomness) as scope:
        for b in range(size):
            if b:
                scope.next_entry()
            a, k = entry_of((args, kwargs), lid, b)
            outs.append(fn(*a, **k))
            in_place = bool(a) and outs[-1] is a[0] and type(args[0]) is BatchedTensor
    if in_place:            # an in-place op: the entries were views of its value
        return args[0]
    return stack_entries(name, outs, lid, size)


def stack_entries(name, outs, lid, size):
    flat0, spec = tree_flatten(outs[0])
    columns = [flat0] + [tree_flatten(o)[0] for o in outs[1:]]
    res = []
    for i, first in enumerate(flat0):
        col = [c[i] for c in columns]
        if is_tensor(first):
            s = torchweb.stack(col, 0)
            res.append(wrap(s.narrow(0, 0, 0) if size == 0 else s, 0, lid))
        elif all(c == first for c in col[1:]):
            res.append(first)
        else:
            raise RuntimeError(f"vmap: {name} returned different non-tensor values for the entries of the batch")
    return tree_unflatten(res, spec)
