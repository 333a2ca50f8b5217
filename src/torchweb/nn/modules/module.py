"""nn.Module: PyTorch's base class of layers, with its registration, traversal, state_dict,
device/dtype moves, train/eval and hooks, so that model files written for PyTorch run unchanged."""

import functools
import itertools
from collections import OrderedDict, namedtuple

from ..._grads import zero_grads
from ..._tensor import Tensor
from ...autograd import grad_mode
from ..parameter import Parameter, Buffer, is_lazy
from . import _hooks
from ... import _dtype
from ..._creation import empty_like
from ..._device import as_device
from ..._float64 import refusal


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, num_spaces):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


def _type_name(value):
    return value._type_name() if isinstance(value, Tensor) else type(value).__name__


def _values(named):
    """The values of (name, value) pairs, lazily: parameters() and buffers() from their named forms."""
    for _, v in named:
        yield v

class Module:
    """Base class for all neural network modules (PyTorch's nn.Module)."""

    __module__ = "torchweb.nn"
    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given" if args else
                            f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", {})
        setattr_(self, "_forward_hooks_always_called", {})
        setattr_(self, "_backward_pre_hooks", OrderedDict())
        setattr_(self, "_backward_hooks", OrderedDict())
        setattr_(self, "_state_dict_hooks", OrderedDict())
        setattr_(self, "_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_pre_hooks", OrderedDict())
        setattr_(self, "_load_state_dict_post_hooks", OrderedDict())

    forward = None  # replaced by subclasses; _call_impl explains a missing one

    # -- registration --------------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach()
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                "the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        *path, last = target.split(".")
        parent = self.get_submodule(".".join(path))
        if strict and not hasattr(parent, last):
            raise AttributeError(parent._get_name() + " has no attribute `" + last + "`")
        setattr(parent, last, module)

    def _get_member(self, target, table, what):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in getattr(mod, table):
            raise AttributeError("`" + name + "` is not an nn." + what)
        return getattr(mod, name)

    def get_parameter(self, target):
        return self._get_member(target, "_parameters", "Parameter")

    def get_buffer(self, target):
        return self._get_member(target, "_buffers", "Buffer")

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    # -- attributes ----------------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*tables):
            for table in tables:
                if name in table:
                    if table is d.get("_buffers"):
                        d["_non_persistent_buffers_set"].discard(name)
                    del table[name]

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, d["_buffers"], d["_modules"])
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in d:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, d["_parameters"], d["_buffers"])
            d["_modules"][name] = value
        elif "_modules" in d and name in d["_modules"]:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif isinstance(value, Buffer) or ("_buffers" in d and name in d["_buffers"]):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                if "_buffers" not in d:
                    raise AttributeError("cannot assign buffer before Module.__init__() call")
                remove_from(d, d["_parameters"], d["_modules"])
                self.register_buffer(name, value)
            else:
                d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for table in ("_parameters", "_buffers", "_modules"):
            t = self.__dict__.get(table)
            if t is not None and name in t:
                del t[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__)
        keys |= set(self._parameters) | set(self._buffers) | set(self._modules)
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- traversal -----------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        return _values(self.named_parameters(recurse=recurse))

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        return _values(self.named_buffers(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self):
        return _values(self.named_children())

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        return _values(self.named_modules())

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes ---------------------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    def share_memory(self):
        return self

    # -- device and dtype ----------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with grad_mode.no_grad():
                applied = fn(param)
            # PyTorch keeps the Parameter object (optimizers hold it) and swaps its data
            param.data = applied
            if param.grad is not None:
                with grad_mode.no_grad():
                    param.grad.data = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        device, dtype, _non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")

        def convert(t):
            return t.to(device, dtype if t.is_floating_point() else None)
        return self._apply(convert)

    def to_empty(self, *, device=None, recurse=True):
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        # webgpu, the GPU torchweb has (Tensor.cuda)
        return self._apply(lambda t: t.cuda(device))

    def _cast_floats(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self):
        return self._cast_floats(_dtype.float32)

    def half(self):
        return self._cast_floats(_dtype.float16)

    def double(self):
        raise refusal("Module.double() (float64 parameters)")

    def bfloat16(self):
        return self._cast_floats(_dtype.bfloat16)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    # -- state_dict ----------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:  # PyTorch's deprecated positional form: (destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "torch.Tensor or Tensor-like object from checkpoint but received "
                                  f"{type(value)}")
                continue
            if is_lazy(param):
                continue   # still uninitialized (a lazy module's hook materializes what it can first)
            if param.dim() == 0 and value.dim() == 1 and value.numel() == 1:
                value = value[0]  # PyTorch's backward compatibility for 0-d parameters
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model is "
                                  f"{param.shape}.")
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        self._assign_loaded(name, param, value)
                    else:
                        param.copy_(value)
            except Exception as e:  # noqa: BLE001 (reported like PyTorch, with the cause)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                                  f"the model are {param.shape} and whose dimensions in the "
                                  f"checkpoint are {value.shape}, an exception occurred : {e.args}.")
        extra_key = prefix + "_extra_state"
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    first = key[len(prefix):].split(".", 1)[0]
                    if first not in self._modules and first not in local_state:
                        unexpected_keys.append(key)

    def _assign_loaded(self, name, param, value):
        if name in self._parameters:
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=param.requires_grad)
            else:
                value.requires_grad_(param.requires_grad)
            self._parameters[name] = value
        else:
            self._buffers[name] = value

    def load_state_dict(self, state_dict, strict=True, assign=False):
        from collections.abc import Mapping
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state_dict.items()
                                   if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            result = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def register_state_dict_pre_hook(self, hook):
        return _hooks.add(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        return _hooks.add(self._state_dict_hooks, hook)

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        def call(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
            hook(self, state_dict, prefix, local_metadata, strict, missing, unexpected, errors)
        return _hooks.add(self._load_state_dict_pre_hooks, call)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        if with_module:
            hook = functools.partial(hook, self)
        return _hooks.add(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook):
        return _hooks.add(self._load_state_dict_post_hooks, hook)

    # -- hooks and calling ---------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = _hooks.add(self._forward_pre_hooks, hook, prepend,
                            extra=(self._forward_pre_hooks_with_kwargs,))
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        handle = _hooks.add(self._forward_hooks, hook, prepend,
                            extra=(self._forward_hooks_with_kwargs,
                                   self._forward_hooks_always_called))
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return _hooks.add(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        return _hooks.add(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        raise NotImplementedError("Module.register_backward_hook (the deprecated form) is not "
                                  "supported: use register_full_backward_hook")

    def _call_impl(self, *args, **kwargs):
        forward = self.forward
        if forward is None:
            raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                      '"forward" function')
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return forward(*args, **kwargs)
        return _hooks.call_with_hooks(self, forward, args, kwargs)

    __call__ = _call_impl

    # -- printing ------------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def compile(self, *args, **kwargs):
        """torch.compile is not there yet: the module runs eagerly (same results)."""
        return None


def _check_name(name, what):
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')


def _parse_to(*args, **kwargs):
    """Module.to's arguments: (device), (dtype), (device, dtype), (tensor), with keywords."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (_dtype.dtype, _dtype._UnsupportedDtype)):
            dtype = a
        elif isinstance(a, bool):
            non_blocking = a
        elif a is not None:
            device = a
    if dtype is not None:
        dtype = _dtype.as_dtype(dtype)  # float64 and friends: torchweb's TypeError naming them
    return (as_device(device) if device is not None else None), dtype, non_blocking

