"""torch.fx as seen by code that runs eagerly: `torch.fx.wrap("name")` (which torchvision and
other libraries call at import, to keep a function opaque to symbolic tracing) registers
nothing and gives back its argument, since nothing here traces. Tracing itself
(symbolic_trace, GraphModule, Tracer, ...) is refused with an AttributeError that says why."""


def wrap(fn_or_name):
    """A no-op: the function (or its name) given back."""
    return fn_or_name


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(
        f"torch.fx.{name} is not supported by torchweb: torch.fx traces programs into graphs for "
        "compilers, and torchweb runs them eagerly (torch.compile captures GPU work instead)")
