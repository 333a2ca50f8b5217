"""torch._dynamo, the entry points libraries call when they see PyTorch 2.x: decorators that
give back the function (allow_in_graph, disable, ...: running it eagerly is always allowed,
and torchweb's torch.compile runs the Python of a captured call anyway), shape marks that
change nothing (torchweb's capture keys on shapes itself), reset, is_compiling, and a config
whose settings are accepted (cache_size_limit / recompile_limit are torchweb's own limit).

Everything else is refused with an AttributeError that says why."""

from .compiler import is_compiling, reset  # noqa: F401
from ._refused import refuse_the_rest


def _identity_decorator(fn=None, *args, **kwargs):
    if callable(fn):
        return fn
    return lambda f: f


allow_in_graph = disallow_in_graph = assume_constant_result = _identity_decorator
nonstrict_trace = _identity_decorator


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """The function itself (or a decorator that gives it back): it runs eagerly."""
    return fn if fn is not None else (lambda f: f)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Nothing to mark: a compiled call is captured once per input shape."""


def maybe_mark_dynamic(t, index):
    """Nothing to mark (see mark_dynamic)."""


def mark_static(t, index=None):
    """Nothing to mark (see mark_dynamic)."""


def mark_static_address(t, guard=True):
    """Nothing to mark: a captured call's tensors keep their buffers."""


def graph_break(msg=""):
    """No graph to break: a captured call's Python runs as written."""


def is_dynamo_supported():
    return False


class _Config:
    """torch._dynamo.config: any setting is accepted (and read back); none changes torchweb,
    except cache_size_limit / recompile_limit, which bound the signatures one compiled
    function keeps (torchweb's own limit, 8 as PyTorch's)."""

    _DEFAULTS = {"suppress_errors": False, "verbose": False, "capture_scalar_outputs": False,
                 "capture_dynamic_output_shape_ops": False, "optimize_ddp": True,
                 "automatic_dynamic_shapes": True, "assume_static_by_default": True,
                 "accumulated_cache_size_limit": 256, "accumulated_recompile_limit": 256,
                 "error_on_recompile": False, "force_parameter_static_shapes": True,
                 "specialize_int": False, "inline_inbuilt_nn_modules": True}
    _LIMITS = ("cache_size_limit", "recompile_limit")

    def __init__(self):
        object.__setattr__(self, "_values", dict(self._DEFAULTS))

    def __getattr__(self, name):
        if name in self._LIMITS:
            from . import _compile  # deferred: load time (torch.compile loads the capture machinery on first use)
            return _compile.CACHE_LIMIT
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"torch._dynamo.config.{name} does not exist") from None

    def __setattr__(self, name, value):
        if name in self._LIMITS:
            from . import _compile  # deferred: load time (torch.compile loads the capture machinery on first use)
            _compile.CACHE_LIMIT = int(value)
        else:
            self._values[name] = value


config = _Config()


__getattr__ = refuse_the_rest(
    "torch._dynamo", "it has no TorchDynamo (its torch.compile captures a call's GPU work and replays it; see "
    "docs/compile.md)")
