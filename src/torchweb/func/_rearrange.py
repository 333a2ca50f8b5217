"""torch.func.rearrange: einops' rearrange (https://einops.rocks/api/rearrange/) as an
unflatten of each input group into the pattern's elementary axes, one permute and one reshape
into the output's groups.

A pattern is `left -> right`; each side is a list of groups: a name (`b`), a parenthesized
composition (`(h w)`), `...` for the dims no name covers, and `1` or `()` for a unit axis.
Messages are PyTorch's (functorch/einops) for the mistakes users make."""

import math
import re

from .._is_tensor import is_tensor
from ..ops.join import stack

__all__ = ["rearrange"]

_TOKEN = re.compile(r"\(|\)|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")
_ELLIPSIS = "…"


def _parse(side):
    """[group, ...], a group being a list of names (empty: a unit axis) and whether it was in
    parentheses; the ellipsis is the name '…'."""
    groups, current = [], None
    for tok in _TOKEN.findall(side):
        if tok == "(":
            if current is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError("Brackets are not balanced")
            groups.append((current, True))
            current = None
        else:
            if tok == "...":
                name = _ELLIPSIS
            elif tok.isdigit():
                if tok != "1":
                    raise ValueError("rearrange only supports unnamed axes of size 1")
                name = None
            elif tok[0].isalpha() or tok[0] == "_":
                name = tok
            else:
                raise ValueError(f"Unknown character '{tok}'")
            names = [] if name is None else [name]
            if current is None:
                groups.append((names, False))
            else:
                current.extend(names)
    if current is not None:
        raise ValueError(f"Imbalanced parentheses in expression: '{side}'")
    return groups


def _identifiers(groups):
    names = [n for names, _ in groups for n in names]
    for n in names:
        if names.count(n) > 1 and n != _ELLIPSIS:
            raise ValueError(f"Indexing expression contains duplicate dimension '{n}'")
    return set(names)


def rearrange(tensor, pattern, **axes_lengths):
    """tensor (or a sequence of tensors, stacked first) rearranged as pattern says."""
    if not is_tensor(tensor):
        tensor = stack(list(tensor))
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separator")
    left_str, right_str = pattern.split("->")
    left, right = _parse(left_str), _parse(right_str)
    left_ids, right_ids = _identifiers(left), _identifiers(right)
    if _ELLIPSIS in right_ids and _ELLIPSIS not in left_ids:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if any(_ELLIPSIS in names and paren for names, paren in left):
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    difference = left_ids ^ right_ids
    if difference:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {difference}")
    unmatched = axes_lengths.keys() - left_ids
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    ndim = tensor.dim()
    if _ELLIPSIS in left_ids:
        named = sum(1 for names, _ in left if not names) + len(left_ids) - 1
        if named > ndim:
            raise ValueError(f"Number of dimensions in pattern ({named}) must be less than or equal to the number "
                             f"of dimensions in the tensor ({ndim})")
        dots = [f"{_ELLIPSIS}{i}" for i in range(ndim - (len(left) - 1))]
    else:
        if len(left) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the number of "
                             f"dimensions in the tensor ({ndim})")
        dots = []

    def expand(groups):
        out = []
        for names, paren in groups:
            if names == [_ELLIPSIS] and not paren:
                out.extend([d] for d in dots)
            else:
                out.append([d for n in names for d in (dots if n == _ELLIPSIS else [n])])
        return out
    left_groups, right_groups = expand(left), expand(right)
    # the left groups split into elementary axes (unflatten infers a group's one unknown length)
    x = tensor
    for i in reversed(range(len(left_groups))):
        names = left_groups[i]
        unknown = [n for n in names if n not in axes_lengths]
        if len(unknown) > 1:
            raise ValueError(f"Could not infer sizes for {set(unknown)}")
        if names:
            x = x.unflatten(i, [axes_lengths.get(n, -1) for n in names])
        elif x.shape[i] != 1:
            raise ValueError(f"Shape mismatch, {x.shape[i]} != 1")
        else:
            x = x.squeeze(i)
    order = [n for names in left_groups for n in names]
    sizes = dict(zip(order, x.shape))
    target = [n for names in right_groups for n in names]
    permuted = x.permute(tuple(order.index(n) for n in target))
    return permuted.reshape(tuple(math.prod(sizes[n] for n in names) for names in right_groups))
