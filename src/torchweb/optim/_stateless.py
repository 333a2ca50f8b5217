"""torch.optim.swap_in_optimizer_params_and_state, ported from PyTorch's torch/optim/_stateless.py:
an optimizer's parameters, group options and state replaced for the duration of a `with`
block by given tensors and an optimizer.state_dict()-shaped dict, then restored."""

import contextlib
from collections import defaultdict

from .._is_tensor import is_tensor

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _validate_state_field(state):
    """state: a dict of packed parameter ids -> per-parameter state dicts."""
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter "
                           f"ids to per-param state dicts, got {type(state).__name__}.")
    if any(is_tensor(k) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _validate_param_groups_field(optimizer, param_groups):
    if not isinstance(param_groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group "
                           f"dicts, got {type(param_groups).__name__}.")
    if len(optimizer.param_groups) != len(param_groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    return param_groups


def _validate_group_against_live(idx, group, swapin_group):
    """The swap-in group's packed parameter ids, after checking it against the live group (a
    dict, as many ids as parameters, the same keys)."""
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(pid, int) for pid in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                           f"live optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys "
                           f"only in live: {live_only}.")
    return ids


def _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state):
    """The swap-in state and, per group, (live group, swap-in group, its parameters): the
    parameters given in the order of optimizer.param_groups."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _validate_state_field(swapin_optim_state.get("state"))
    groups = _validate_param_groups_field(optimizer, swapin_optim_state.get("param_groups"))
    flat = list(swapin_parameters.values())
    offset = 0
    seen = set()
    infos = []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _validate_group_against_live(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        infos.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters, swapin_optim_state):
    """with swap_in_optimizer_params_and_state(optimizer, params, osd): inside, the optimizer's
    parameters are params' values (a dict, in the order of its groups), its group options and
    state osd's (an optimizer.state_dict()-shaped dict; in-place edits of its tensors reach
    osd, new entries do not); the live parameters, options and state are restored on exit."""
    state, infos = _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]   # (shallow: the params lists keep their identity)
    try:
        swapin_state = defaultdict(dict)
        for live_group, swapin_group, params in infos:
            live_group["params"] = params
            for key, value in swapin_group.items():
                if key != "params":
                    live_group[key] = value
            for p, pid in zip(params, swapin_group["params"]):
                swapin_state[p] = dict(state.get(pid, {}))
        optimizer.state = swapin_state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
