"""torch.jit as seen by code that runs eagerly: script, trace and the decorators give back what
they were given, because running the function or module eagerly is what they mean here
(TorchScript's compiler is not part of torchweb; torch.compile is its capture and replay).
is_scripting() and is_tracing() are False, so code takes its eager branch. The overload
declarations (_overload, _overload_method) give back the function too: eagerly the plain
definition that follows them is the one that runs.

Everything else of TorchScript (ScriptModule, save, load, freeze, fork, ...) is refused with an
AttributeError that says why, so `hasattr(torch.jit, "save")` is False as on a build without it."""

import ast
import collections
import inspect
import textwrap
import typing
from ._refused import refuse_the_rest

Final = typing.Final
Attribute = collections.namedtuple("Attribute", ["value", "type"])


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The function or module itself, run eagerly."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-05, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """The function or module itself, run eagerly (no trace is recorded)."""
    return func


def _decorator(fn=None, **kwargs):
    # @torch.jit.ignore and @torch.jit.ignore(drop=True) both give back the function
    if callable(fn):
        return fn
    return lambda f: f


ignore = _decorator
unused = export = script_method = interface = script_if_tracing = _decorator


def _check_overload_body(func):
    """PyTorch's check at decoration: an overload declaration's body is `pass` or `...`."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
        body = ast.parse(source).body[0].body
    except (OSError, TypeError, SyntaxError):   # no source to read (PyTorch warns and goes on)
        return
    stmt = body[0]
    if len(body) != 1 or not (isinstance(stmt, ast.Pass) or (
            isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is Ellipsis)):
        head = "\n".join(source.split("\n")[:3])
        raise RuntimeError("Only `pass` statement or `...` can be the body of overload declaration:\n"
                           f"{head} <- Expecting `pass` or `...` here!")


def _overload(func):
    """Declares a TorchScript overload of a function (its typed signature): eagerly the plain
    definition that follows, under the same name, is the one that runs."""
    _check_overload_body(func)
    return func


def _overload_method(func):
    """_overload for a method (torchvision's DenseNet declares its forward's input types so)."""
    _check_overload_body(func)
    return func


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


__getattr__ = refuse_the_rest(
    "torch.jit", "TorchScript is not part of it (torch.jit.script/trace give back the module or function, "
    "which runs eagerly). Save weights with torch.save(model.state_dict(), path); for speed use "
    "torch.compile")
