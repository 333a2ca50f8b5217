"""What torchweb.compile keys a capture on and what it checks before replaying one: the input
signature, the objects a function reaches (its roots), the state of those objects (its world),
the Python attributes and random generators a recorded call may not change (record_call), and
the outputs' structure (flattened to tensors and rebuilt around new storages)."""

from ._is_tensor import is_tensor
from . import _dtype, _random
from .autograd import grad_mode
from .backends.webgpu import capture
from .backends.webgpu.runtime import _runtime
from .compiler import _CAPTURING
from .nn.modules.module import Module
from .optim.lr_scheduler import LRScheduler
from .optim.optimizer import Optimizer


def webgpu_ready():
    return _runtime[0] is not None


def capturing_now():
    """Whether an outer compiled call is recording (a compiled module inside a compiled step)."""
    rt = _runtime[0]
    return rt is not None and rt.capture is not None


def signature(args, kwargs):
    """(input tensors in order, hashable key), or (None, None) if an argument can't be keyed."""
    tensors, parts = [], []
    storage_index = {}
    try:
        _visit(args, tensors, parts, storage_index)
        _visit(kwargs, tensors, parts, storage_index)
    except TypeError:
        return None, None
    parts.append((grad_mode.is_grad_enabled(), _dtype.get_default_dtype().name))
    return tensors, tuple(parts)


def _visit(x, tensors, parts, storage_index):
    # (a module function, not a closure of signature(): a recursive closure is a reference
    # cycle, which kept each call's input tensors, and their GPU buffers, until a collection)
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
            _visit(v, tensors, parts, storage_index)
    elif isinstance(x, dict):
        parts.append(("dict", tuple(x)))
        for v in x.values():
            _visit(v, tensors, parts, storage_index)
    elif x is None or isinstance(x, (bool, int, float, str)):
        parts.append((type(x).__name__, x))
    else:
        parts.append(("obj", id(x)))     # modules, optimizers: guarded through world()


def roots(fn, args, kwargs):
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
        if kind(v) is not None and all(v is not o for o in objs):
            objs.append(v)
    return objs, tuple(scalars)


_KINDS = ((Module, "module"), (Optimizer, "optimizer"), (LRScheduler, "scheduler"))
_KIND_OF_TYPE = {}   # type -> its kind (or None): roots() asks for every global a function names


def kind(v):
    t = type(v)
    try:
        return _KIND_OF_TYPE[t]
    except KeyError:
        pass
    except TypeError:   # (an unhashable type: a metaclass defining __eq__ without __hash__)
        return _kind(v)
    if len(_KIND_OF_TYPE) > 1024:   # (classes made on the fly, e.g. in a loop: kept bounded)
        _KIND_OF_TYPE.clear()
    k = _KIND_OF_TYPE[t] = _kind(v)
    return k


def _kind(v):
    for cls, name in _KINDS:
        if isinstance(v, cls):
            return name
    return None


_SKIPPED_OPTIONS = frozenset(("params", "lr", "initial_lr"))


def world(reached):
    """What a replay needs to be unchanged since the capture, in three flat tuples: the modules'
    training flags (part of the capture's key: train and eval forwards are two captures), the
    rest (parameter, buffer and optimizer-state tensors, hooks, options, global scalars), and
    the gradients' storages (guarded only for calls that use them: a training step, not a
    module's forward). Built with plain loops and a tuple per parameter (`out += (...)`: fewer
    bytecodes than an append per field): it is computed on every call."""
    objs, scalars = reached
    modes, out, grads = [], [scalars], []
    add_grad = grads.append
    for o in objs:
        k = kind(o)
        if k == "module":
            stack = [o]
            while stack:
                m = stack.pop()
                d = m.__dict__
                modes.append(d["training"])
                out += (id(m), len(d["_forward_hooks"]) + len(d["_forward_pre_hooks"]))
                for n, p in d["_parameters"].items():
                    if p is None:
                        out += (n, None)
                        continue
                    out += (n, id(p), id(p._storage), p._offset, p._shape, p._requires_grad)
                    g = p.grad
                    add_grad(None if g is None else id(g._storage))
                for n, b in d["_buffers"].items():
                    out += (n, None if b is None else id(b._storage))
                mods = d["_modules"]
                out.append(len(mods))
                stack.extend(c for c in mods.values() if c is not None)
        elif k == "optimizer":
            state = o.state
            for g in o.param_groups:
                for n, v in g.items():
                    if n in _SKIPPED_OPTIONS or isinstance(v, (list, dict)):
                        continue
                    out += (n, v if isinstance(v, (bool, str, type(None))) else v == 0)
                for p in g["params"]:
                    out.append(id(p._storage))
                    gr = p.grad
                    add_grad(None if gr is None else id(gr._storage))
                    st = state.get(p)
                    if st:
                        for n, v in st.items():
                            if n != "step" and is_tensor(v):
                                out += (n, id(v._storage))
    return tuple(modes), tuple(out), tuple(grads)


