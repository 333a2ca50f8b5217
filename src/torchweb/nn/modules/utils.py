"""Argument helpers of the layer modules (PyTorch's nn/modules/utils.py)."""

import collections.abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


ALWAYS = object()   # a default no value has: the option is always shown


def options_repr(module, head, options, fmt=format):
    """extra_repr text as PyTorch writes it for layers with many options: head, then ", name=value"
    for each (name, default) of options whose value is not PyTorch's default (None, True and False
    compared by identity, numbers by value); fmt formats the values."""
    parts = [head]
    for name, default in options:
        value = getattr(module, name)
        if value is not default if default is None or isinstance(default, bool) else value != default:
            parts.append(f"{name}={fmt(value)}")
    return ", ".join(parts)


def _reverse_repeat_tuple(t, n):
    """(1, 2) with n=2 -> (2, 2, 1, 1): F.pad's order from a conv's padding."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strips `prefix` from the keys of state_dict (and its _metadata) that start with it, in place."""
    keys = list(state_dict.keys())
    for key in keys:
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    if hasattr(state_dict, "_metadata"):
        for key in list(state_dict._metadata.keys()):
            if len(key) == 0:
                continue
            if key == prefix.replace(".", "") or key.startswith(prefix):
                newkey = key[len(prefix):]
                state_dict._metadata[newkey] = state_dict._metadata.pop(key)
