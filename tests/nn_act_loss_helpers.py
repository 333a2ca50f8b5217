"""Pairs of torchweb/PyTorch modules for the activation and loss module tests."""

import pytest
import torch

import torchweb
from oracle import ours, theirs


def pair(build, device):
    """build(nn) -> a module; the torchweb one on `device` and PyTorch's with torchweb's state
    (which checks the state_dict keys and shapes); the reprs must be equal."""
    mine = build(torchweb.nn).to(device)
    ref = build(torch.nn)
    assert repr(mine) == repr(ref), f"\n{mine!r}\n!=\n{ref!r}"
    sd = mine.state_dict()
    assert list(sd) == list(ref.state_dict()), (list(sd), list(ref.state_dict()))
    ref.load_state_dict({k: theirs(v) for k, v in sd.items()})
    return mine, ref


def check_ctor_error(build):
    """PyTorch's constructor refuses: torchweb's refuses with the same type and message."""
    try:
        build(torch.nn)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            build(torchweb.nn)
        assert str(info.value) == str(e), (str(info.value), str(e))
        return
    raise AssertionError("PyTorch accepted it")


def check_forward_error(build, inputs, device):
    """Both modules refuse `inputs` with the same exception type."""
    mine, ref = pair(build, device)
    with pytest.raises(Exception) as info:
        ref(*inputs)
    with pytest.raises(info.type):
        mine(*[ours(x, device) if isinstance(x, torch.Tensor) else x for x in inputs])
