"""The backend contract (backends/base.py) holds for both backends, as backend_for returns them:
each has every primitive with the Protocol's parameters, every capability flag with its
declared type, and no public function the Protocol does not list (so the contract cannot drift)."""

import inspect
import types
import typing

import pytest

from torchweb.backends import backend_for, plans
from torchweb.backends.base import Backend

DEVICES = ["cpu", "webgpu"]


def _protocol_methods():
    return {name: fn for name, fn in vars(Backend).items()
            if not name.startswith("_") and inspect.isfunction(fn)}


def _protocol_flags():
    return typing.get_type_hints(Backend)


def _params(fn, drop_self):
    ps = list(inspect.signature(fn).parameters.values())
    if drop_self:
        ps = ps[1:]
    return [(p.name, p.kind) for p in ps]


def _public_callables(module):
    return {name for name, v in vars(module).items()
            if not name.startswith("_") and callable(v) and not isinstance(v, types.ModuleType)}


@pytest.mark.parametrize("device", DEVICES)
def test_backend_is_a_backend(device):
    assert isinstance(backend_for(device), Backend)
    assert backend_for(device).name == device


@pytest.mark.parametrize("device", DEVICES)
def test_every_primitive_has_the_protocols_parameters(device):
    be = backend_for(device)
    wrong = []
    for name, spec in _protocol_methods().items():
        fn = getattr(be, name, None)
        if fn is None or not callable(fn):
            wrong.append(f"{name}: missing")
            continue
        if _params(fn, False) != _params(spec, True):
            wrong.append(f"{name}: {inspect.signature(fn)} != {inspect.signature(spec)} (less self)")
        if inspect.iscoroutinefunction(fn) != inspect.iscoroutinefunction(spec):
            wrong.append(f"{name}: async differs from the Protocol")
    assert not wrong, f"{device} backend breaks backends/base.py's contract:\n" + "\n".join(wrong)


@pytest.mark.parametrize("device", DEVICES)
def test_no_public_function_outside_the_contract(device):
    extra = _public_callables(backend_for(device)) - set(_protocol_methods())
    assert not extra, (f"{device} backend exports {sorted(extra)}, which backends/base.py does not list: "
                       "add them to the Protocol (ops call them) or make them private")


@pytest.mark.parametrize("device", DEVICES)
def test_flags_have_the_declared_types(device):
    be = backend_for(device)
    flags = _protocol_flags()
    assert {"SPLIT_REDUCTIONS", "SPLIT_SCANS", "MAX_MATMUL_K", "MAX_INDEX_BUFFERS", "ATOMIC_FLOAT16",
            "SORT_BLOCK", "name"} <= set(flags)
    for name, hint in flags.items():
        value = getattr(be, name)
        allowed = typing.get_args(hint) or (hint,)
        ok = isinstance(value, allowed) and (type(value) is not bool or bool in allowed)   # True is an int
        assert ok, f"{device}.{name} = {value!r} is not {hint}"


@pytest.mark.parametrize("device", DEVICES)
def test_absent_fused_kernels_say_no(device):
    """A backend without a fused kernel answers its *_fits with False, so ops compose instead;
    one without whole-row sorts has SORT_BLOCK set."""
    be = backend_for(device)
    if device == "cpu":
        assert be.softmax_fits(8, 8) is False and be.moments_fits(8, 8) is False
        assert be.attention_fits(8, 8, 8, 8, batch=1) is False
        assert be.SORT_BLOCK is None and be.capturing() is False
        with pytest.raises(NotImplementedError, match="softmax_fits is False"):
            be.softmax(None, None, False)
        with pytest.raises(NotImplementedError, match="SORT_BLOCK is None"):
            be.sort_block(None, None, 2)
    else:
        assert isinstance(be.SORT_BLOCK, int)
        with pytest.raises(NotImplementedError, match="SORT_BLOCK is set"):
            be.sort(None, None, None, False)


def test_plan_objects_are_immutable_values():
    """The plans primitives take (backends/plans.py) cannot change under a kernel cache keyed on
    them, and equal plans key alike; ElementwiseDtypes (extended by the cached DtypePlan) is
    the one class that is not a NamedTuple."""
    classes = [c for c in vars(plans).values() if isinstance(c, type) and c.__module__ == plans.__name__]
    assert {c.__name__ for c in classes if not issubclass(c, tuple)} == {"ElementwiseDtypes"}
    for cls in classes:
        if not issubclass(cls, tuple):
            continue
        a, b = cls._make(range(len(cls._fields))), cls._make(range(len(cls._fields)))
        assert a == b and hash(a) == hash(b)
        with pytest.raises(AttributeError):
            setattr(a, cls._fields[0], -1)


def test_cpu_device_assert_raises_now():
    import torchweb as torch
    be = backend_for("cpu")
    be.device_assert(torch.tensor([False, False], device="cpu"), "op", IndexError, "never")
    with pytest.raises(IndexError, match="bad value 3"):
        be.device_assert(torch.tensor([False, True], device="cpu"), "op", IndexError, lambda: "bad value 3")