def optimizer_grads(reached):
    """The gradients of the reachable optimizers' parameters (None where unset), in order: the
    inputs of a compiled optimizer step (they are new tensors after zero_grad(set_to_none=True))."""
    out = []
    for o in reached[0]:
        if kind(o) == "optimizer":
            for g in o.param_groups:
                for p in g["params"]:
                    out.append(p.grad)
    return out


def reads_grads(reached, rec):
    """Whether the recording used a gradient of a reachable module's or optimizer's parameter
    (then the gradients are part of the capture's world: replaced ones mean capturing again)."""
    used = {id(s) for s in rec.storages.values()}
    objs = reached[0]
    params = [p for o in objs if kind(o) == "module" for p in o.parameters()]
    params += [p for o in objs if kind(o) == "optimizer" for g in o.param_groups for p in g["params"]]
    return any(p.grad is not None and id(p.grad._storage) in used for p in params)


def grads_unset(optimizers):
    """Whether a parameter of these optimizers that requires grad has none (a step that clears
    the gradients after updating: its replay would find none to update with)."""
    for o in optimizers:
        for g in o.param_groups:
            for p in g["params"]:
                if p.grad is None and p.requires_grad:
                    return True
    return False


def effects(reached):
    """Python scalar attributes of the reachable modules and schedulers (a capture that
    changes them cannot be replayed)."""
    objs, _ = reached
    out = []
    for o in objs:
        items = o.modules() if kind(o) == "module" else [o]
        for m in items:
            out.append(tuple((n, v) for n, v in vars(m).items()
                             if isinstance(v, (bool, int, float, str, type(None)))))
    return tuple(out)


def record_call(rt, block, fn, args, kwargs, reached):
    """Run fn(*args, **kwargs) eagerly while its GPU work is recorded (block: the errors block
    of the signature's earlier recordings, or None): (its result, the Recorder), the recorder
    refusing a call that changed what a replay would not (Python attributes of the modules,
    optimizers and schedulers reached, generators advanced other than by device kernels)."""
    before, rng = effects(reached), rng_state()
    rec = capture.start(rt, block)
    _CAPTURING[0] += 1    # torch.compiler.is_compiling() is True while the Python records
    try:
        out = fn(*args, **kwargs)
    finally:
        _CAPTURING[0] -= 1
        capture.stop(rt, rec)
    if effects(reached) != before:
        rec.refuse("it changes Python attributes of a module, optimizer or scheduler it uses "
                   "(a replay would not)")
    if not advanced_by(rng, rng_state(), rec.redraws):
        rec.refuse("it draws random numbers that a replay cannot draw again (randperm, a sampler, "
                   "a reseed inside the call)")
    return out, rec


def rng_state():
    return tuple((k, g.get_state()) for k, g in sorted(_random._generators.items()))


def advanced_by(before, after, draws):
    """Whether the generators went from `before` to `after` (rng_state()s) by `draws` calls in
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


def off_device(out_tensors, reached):
    """Why the call's tensors cannot all be replayed on the webgpu device, or None."""
    for t in out_tensors:
        if getattr(t._storage, "device_type", None) != "webgpu":
            return "it returns a tensor that is not on the webgpu device"
    for o in reached[0]:
        if kind(o) == "module":
            for t in list(o.parameters()) + list(o.buffers()):
                if getattr(t._storage, "device_type", None) != "webgpu":
                    return "a module it uses has parameters or buffers off the webgpu device"
    return None


def unique_storages(tensors):
    seen, out = set(), []
    for t in tensors:
        if id(t._storage) not in seen:
            seen.add(id(t._storage))
            out.append(t._storage)
    return out


def flatten_out(out):
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


def rebuild(spec, make):
    """The structure flatten_out described, each tensor made by make(*its spec fields)."""
    tag = spec[0]
    if tag == "T":
        return make(*spec[1:])
    if tag == "V":
        return spec[1]
    if tag is dict:
        return {k: rebuild(v, make) for k, v in spec[1].items()}
    return tag(rebuild(v, make) for v in spec[1])
