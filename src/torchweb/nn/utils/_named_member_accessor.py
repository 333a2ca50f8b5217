"""NamedMemberAccessor (PyTorch's nn/utils/_named_member_accessor.py): get, set, delete and swap
a module's tensors by dotted path ("layer1.conv1.weight"), submodule lookups cached. The
swaps write the module's _parameters/_buffers entries directly, so any tensor (not only a
Parameter) can stand in for a parameter, as functional_call needs."""

from ..._tensor import Tensor
from ..modules.module import Module

_MISSING = object()


def set_tensor(module, name, tensor):
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    if name in module._parameters:
        module._parameters[name] = tensor
    elif name in module._buffers:
        module._buffers[name] = tensor
    else:
        setattr(module, name, tensor)


def swap_tensor(module, name, tensor, allow_missing=False):
    """Puts tensor at module.<name> and returns what was there (_MISSING for nothing; tensor
    _MISSING deletes it)."""
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if "." in name:
        raise KeyError('tensor name can\'t contain "."')
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for table in (module._parameters, module._buffers):
        if name in table:
            orig = table[name]
            if tensor is not _MISSING:
                table[name] = tensor
            else:
                del table[name]
            return orig
    if hasattr(module, name):
        orig = getattr(module, name)
    else:
        if not allow_missing:
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        orig = _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor) and orig is not None:
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def swap_submodule(module, name, submodule):
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if not isinstance(submodule, Module):
        raise TypeError(f"{submodule} is not an instance of torch.nn.Module")
    if "." in name:
        raise KeyError('submodule name can\'t contain "."')
    if name == "":
        raise KeyError('submodule name can\'t be empty string ""')
    if name not in module._modules:
        raise KeyError(f"submodule {name} does not exist")
    orig = module._modules[name]
    if not isinstance(orig, Module):
        raise TypeError(f"{name} attribute is not an instance of torch.nn.Module")
    module._modules[name] = submodule
    return orig


class NamedMemberAccessor:
    """Access to a module's submodules and tensors by dotted path."""

    def __init__(self, module):
        self.module = module
        self.memo = {}

    def get_submodule(self, name):
        if not name:
            return self.module
        if name in self.memo:
            return self.memo[name]
        prefix, dot, attr = name.rpartition(".")
        module = self.get_submodule(prefix) if dot else self.module
        try:
            submodule = getattr(module, attr)
        except AttributeError as ex:
            raise AttributeError(f"{module._get_name()} has no attribute `{attr}`") from ex
        if not isinstance(submodule, Module):
            raise TypeError(f"submodule `{name}`: {submodule} is not an instance of torch.nn.Module")
        self.memo[name] = submodule
        return submodule

    def swap_submodule(self, path, value):
        prefix, _, attr = path.rpartition(".")
        return swap_submodule(self.get_submodule(prefix), attr, value)

    def get_tensor(self, name):
        prefix, _, attr = name.rpartition(".")
        submodule = self.get_submodule(prefix)
        try:
            tensor = getattr(submodule, attr)
        except AttributeError as ex:
            raise AttributeError(f"{submodule._get_name()} has no attribute `{name}`") from ex
        if not isinstance(tensor, Tensor) and tensor is not None:
            raise TypeError(f"{tensor} is not an instance of torch.Tensor")
        return tensor

    def set_tensor(self, name, value):
        prefix, _, attr = name.rpartition(".")
        set_tensor(self.get_submodule(prefix), attr, value)

    def del_tensor(self, name):
        prefix, _, attr = name.rpartition(".")
        submodule = self.get_submodule(prefix)
        try:
            delattr(submodule, attr)
        except AttributeError as ex:
            raise AttributeError(f"{submodule._get_name()} has no attribute `{name}`") from ex

    def swap_tensor(self, name, value, allow_missing=False):
        prefix, _, attr = name.rpartition(".")
        return swap_tensor(self.get_submodule(prefix), attr, value, allow_missing=allow_missing)

    def get_tensors(self, names):
        return [self.get_tensor(name) for name in names]

    def set_tensors(self, names, values):
        names, values = list(names), list(values)
        if len(names) != len(values):
            raise AssertionError(f"names and values must have the same length, got {len(names)} names and "
                                 f"{len(values)} values")
        for name, value in zip(names, values):
            self.set_tensor(name, value)

    def set_tensors_dict(self, named_tensors):
        for name, value in named_tensors.items():
            self.set_tensor(name, value)

    def del_tensors(self, names):
        for name in names:
            self.del_tensor(name)

    def swap_tensors(self, names, values, allow_missing=False):
        names, values = list(names), list(values)
        if len(names) != len(values):
            raise AssertionError(f"names and values must have the same length, got {len(names)} names and "
                                 f"{len(values)} values")
        return [self.swap_tensor(name, value, allow_missing=allow_missing) for name, value in zip(names, values)]

    def swap_tensors_dict(self, named_tensors, allow_missing=False):
        """Swaps every entry; on an error (or a missing key without allow_missing) puts the
        originals back. Returns (the originals, the missing keys)."""
        orig_named_tensors, missing_keys = {}, []
        try:
            for name, tensor in named_tensors.items():
                orig = self.swap_tensor(name, tensor, allow_missing=True)
                if orig is _MISSING:
                    missing_keys.append(name)
                orig_named_tensors[name] = orig
        except Exception:
            for name, orig in orig_named_tensors.items():
                self.swap_tensor(name, orig, allow_missing=True)
            raise
        if missing_keys and not allow_missing:
            for name, orig in orig_named_tensors.items():
                self.swap_tensor(name, orig, allow_missing=True)
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        return orig_named_tensors, missing_keys

    def check_keys(self, keys):
        """(missing keys, unexpected keys), each sorted."""
        keys = set(keys)
        valid_keys = {name for name, _ in self.named_tensors(remove_duplicate=False)}
        return sorted(valid_keys - keys), sorted(keys - valid_keys)

    def named_parameters(self, remove_duplicate=True):
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)

    def named_buffers(self, remove_duplicate=True):
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)

    def named_tensors(self, remove_duplicate=True):
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)

    def named_modules(self, remove_duplicate=True):
        yield from self.module.named_modules(remove_duplicate=remove_duplicate)
